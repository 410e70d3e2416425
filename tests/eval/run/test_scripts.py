"""Script tests: ``t`` and every ``t.assert_`` method, resolving and loading test files, and
the runner's statuses on the barista fixture's ``src/checks_test.py``."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from agentcli.assistant.package import resolve_assistant
from agentcli.assistant.session import AssistantRegistry
from agentcli.errors import ConfigError
from agentcli.eval.checks.script_assert import ALIASES, Assert, StopTest, T
from agentcli.eval.run.runner import EvalConfig, EvalRunner
from agentcli.eval.run.scripts import (
    ScriptExecutor,
    load_suite,
    resolve_script_ref,
    src_import,
    suite_path,
)

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "fixtures" / "assistants"
BARISTA = FIXTURES / "barista"


def boom() -> None:
    raise ValueError("boom")


# method, arguments that pass, arguments that fail, words the failure message must hold
CASES: list[tuple[str, tuple[Any, ...], tuple[Any, ...], list[str]]] = [
    ("true", (1,), (0,), ["True", "true value", "0"]),
    ("false", ("",), ("x",), ["False", "false value", '"x"']),
    (
        "equal",
        ({"a": 1, "b": [1.0]}, {"b": [1], "a": 1}),
        ("busy", "ready"),
        ["Equal", '"ready"', '"busy"'],
    ),
    ("not_equal", (1, 2), ({"a": 1}, {"a": 1.0}), ["NotEqual", '{"a": 1.0}']),
    ("nil", (None,), (0,), ["Nil", "expected None", "0"]),
    ("not_nil", (0,), (None,), ["NotNil", "got None"]),
    ("contains", ("hello world", "world"), ("hello", "bye"), ["Contains", '"hello"', '"bye"']),
    ("contains", ([1, {"a": 2}], {"a": 2}), ([1, 2], 3), ["Contains", "[1, 2]", "3"]),
    ("contains", ({"k": 1}, "k"), ({"k": 1}, "z"), ["Contains", '"z"']),
    ("not_contains", ("hello", "bye"), ("hello", "ell"), ["NotContains", '"ell"']),
    ("len", ([1, 2, 3], 3), ("abcd", 3), ["Len", "expected length 3", "actual 4"]),
    ("len", ({"a": 1}, 1), (5, 1), ["Len", "int value has no length"]),
    ("greater", (3, 2), (2, 3), ["Greater", "2 > 3"]),
    ("greater", (3, 2), ("a", 1), ["Greater", "cannot compare str > int"]),
    ("greater_or_equal", (2, 2), (1, 2), ["GreaterOrEqual", "1 >= 2"]),
    ("less", (1.5, 2), (2, 2), ["Less", "2 < 2"]),
    ("less_or_equal", (2, 2), (3, 2), ["LessOrEqual", "3 <= 2"]),
    ("error", (ValueError("x"),), (None,), ["Error", "expected an error"]),
    ("no_error", (None,), (ValueError("bad"),), ["NoError", "ValueError: bad"]),
    ("panic", (boom,), (lambda: 1,), ["Panic", "expected the function to raise"]),
    ("no_panic", (lambda: 1,), (boom,), ["NoPanic", "ValueError: boom"]),
    ("match", ("order A-12", r"A-\d+"), ("order", r"^\d+$"), ["Match", '"order"', r"/^\d+$/"]),
    ("not_match", ("order", r"\d"), ("A-1", r"\d"), ["NotMatch", '"A-1"']),
    (
        "type",
        ({"a": 1}, "object"),
        ([1], "object"),
        ["Type", "expected type object", "actual array"],
    ),
    ("type", ("x", str), (1, str), ["Type", "expected type str", "actual number"]),
    ("type", (boom, "function"), (1.5, "dict"), ["Type", "expected type dict"]),
    (
        "json_path",
        ({"a": {"b": [5]}}, "a.b[0]", 5),
        ({"a": 1}, "$.a", 2),
        ["JSONPath", "$.a", "expected 2", "actual 1"],
    ),
    ("json_path", ('{"x": true}', "$.x", True), ({"a": 1}, "$.zz", 1), ["JSONPath", "no match"]),
]


@pytest.mark.parametrize(("method", "good", "bad", "words"), CASES)
def test_every_assert_method_passes_and_fails(method, good, bad, words):
    t = T("TestX")
    assert getattr(t.assert_, method)(*good) is True
    assert not t.failed
    assert t.assertions[-1].passed
    assert getattr(t.assert_, method)(*bad) is False
    assert t.failed
    record = t.assertions[-1]
    assert not record.passed
    for word in words:
        assert word in record.message, (word, record.message)
    assert t.errors == [record.message]


def test_every_go_name_is_an_alias_and_the_table_covers_spec_5_8():
    spec = [
        "True",
        "False",
        "Equal",
        "NotEqual",
        "Nil",
        "NotNil",
        "Contains",
        "NotContains",
        "Len",
        "Greater",
        "GreaterOrEqual",
        "Less",
        "LessOrEqual",
        "Error",
        "NoError",
        "Panic",
        "NoPanic",
        "Match",
        "NotMatch",
        "Type",
        "JSONPath",
        "Agent",
    ]
    assert list(ALIASES) == spec
    for go, snake in ALIASES.items():
        assert getattr(Assert, go) is getattr(Assert, snake)
    inverse = {snake: go for go, snake in ALIASES.items()}
    covered = {inverse[method] for method, *_ in CASES}
    assert covered == set(spec) - {"Agent"}  # Agent needs a validator: tested below


def test_assert_is_reachable_by_its_keyword_name_and_records_expected_actual():
    t = T("TestX")
    checks = getattr(t, "assert")
    assert checks is t.assert_
    assert getattr(checks, "True")(True)
    checks.Equal({"n": 1}, {"n": 2}, "numbers differ")
    record = t.assertions[-1]
    assert record.type == "Equal"
    assert record.message == 'numbers differ (Equal: expected {"n": 2}, actual {"n": 1})'
    assert (record.expected, record.actual) == ({"n": 2}, {"n": 1})
    with pytest.raises(AttributeError, match="nope"):
        t.nope  # noqa: B018


def test_log_error_fail_fatal_and_skip():
    t = T("TestX")
    t.log("a", 1, {"k": True})
    assert t.logs == ['a 1 {"k": true}']
    t.error("first", "problem")
    t.fail()
    assert t.errors == ["first problem", "test failed"]
    with pytest.raises(StopTest) as stopped:
        t.fatal("cannot go on")
    assert stopped.value.kind == "fatal" and t.errors[-1] == "cannot go on"
    skip = T("TestY")
    with pytest.raises(StopTest) as stopped:
        skip.skip("later")
    assert stopped.value.kind == "skip" and skip.skipped == "later" and not skip.failed
    assert not isinstance(stopped.value, Exception)  # `except Exception` cannot swallow it


async def test_agent_assertion_uses_the_judge_and_keeps_the_verdict():
    seen = []

    async def judge(agent_id, response, options):
        seen.append((agent_id, response, options))
        return {"passed": "size" in response, "reason": "looked for size", "score": 3}

    t = T("TestX", judge=judge)
    assert await t.assert_.Agent("What size?", "sim.judge", {"criteria": "asks the size"})
    assert t.assertions[-1].verdict["score"] == 3
    assert t.assertions[-1].message == "looked for size"
    assert not await t.assert_.agent("Hello", "sim.judge", {"criteria": "asks the size"})
    message = t.assertions[-1].message
    assert message.startswith("Agent: sim.judge judged the response as failing")
    assert '"asks the size"' in message and "looked for size" in message
    assert seen[0] == ("sim.judge", "What size?", {"criteria": "asks the size"})


async def test_agent_assertion_without_a_judge_or_with_a_failing_one_fails():
    assert not await T("TestX").assert_.agent("x", "v", {})

    async def broken(agent_id, response, options):
        raise RuntimeError("validator down")

    t = T("TestX", judge=broken)
    assert not await t.assert_.agent("x", "v", {"criteria": "c"})
    assert "validator v failed: validator down" in t.errors[0]


# --- resolving and loading ----------------------------------------------------------------


def test_resolve_script_ref_finds_the_longest_package_prefix():
    assert resolve_script_ref("scripts.barista.checks", root=FIXTURES, cwd=ROOT) == (
        FIXTURES / "barista",
        "checks",
    )
    assert resolve_script_ref("scripts.sim.user.tests.seed", root=FIXTURES, cwd=ROOT) == (
        FIXTURES / "sim" / "user",
        "tests.seed",
    )
    with pytest.raises(ConfigError, match="invalid script path"):
        resolve_script_ref("scripts.only", root=FIXTURES, cwd=ROOT)
    with pytest.raises(ConfigError, match="no assistant package found"):
        resolve_script_ref("scripts.nobody.setup", root=FIXTURES, cwd=ROOT)


def test_load_suite_collects_test_functions_in_file_order():
    package = resolve_assistant(str(BARISTA), root=FIXTURES, cwd=ROOT)
    suite = load_suite(package, "checks")
    assert suite.path == BARISTA / "src" / "checks_test.py"
    assert suite_path(package, "checks_test") == suite.path
    names = list(suite.functions)
    assert names[:3] == ["TestOrderTool", "TestAssertionFails", "TestFatalStops"]
    assert "helper" not in names
    assert [c.id for c in suite.cases()] == names
    with pytest.raises(ConfigError, match="test file not found"):
        load_suite(package, "missing")


def test_a_test_file_without_test_functions_is_an_error(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "package.yao").write_text('{"name": "x", "connector": "echo"}')
    (tmp_path / "src" / "empty_test.py").write_text("def helper(t, ctx):\n    return 1\n")
    package = resolve_assistant(str(tmp_path), cwd=tmp_path)
    with pytest.raises(ConfigError, match="no Test\\* functions"):
        load_suite(package, "empty")


def test_src_import_returns_the_module_tools_use():
    tools = src_import(BARISTA / "src" / "checks_test.py", "tools")
    assert tools.PlaceOrder({"drink": "mocha"})["drink"] == "mocha"
    assert src_import(BARISTA / "src" / "model.py", "tools") is tools
    with pytest.raises(ConfigError, match="not inside the src/"):
        src_import(ROOT / "README.md", "tools")


# --- running ------------------------------------------------------------------------------


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path))
    return tmp_path


async def run_suite(timeout: float = 5.0, run_filter: str | None = None, **config: Any):
    registry = AssistantRegistry(FIXTURES, cwd=ROOT)
    assistant = registry.get("barista")
    suite = load_suite(assistant.package, "checks")
    events, results = [], []
    eval_config = EvalConfig(
        assistant=assistant,
        registry=registry,
        timeout=timeout,
        run_filter=re.compile(run_filter) if run_filter else None,
        **config,
    )
    runner = EvalRunner(
        eval_config,
        executor=ScriptExecutor(eval_config, suite),
        on_event=events.append,
        on_result=results.append,
    )
    try:
        await runner.run(suite.cases())
    finally:
        await registry.aclose()
    return {r.id: r for r in results}, events


async def test_statuses_of_the_fixture_tests(home):
    results, events = await run_suite(timeout=0.4, run_filter="^Test(?!Slow)")
    status = {name: r.status for name, r in results.items()}
    assert status == {
        "TestOrderTool": "passed",
        "TestAssertionFails": "failed",
        "TestFatalStops": "failed",
        "TestSkipped": "skipped",
        "TestRaises": "error",
        "TestAsyncAgent": "passed",
        "TestSyncAgentJudgeFails": "failed",
        "TestMemory": "passed",
        "TestForgotAwait": "failed",
    }
    assert [e.type for e in events[:2]] == ["test_start", "test_result"]
    order = results["TestOrderTool"]
    assert [a.type for a in order.assertions] == ["Equal", "JSONPath", "Contains"]
    assert order.metadata == {"logs": ["placed A-1"]}
    failing = results["TestAssertionFails"]
    assert failing.error == "arithmetic (Equal: expected 3, actual 2)"
    assert failing.metadata["logs"] == ["still running after a failed assertion"]
    fatal = results["TestFatalStops"]
    assert fatal.error == "cannot continue"
    assert "never reached" not in str(fatal.metadata)
    assert results["TestForgotAwait"].error.startswith(
        "Agent: t.assert_.agent(...) was not awaited"
    )
    skipped = results["TestSkipped"]
    assert skipped.error is None and skipped.metadata["logs"] == ["SKIP: not on this platform"]


async def test_a_raising_test_reports_its_traceback_through_user_code_only(home):
    results, _ = await run_suite(run_filter="^TestRaises$")
    error = results["TestRaises"].error
    assert error.startswith("ValueError: bad value 42\nTraceback (most recent call last):")
    assert "checks_test.py" in error and "in helper" in error and "in TestRaises" in error
    assert "agentcli" not in error.replace("fixtures/assistants", "")


async def test_agent_assertions_in_sync_and_async_tests(home):
    results, _ = await run_suite(run_filter="Agent")
    passed = results["TestAsyncAgent"]
    assert passed.status == "passed"
    assert passed.assertions[-1].verdict["reason"] == "found medium"
    failed = results["TestSyncAgentJudgeFails"]
    assert "missing espresso" in failed.error
    assert failed.assertions[-1].verdict["passed"] is False


async def test_timeout_applies_to_sync_and_async_tests(home):
    clock = asyncio.get_running_loop().time()
    results, _ = await run_suite(timeout=0.3, run_filter="Slow")
    assert {r.status for r in results.values()} == {"timeout"}
    assert results["TestSlowAsync"].error == "timed out after 0.3s"
    assert asyncio.get_running_loop().time() - clock < 2


async def test_run_filter_and_fail_fast(home):
    results, _ = await run_suite(run_filter="Memory|OrderTool")
    assert list(results) == ["TestOrderTool", "TestMemory"]
    stopped, _ = await run_suite(run_filter="^Test(?!Slow)", fail_fast=True)
    assert list(stopped) == ["TestOrderTool", "TestAssertionFails"]


async def test_ctx_is_a_real_context_of_the_package(home):
    results, _ = await run_suite(run_filter="^TestMemory$", user_id="u1")
    assert results["TestMemory"].status == "passed", results["TestMemory"].error

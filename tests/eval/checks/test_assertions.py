"""The assertion library: every type positive and negative, negate, message, judges, scripts."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from agentcli.eval.cases.model import Assertion
from agentcli.eval.checks.assertions import (
    ASSERTIONS,
    AssertionEnv,
    Subject,
    evaluate,
    output_under_test,
    validate_assertion,
)
from agentcli.eval.results.model import AssertionResult, ToolCall, Trace, Usage


async def check(
    type: str, output: Any, env: AssertionEnv | None = None, **fields: Any
) -> AssertionResult:
    """Evaluate one assertion (which must be valid) against ``output``."""
    subject_fields = {
        k: fields.pop(k) for k in ("tool_calls", "duration_ms", "usage", "input") if k in fields
    }
    assertion = Assertion(type=type, **fields)
    assert validate_assertion(assertion) is None
    subject = Subject.of(output, **subject_fields)
    [result] = await evaluate([assertion], subject, env or AssertionEnv())
    return result


# --- text checks ---------------------------------------------------------------------------


async def test_contains():
    ok = await check("contains", "Hi there", value="Hi")
    assert ok.passed and ok.message == 'output contains "Hi"'
    bad = await check("contains", "Hello", value="hello")
    assert not bad.passed
    assert bad.message == 'expected output to contain "hello"'


async def test_contains_on_objects_uses_unescaped_json_text():
    output = {"html": "<b>a & b</b>", "zh": "中文"}
    assert (await check("contains", output, value="<b>a & b</b>")).passed
    assert (await check("contains", output, value='"zh": "中文"')).passed


async def test_contains_unicode_and_emoji():
    assert (await check("contains", "订单已提交 🎉", value="已提交")).passed
    assert (await check("contains", "订单已提交 🎉", value="🎉")).passed
    assert not (await check("contains", "订单已提交", value="取消")).passed


async def test_contains_a_number_written_as_text():
    # a bare 500 is refused at load (Yao's contains takes text); "500" is how to write it
    assert (await check("contains", "Total: 500 USD", value="500")).passed


async def test_not_contains():
    assert (await check("not_contains", "all good", value="error")).passed
    bad = await check("not_contains", "an error occurred", value="error")
    assert not bad.passed
    assert bad.message == 'expected output not to contain "error"'


async def test_icontains():
    assert (await check("icontains", "HELLO World", value="hello world")).passed
    bad = await check("icontains", "Goodbye", value="hello")
    assert not bad.passed and "ignoring case" in bad.message


async def test_contains_any():
    assert (
        await check("contains_any", "the order was confirmed", value=["created", "confirmed"])
    ).passed
    bad = await check("contains_any", "pending", value=["created", "confirmed"])
    assert not bad.passed
    assert bad.message == 'expected output to contain any of ["created", "confirmed"]'


async def test_contains_all():
    assert (await check("contains_all", "a b c", value=["a", "c"])).passed
    bad = await check("contains_all", "a b", value=["a", "c", "d"])
    assert not bad.passed
    assert bad.message == 'expected output to contain "c"'


async def test_starts_with():
    assert (await check("starts_with", "Hello! How can I help?", value="Hello")).passed
    assert (await check("starts_with", "\n  Hello", value="Hello")).passed
    bad = await check("starts_with", "Well, hello", value="Hello")
    assert not bad.passed and bad.message == 'expected output to start with "Hello"'


async def test_regex_with_inline_flags():
    assert (await check("regex", "Expense SUBMITTED", value="(?i)(submitted|created)")).passed
    bad = await check("regex", "Expense pending", value="(?i)(submitted|created)")
    assert not bad.passed
    assert bad.message == "expected output to match /(?i)(submitted|created)/"


async def test_regex_is_a_search_not_a_full_match():
    assert (await check("regex", "id=ABC-123 done", value=r"[A-Z]{3}-\d+")).passed


async def test_regex_multiline_and_unicode():
    assert (await check("regex", "line1\n价格: 42元", value=r"(?m)^价格: \d+元$")).passed


# --- equals ---------------------------------------------------------------------------------


async def test_equals_ignores_key_order():
    result = await check(
        "equals", {"b": 2, "a": {"y": 1, "x": 0}}, value={"a": {"x": 0, "y": 1}, "b": 2}
    )
    assert result.passed


async def test_equals_int_and_float():
    assert (await check("equals", {"amount": 1}, value={"amount": 1.0})).passed


async def test_equals_true_is_not_one():
    bad = await check("equals", {"ok": True}, value={"ok": 1})
    assert not bad.passed
    assert bad.message == 'expected {"ok": 1}, got {"ok": true}'


async def test_equals_parses_json_text_when_value_is_an_object():
    assert (
        await check(
            "equals",
            '{"intent": "weather", "city": "巴黎"}',
            value={"city": "巴黎", "intent": "weather"},
        )
    ).passed
    assert not (await check("equals", "not json", value={"a": 1})).passed


async def test_equals_strings_exactly():
    assert (await check("equals", "Hello", value="Hello")).passed
    bad = await check("equals", "Hello ", value="Hello")
    assert not bad.passed and bad.message == 'expected "Hello", got "Hello "'
    # A JSON-looking string is still compared as a string when the value is a string.
    assert not (await check("equals", '{"a": 1}', value='{"a":1}')).passed


# --- json_path ------------------------------------------------------------------------------


async def test_json_path_on_object_output():
    assert (await check("json_path", {"need_search": True}, path="need_search", value=True)).passed
    bad = await check("json_path", {"intent": "news"}, path="$.intent", value="weather")
    assert not bad.passed
    assert bad.message == 'json_path $.intent: expected "weather", got "news"'
    assert bad.actual == "news" and bad.expected == "weather"


async def test_json_path_from_fenced_block():
    text = 'Here it is:\n```json\n{"a": {"b": [{"c": "x"}]}}\n```'
    assert (await check("json_path", text, path="a.b[0].c", value="x")).passed


async def test_json_path_from_prose_with_embedded_object():
    text = 'Sure! {"status": "ok", "count": 2} Anything else?'
    assert (await check("json_path", text, path="$.count", value=2.0)).passed


async def test_json_path_skips_brackets_inside_strings():
    text = 'Result: {"note": "use } and ] freely", "intent": "weather"}'
    assert (await check("json_path", text, path="intent", value="weather")).passed


async def test_json_path_one_of():
    ok = await check("json_path", {"intent": "news"}, path="intent", value=["weather", "news"])
    assert ok.passed
    bad = await check("json_path", {"intent": "sport"}, path="intent", value=["weather", "news"])
    assert not bad.passed
    assert bad.message == 'json_path $.intent: expected one of ["weather", "news"], got "sport"'


async def test_json_path_list_value_compares_lists_first():
    assert (await check("json_path", {"tags": ["a", "b"]}, path="tags", value=["a", "b"])).passed
    assert not (
        await check("json_path", {"tags": ["b", "a"]}, path="tags", value=["a", "b"])
    ).passed


async def test_json_path_no_match_and_not_json():
    missing = await check("json_path", {"a": 1}, path="b.c", value=1)
    assert not missing.passed and missing.message == "json_path $.b.c: no match in output"
    prose = await check("json_path", "just words", path="a", value=1)
    assert not prose.passed and prose.message == "json_path $.a: output is not JSON"


async def test_json_path_unicode_keys():
    assert (await check("json_path", {"城市": "北京"}, path="$.城市", value="北京")).passed


async def test_json_path_wildcard_gives_all_matches():
    output = {"items": [{"n": 1}, {"n": 2}]}
    assert (await check("json_path", output, path="items[*].n", value=[1, 2])).passed


# --- type / is_json -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "name"),
    [
        ("text", "string"),
        (3, "number"),
        (True, "boolean"),
        ([1], "array"),
        ({"a": 1}, "object"),
        (None, "null"),
    ],
)
async def test_type_of_output(output, name):
    assert (await check("type", output, value=name)).passed


async def test_type_mismatch_and_path():
    bad = await check("type", {"a": "1"}, value="array")
    assert not bad.passed and bad.message == "expected output to be of type array, got object"
    assert (await check("type", {"a": {"b": [1]}}, path="a.b", value="array")).passed
    bad = await check("type", {"a": {"b": 1}}, path="a.b", value="string")
    assert not bad.passed and bad.message == "expected $.a.b to be of type string, got number"


async def test_type_of_json_text_output():
    assert (await check("type", '{"a": 1}', value="object")).passed
    assert (await check("type", '{"a": 1}', value="string")).passed


async def test_is_json():
    assert (await check("is_json", '{"a": 1}')).passed
    assert (await check("is_json", "Result: [1, 2] done")).passed
    assert (await check("is_json", {"a": 1})).passed
    bad = await check("is_json", "no json at all")
    assert not bad.passed and bad.message == "expected output to be valid JSON"
    assert not (await check("is_json", None)).passed


async def test_is_json_with_schema():
    schema = {"type": "object", "required": ["id"], "properties": {"id": {"type": "integer"}}}
    assert (await check("is_json", '{"id": 5}', value=schema)).passed
    bad = await check("is_json", '{"id": "x"}', value=schema)
    assert not bad.passed
    assert bad.message == "JSON does not match schema at $.id: 'x' is not of type 'integer'"


# --- tools ----------------------------------------------------------------------------------

CALLS = [
    ToolCall(
        id="1",
        server="expense",
        tool="submit_expense",
        arguments={"amount": 500, "meta": {"cur": "USD", "x": 1}},
        result={"id": "E1", "message": "Expense submitted"},
    ),
    ToolCall(id="2", server="web", tool="research", arguments='{"q": "latte"}', result="found 3"),
    ToolCall(id="3", server="", tool="lookup", arguments={}, error="timeout"),
]


async def test_tool_called_by_name_and_server_suffix():
    assert (await check("tool_called", "", value="submit_expense", tool_calls=CALLS)).passed
    assert (
        await check("tool_called", "", value="expense__submit_expense", tool_calls=CALLS)
    ).passed


async def test_tool_called_never_matches_a_substring():
    bad = await check("tool_called", "", value="search", tool_calls=CALLS)
    assert not bad.passed
    assert (
        bad.message
        == 'expected tool "search" to be called; called: ["submit_expense", "research", "lookup"]'
    )
    assert not (await check("tool_called", "", value="submit", tool_calls=CALLS)).passed


async def test_tool_called_any_of_a_list():
    assert (await check("tool_called", "", value=["setup", "lookup"], tool_calls=CALLS)).passed
    bad = await check("tool_called", "", value=["setup", "init"], tool_calls=CALLS)
    assert not bad.passed and bad.message.startswith(
        'expected one of tools ["setup", "init"] to be called'
    )


async def test_tool_called_with_partial_arguments():
    value = {"name": "submit_expense", "arguments": {"meta": {"cur": "USD"}, "amount": 500.0}}
    assert (await check("tool_called", "", value=value, tool_calls=CALLS)).passed
    wrong = {"name": "submit_expense", "arguments": {"amount": 5}}
    bad = await check("tool_called", "", value=wrong, tool_calls=CALLS)
    assert not bad.passed
    assert bad.message.startswith(
        'tool "submit_expense" was called, but not with arguments {"amount": 5}'
    )


async def test_tool_called_parses_string_arguments():
    value = {"name": "research", "arguments": {"q": "latte"}}
    assert (await check("tool_called", "", value=value, tool_calls=CALLS)).passed


async def test_tool_called_with_no_calls():
    bad = await check("tool_called", "answer", value="setup")
    assert not bad.passed and bad.message == "expected a tool call, but no tools were called"


async def test_tool_result():
    assert (
        await check("tool_result", "", value={"tool": "submit_expense"}, tool_calls=CALLS)
    ).passed
    value = {"tool": "submit_expense", "result": {"id": "E1"}}
    assert (await check("tool_result", "", value=value, tool_calls=CALLS)).passed
    value = {"tool": "submit_expense", "result": {"id": "E2"}}
    bad = await check("tool_result", "", value=value, tool_calls=CALLS)
    assert not bad.passed
    assert bad.message.startswith('tool "submit_expense" result does not match {"id": "E2"}; got')


async def test_tool_result_regex():
    value = {"tool": "submit_expense", "result": {"message": "regex:(?i)expense\\s+SUBMITTED"}}
    assert (await check("tool_result", "", value=value, tool_calls=CALLS)).passed
    value = {"tool": "research", "result": "regex:^found \\d+$"}
    assert (await check("tool_result", "", value=value, tool_calls=CALLS)).passed
    value = {"tool": "research", "result": "regex:^nothing"}
    assert not (await check("tool_result", "", value=value, tool_calls=CALLS)).passed


async def test_tool_result_error_and_not_called():
    bad = await check("tool_result", "", value={"tool": "lookup"}, tool_calls=CALLS)
    assert not bad.passed and bad.message == 'tool "lookup" returned an error: timeout'
    bad = await check("tool_result", "", value={"tool": "setup"}, tool_calls=CALLS)
    assert not bad.passed and bad.message.startswith('tool "setup" was not called; called:')


async def test_tool_result_any_successful_call_counts():
    calls = [
        ToolCall(tool="fetch", error="502"),
        ToolCall(tool="fetch", result={"ok": True}),
    ]
    assert (
        await check(
            "tool_result", "", value={"tool": "fetch", "result": {"ok": True}}, tool_calls=calls
        )
    ).passed


# --- limits ---------------------------------------------------------------------------------


async def test_latency():
    ok = await check("latency", "x", value=1000, duration_ms=800)
    assert ok.passed and ok.message == "latency 800 ms within 1000 ms"
    bad = await check("latency", "x", value=1000, duration_ms=1500)
    assert not bad.passed and bad.message == "latency 1500 ms exceeds 1000 ms"


async def test_cost():
    assert (await check("cost", "x", value=0.01, usage=Usage(cost=0.004))).passed
    bad = await check("cost", "x", value=0.01, usage=Usage(cost=0.02))
    assert not bad.passed and bad.message == "cost 0.02 exceeds 0.01"
    unknown = await check("cost", "x", value=0.01, usage=Usage())
    assert not unknown.passed and unknown.message == "cost unknown: the model reported no cost"


async def test_tokens():
    assert (
        await check("tokens", "x", value=100, usage=Usage(input_tokens=60, output_tokens=40))
    ).passed
    bad = await check("tokens", "x", value=100, usage=Usage(input_tokens=60, output_tokens=41))
    assert not bad.passed and bad.message == "101 tokens exceeds 100"


# --- negate and message ---------------------------------------------------------------------


async def test_negate_inverts_any_type():
    result = await check("contains", "all good", value="error", negate=True)
    assert result.passed
    result = await check("contains", "an error", value="error", negate=True)
    assert not result.passed and result.message == 'negated: output contains "error"'
    result = await check("tool_called", "", value="research", negate=True, tool_calls=CALLS)
    assert not result.passed


async def test_message_replaces_the_failure_message_only():
    bad = await check("contains", "nope", value="Hi", message="the agent must greet")
    assert not bad.passed and bad.message == "the agent must greet"
    # The checker's own words stay beside it, for reports to show why.
    assert bad.extra == {"detail": 'expected output to contain "Hi"'} and bad.expected == "Hi"
    assert bad.to_dict()["detail"] == 'expected output to contain "Hi"'
    ok = await check("contains", "Hi!", value="Hi", message="the agent must greet")
    assert ok.passed and ok.message == 'output contains "Hi"' and ok.extra == {}


# --- agent judge ----------------------------------------------------------------------------


async def test_agent_judge_called_with_the_right_arguments():
    calls: list[tuple] = []

    async def judge(use, criteria, subject, options):
        calls.append((use, criteria, subject.output, subject.input, options))
        return {"passed": True, "reason": "friendly and clear", "score": 0.9}

    env = AssertionEnv(judge=judge)
    result = await check(
        "agent",
        "Hello! How can I help?",
        env,
        use="agents:tests.validator-agent",
        value="Response should be friendly",
        options={"connector": "scripted"},
        input="Hello",
    )
    assert calls == [
        (
            "agents:tests.validator-agent",
            "Response should be friendly",
            "Hello! How can I help?",
            "Hello",
            {"connector": "scripted"},
        )
    ]
    assert result.passed and result.message == "friendly and clear"
    assert result.verdict == {
        "passed": True,
        "reason": "friendly and clear",
        "criteria": "Response should be friendly",
        "score": 0.9,
    }


async def test_agent_judge_failing_and_malformed():
    async def no(use, criteria, subject, options):
        return {"passed": False, "reason": "rude"}

    bad = await check("agent", "go away", AssertionEnv(judge=no), use="agents:v", value="polite")
    assert not bad.passed and bad.message == "rude" and bad.verdict["passed"] is False

    async def garbage(use, criteria, subject, options):
        return {"passed": "yes"}

    bad = await check("agent", "x", AssertionEnv(judge=garbage), use="agents:v", value="c")
    assert not bad.passed and 'without a boolean "passed"' in bad.message

    async def nothing(use, criteria, subject, options):
        return None

    assert not (
        await check("agent", "x", AssertionEnv(judge=nothing), use="agents:v", value="c")
    ).passed


async def test_agent_without_judge_fails_clearly():
    bad = await check("agent", "x", use="agents:v", value="c")
    assert not bad.passed and bad.message == "no LLM judge is available to run agent assertions"


async def test_judges_run_concurrently():
    async def slow(use, criteria, subject, options):
        await asyncio.sleep(0.2)
        return {"passed": True, "reason": "ok"}

    assertions = [Assertion(type="agent", use="agents:v", value=f"c{i}") for i in range(5)]
    started = time.perf_counter()
    results = await evaluate(assertions, Subject.of("x"), AssertionEnv(judge=slow))
    assert time.perf_counter() - started < 0.6
    assert [r.passed for r in results] == [True] * 5


# --- script ---------------------------------------------------------------------------------


def resolver(functions: dict[str, Any]):
    """A script resolver over a dict of functions."""

    def resolve(ref: str):
        if ref not in functions:
            raise LookupError(f"no function {ref}")
        return functions[ref]

    return resolve


async def test_script_returning_bool_sync_and_async():
    seen = []

    def validate(output, input, value):
        seen.append((output, input, value))
        return "ok" in output

    async def avalidate(output, input, value):
        return False

    env = AssertionEnv(script=resolver({"checks.Validate": validate, "checks.Async": avalidate}))
    ok = await check(
        "script", "all ok", env, script="checks.Validate", value={"min": 1}, input="hi"
    )
    assert ok.passed and ok.message == "script checks.Validate passed"
    assert seen == [("all ok", "hi", {"min": 1})]
    bad = await check("script", "x", env, script="checks.Async")
    assert not bad.passed and bad.message == "script checks.Async returned false"


async def test_script_returning_dict():
    def verdict(output, input, value):
        return {"pass": False, "message": "amount missing"}

    env = AssertionEnv(script=resolver({"checks.V": verdict}))
    bad = await check("script", "x", env, script="checks.V")
    assert not bad.passed and bad.message == "amount missing"


async def test_script_returning_wrong_type_or_raising():
    def number(output, input, value):
        return 3

    def boom(output, input, value):
        raise RuntimeError("kaput")

    env = AssertionEnv(script=resolver({"c.N": number, "c.B": boom}))
    bad = await check("script", "x", env, script="c.N")
    assert not bad.passed and "returned int" in bad.message
    bad = await check("script", "x", env, script="c.B")
    assert not bad.passed and bad.message == "script assertion error: RuntimeError: kaput"
    # Even negated, an error is a failure.
    bad = await check("script", "x", env, script="c.B", negate=True)
    assert not bad.passed
    missing = await check("script", "x", env, script="c.Missing")
    assert not missing.passed and "no function c.Missing" in missing.message


@pytest.mark.parametrize(
    ("type", "needs"),
    [("json_path", '"path"'), ("agent", '"use"'), ("script", '"script"')],
)
async def test_assertion_built_without_its_field_fails_naming_it(type, needs):
    """Built in code (the case rules never saw it), it fails with the rule's words."""

    async def judge(use, criteria, subject, options):
        return {"passed": True}

    env = AssertionEnv(judge=judge, script=resolver({}))
    subject = Subject.of('{"a": 1}')
    [result] = await evaluate([Assertion(type=type, value="x")], subject, env)
    assert not result.passed
    assert result.message.startswith(f"{type} assertion error: ")
    assert needs in result.message and "NoneType" not in result.message


async def test_script_that_blocks_does_not_stall_the_loop():
    def slow(output, input, value):
        time.sleep(0.2)
        return True

    env = AssertionEnv(script=resolver({"c.Slow": slow}))
    ticks = 0

    async def ticker():
        nonlocal ticks
        for _ in range(10):
            await asyncio.sleep(0.01)
            ticks += 1

    result, _ = await asyncio.gather(check("script", "x", env, script="c.Slow"), ticker())
    assert result.passed and ticks == 10


# --- evaluate -------------------------------------------------------------------------------


async def test_evaluate_runs_every_assertion_and_keeps_each_result():
    assertions = [
        Assertion(type="contains", value="Hi"),
        Assertion(type="contains", value="missing"),
        Assertion(type="not_contains", value="error"),
        Assertion(type="regex", value="^Hi"),
    ]
    results = await evaluate(assertions, Subject.of("Hi there"), AssertionEnv())
    assert [(r.type, r.passed) for r in results] == [
        ("contains", True),
        ("contains", False),
        ("not_contains", True),
        ("regex", True),
    ]


async def test_unknown_type_at_run_time_is_a_failure_not_a_crash():
    [result] = await evaluate([Assertion(type="nope")], Subject.of("x"), AssertionEnv())
    assert not result.passed and 'unknown assertion type "nope"' in result.message


def test_every_documented_type_is_registered():
    assert set(ASSERTIONS) == {
        "contains", "not_contains", "icontains", "contains_any", "contains_all", "starts_with",
        "regex", "equals", "json_path", "type", "is_json", "tool_called", "tool_result",
        "agent", "script", "latency", "cost", "tokens",
        "tool_not_called", "tool_args_valid", "trajectory", "steps", "stop_reason", "file",
        "state",
    }  # fmt: skip


# --- output under test ----------------------------------------------------------------------


def test_output_under_test_priority():
    calls = [ToolCall(tool="setup", result={"message": "Setup complete"})]
    assert output_under_test(Trace(completion="text", next={"a": 1}, tool_calls=calls)) == {"a": 1}
    assert output_under_test(Trace(completion="text", tool_calls=calls)) == "text"
    assert output_under_test(Trace(tool_calls=calls)) == "Setup complete"
    summary = [
        ToolCall(tool="a", result={"action": "created"}),
        ToolCall(tool="b", result={"success": False}),
        ToolCall(tool="c", error="x"),
        ToolCall(tool="d", result="plain"),
    ]
    assert output_under_test(Trace(tool_calls=summary)) == "[a: created] [b: failed] [c: error] [d]"
    assert output_under_test(Trace()) is None


def test_subject_from_trace():
    trace = Trace(completion="Hi", usage=Usage(input_tokens=2, output_tokens=3), tool_calls=CALLS)
    subject = Subject.from_trace(trace, duration_ms=12, input="hello")
    assert subject.output == "Hi" and subject.text == "Hi"
    assert subject.usage.total_tokens == 5 and subject.duration_ms == 12
    assert subject.tool_calls == CALLS and subject.input == "hello"


# --- load-time validation -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        (
            {"type": "contain", "value": "x"},
            'unknown assertion type "contain" (did you mean "contains"?)',
        ),
        ({"type": "frobnicate"}, 'unknown assertion type "frobnicate"'),
        ({"type": "contains"}, 'contains needs a "value"'),
        (
            {"type": "contains", "value": ["a"]},
            'contains "value" must be a string (use contains_any / contains_all for a list)',
        ),
        (
            {"type": "contains_any", "value": "a"},
            'contains_any "value" must be a non-empty list of strings',
        ),
        (
            {"type": "regex", "value": "(unclosed"},
            'invalid regex "(unclosed": missing ), unterminated subpattern at position 0',
        ),
        ({"type": "regex", "value": 5}, 'regex "value" must be a pattern string'),
        (
            {"type": "json_path", "value": 1},
            'json_path needs a "path" such as "$.intent" or "items[0].name"',
        ),
        (
            {"type": "json_path", "path": "a[", "value": 1},
            'invalid json_path "a[": Parse error near the end of string!',
        ),
        (
            {"type": "type", "value": "int"},
            'type "value" must be one of string, number, boolean, array, object, null',
        ),
        (
            {"type": "is_json", "value": {"type": "nonsense"}},
            "is_json schema is invalid: 'nonsense' is not valid under any of the given schemas",
        ),
        (
            {"type": "tool_called"},
            'tool_called "value" must be a tool name, {"name", "arguments"}, or a list of them',
        ),
        (
            {"type": "tool_called", "value": {"name": "x", "args": {}}},
            'tool_called: unknown key "args" (did you mean "arguments"?)',
        ),
        (
            {"type": "tool_result", "value": "setup"},
            'tool_result "value" must be {"tool": name, "result": ...}',
        ),
        (
            {"type": "tool_result", "value": {"tool": "x", "result": {"m": "regex:["}}},
            'invalid regex "[": unterminated character set at position 0',
        ),
        (
            {"type": "agent", "use": "tests.validator", "value": "c"},
            'agent assertion "use" must be "agents:<validator id>" (or left out)',
        ),
        ({"type": "agent", "use": "agents:v"}, 'agent assertion needs the criteria in "value"'),
        (
            {"type": "script"},
            'script assertion needs "script": "<file>.<Func>" (e.g. "checks.Validate")',
        ),
        # Non-text values were compared as their Python text (True as "True"): refused now.
        (
            {"type": "contains", "value": 1},
            'contains "value" must be a string, got 1; put it in quotes',
        ),
        (
            {"type": "icontains", "value": True},
            'icontains "value" must be a string, got true; put it in quotes',
        ),
        (
            {"type": "contains_all", "value": ["a", 2]},
            'contains_all "value" items must be strings, got 2; put it in quotes',
        ),
        (
            {"type": "agent", "use": "agents:v", "value": 1},
            'agent assertion "value" must be the criteria as text (or an object or list), got 1;'
            " put it in quotes",
        ),
        ({"type": "latency", "value": "1s"}, 'latency "value" must be a non-negative number'),
        ({"type": "tokens", "value": True}, 'tokens "value" must be a non-negative number'),
        (
            {"type": "contains", "value": "x", "path": "a"},
            '"path" is only used by json_path, type, file and state assertions, not contains',
        ),
    ],
)
def test_validate_assertion_problems(fields, problem):
    assert validate_assertion(Assertion(**fields)) == problem


@pytest.mark.parametrize(
    "fields",
    [
        {"type": "equals", "value": None},
        {"type": "is_json"},
        {"type": "json_path", "path": "$.a[?(@.n > 1)]", "value": 1},
        {"type": "tool_called", "value": [{"name": "a", "arguments": {"q": "regex:^x"}}, "b"]},
        {"type": "script", "script": "checks.Validate"},
        {"type": "cost", "value": 0},
    ],
)
def test_validate_assertion_accepts(fields):
    assert validate_assertion(Assertion(**fields)) is None


# --- judge_samples and who a failed assertion is on ------------------------------------------


def wavering(*votes: bool):
    """A judge that answers ``votes`` in turn."""
    answers = iter(votes)

    async def judge(use, criteria, subject, options):
        vote = next(answers)
        return {"passed": vote, "reason": "fine" if vote else "not fine"}

    return AssertionEnv(judge=judge)


async def test_judge_samples_ask_n_times_and_the_majority_decides():
    result = await check(
        "agent", "x", wavering(True, False, True), use="agents:v", value="c", judge_samples=3
    )
    assert result.passed and result.attribution is None
    assert result.message == "fine (judge split 2/3 passed)"
    assert result.verdict["votes"] == {"passed": 2, "failed": 1}
    assert result.verdict["disagreement"] is True
    assert [s["passed"] for s in result.verdict["samples"]] == [True, False, True]


async def test_a_failing_majority_the_samples_disagree_on_is_the_judges():
    split = await check(
        "agent", "x", wavering(False, True, False), use="agents:v", value="c", judge_samples=3
    )
    assert not split.passed and split.attribution == "judge"
    tie = await check(
        "agent", "x", wavering(True, False), use="agents:v", value="c", judge_samples=2
    )
    assert not tie.passed and tie.attribution == "judge"  # a tie is no majority for passing
    agreed = await check(
        "agent", "x", wavering(False, False), use="agents:v", value="c", judge_samples=2
    )
    assert not agreed.passed and agreed.attribution is None and not agreed.verdict["disagreement"]


async def test_one_sample_keeps_the_verdict_as_it_was():
    result = await check("agent", "x", wavering(False), use="agents:v", value="c")
    assert result.verdict == {"passed": False, "reason": "not fine", "criteria": "c"}


async def test_a_judge_or_script_that_raises_is_not_the_agents_failure():
    async def down(use, criteria, subject, options):
        raise ValueError("validator agent error: down")

    judged = await check("agent", "x", AssertionEnv(judge=down), use="agents:v", value="c")
    assert not judged.passed and judged.attribution == "judge"

    def broken(output, case_input, value):
        raise RuntimeError("bug")

    env = AssertionEnv(script=lambda ref: broken)
    scripted = await check("script", "x", env, script="checks.Broken")
    assert not scripted.passed and scripted.attribution == "harness"
    plain = await check("contains", "x", value="y")
    assert not plain.passed and plain.attribution is None


def test_judge_samples_belong_to_agent_assertions():
    assert validate_assertion(Assertion("contains", value="x", judge_samples=3)) == (
        '"judge_samples" is only used by agent assertions, not contains'
    )

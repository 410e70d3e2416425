"""The trajectory assertion: every mode and arguments mode on crafted traces, the value
matchers, the aligned failure message, scope in a dynamic case, and the pairing held to a
brute-force search."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentcli.eval.cases.model import Assertion
from agentcli.eval.checks.assertions import AssertionEnv, Subject, evaluate, validate_assertion
from agentcli.eval.checks.matching import match_value
from agentcli.eval.checks.trajectory import ExpectedCall, match_trajectory
from agentcli.eval.results.model import AssertionResult, ToolCall


def call(tool: str, result: Any = None, error: str | None = None, **arguments: Any) -> ToolCall:
    return ToolCall(server="shop", tool=tool, arguments=arguments, result=result, error=error)


TRACE = [
    call("search", result={"hits": 3}, q="berlin", limit=5),
    call("get_item", result={"id": 7, "price": 19.99}, id=7),
    call("add_to_cart", result={"ok": True}, id=7, qty=1),
    call("checkout", result={"total": 19.99}, total=19.99),
]


async def trajectory(
    value: list[Any], calls: list[ToolCall] = TRACE, **fields: Any
) -> AssertionResult:
    """Evaluate one (valid) trajectory assertion against ``calls``."""
    assertion = Assertion(type="trajectory", value=value, **fields)
    assert validate_assertion(assertion) is None
    [result] = await evaluate([assertion], Subject.of("", tool_calls=calls), AssertionEnv())
    return result


NAMES = ["search", "get_item", "add_to_cart", "checkout"]


@pytest.mark.parametrize(
    "mode, value, passed",
    [
        ("exact", NAMES, True),
        ("exact", NAMES[:3], False),  # one call too many
        ("exact", [NAMES[1], NAMES[0], *NAMES[2:]], False),  # order matters
        ("in_order", ["search", "checkout"], True),
        ("in_order", ["checkout", "search"], False),
        ("in_order", [*NAMES, "checkout"], False),  # each expected call needs a call of its own
        ("any_order", NAMES[::-1], True),
        ("any_order", NAMES[1:][::-1], False),  # an extra call
        ("any_order", [*NAMES, "search"], False),  # a missing call
        ("superset", ["checkout", "search"], True),
        ("superset", ["checkout", "refund"], False),
        ("superset", ["search", "search"], False),  # one call cannot stand for two
        ("subset", [*NAMES[::-1], "refund", "notify"], True),
        ("subset", NAMES[:3], False),  # checkout was not expected
    ],
)
async def test_modes(mode, value, passed):
    result = await trajectory(value, mode=mode)
    assert result.passed is passed, result.message


async def test_the_default_mode_is_exact_and_an_empty_list_means_no_calls():
    assert (await trajectory(NAMES)).passed
    assert not (await trajectory(NAMES[::-1])).passed
    assert (await trajectory([], calls=[])).passed
    assert not (await trajectory([], mode="any_order")).passed
    assert (await trajectory([], mode="subset", calls=[])).passed


@pytest.mark.parametrize(
    "arguments_mode, arguments, passed",
    [
        ("partial", {"q": "berlin"}, True),
        ("partial", {"q": "paris"}, False),
        ("exact", {"q": "berlin"}, False),  # limit is missing
        ("exact", {"q": "berlin", "limit": 5}, True),
        ("exact", {"q": "berlin", "limit": "5"}, False),  # exact leaves keep their JSON type
        ("partial", {"q": "berlin", "limit": "5"}, True),  # partial compares text forms
        ("partial", {"q": "berlin", "limit": "5.0"}, True),  # and numbers by their value
        ("exact", {"q": "berlin", "limit": "5.0"}, False),
        ("ignore", {"q": "paris"}, True),
    ],
)
async def test_arguments_modes(arguments_mode, arguments, passed):
    value = [{"name": "search", "arguments": arguments}, *NAMES[1:]]
    result = await trajectory(value, arguments_mode=arguments_mode)
    assert result.passed is passed, result.message


@pytest.mark.parametrize("arguments_mode", ["partial", "exact"])
async def test_patterns_and_matchers_in_arguments(arguments_mode):
    value = [
        {"name": "search", "arguments": {"q": "regex:^ber", "limit": {"$any": True}}},
        {"name": "get_item", "arguments": {"id": {"$approx": 7.2, "tol": 0.5}}},
        {"name": "add_to_cart", "arguments": {"id": 7, "qty": {"$any": True}}},
        {"name": "checkout", "arguments": {"total": {"$approx": 20, "tol": 0.01}}},
    ]
    result = await trajectory(value, arguments_mode=arguments_mode)
    assert result.passed, result.message
    value[3] = {"name": "checkout", "arguments": {"total": {"$approx": 20, "tol": 0.005}}}
    assert not (await trajectory(value, arguments_mode=arguments_mode)).passed


def test_matchers_on_their_own():
    assert match_value(3.1416, {"$approx": 3.14, "tol": 0.01})
    assert not match_value(3.2, {"$approx": 3.14, "tol": 0.01})
    assert match_value(3.14 + 1e-9, {"$approx": 3.14})  # the default tolerance is 1e-6
    assert not match_value(True, {"$approx": 1, "tol": 0.5})  # booleans are not numbers
    assert not match_value("3.14", {"$approx": 3.14})
    assert match_value(None, {"$any": True}) and match_value({"a": [1]}, {"$any": True})
    assert not match_value({}, {"q": {"$any": True}})  # the key must be there
    assert match_value({"a": 1, "b": 2}, {"a": 1})
    assert not match_value({"a": 1, "b": 2}, {"a": 1}, True)
    assert match_value({"a": {"b": 1, "c": 2}}, {"a": {"b": 1}})
    assert not match_value({"a": {"b": 1, "c": 2}}, {"a": {"b": 1}}, True)


async def test_expected_results():
    ok = [*NAMES[:3], {"name": "checkout", "result": {"total": {"$approx": 20, "tol": 0.1}}}]
    assert (await trajectory(ok)).passed
    wrong = [*NAMES[:3], {"name": "checkout", "result": {"total": 5}}]
    failed = await trajectory(wrong)
    assert not failed.passed and "(result differs)" in failed.message
    broken = [*TRACE[:3], call("checkout", error="card declined", total=19.99)]
    failed = await trajectory(ok, calls=broken)
    assert not failed.passed and "-> error: card declined" in failed.message
    assert "(the call failed)" in failed.message


async def test_names_match_as_tool_called_does():
    assert (await trajectory(["shop__search", *NAMES[1:]])).passed
    assert not (await trajectory(["arch", *NAMES[1:]])).passed  # never a loose substring


async def test_a_later_expected_call_can_take_the_pairing_back():
    # Greedy pairs the loose expectation with the first call and leaves nothing for the
    # specific one; an augmenting path moves the loose one to the second call.
    calls = [call("search", q="berlin"), call("search", q="paris")]
    value = ["search", {"name": "search", "arguments": {"q": "berlin"}}]
    assert (await trajectory(value, calls=calls, mode="any_order")).passed
    assert (await trajectory(value, calls=calls, mode="superset")).passed
    assert (await trajectory(value, calls=calls, mode="subset")).passed


# --- the failure message -------------------------------------------------------------------


async def test_exact_failure_aligns_the_sequences_and_marks_the_first_divergence():
    value = [
        {"name": "search", "arguments": {"q": "regex:^ber"}},
        {"name": "add_to_cart", "arguments": {"id": 8}},
        "checkout",
        "notify",
    ]
    result = await trajectory(value)
    assert result.message == "\n".join(
        [
            "trajectory (exact) does not match (4 expected calls, 4 actual calls): "
            'call 2 get_item {"id": 7} was not expected',
            "     expected (4)                   actual (4)",
            '     1 search {"q": "regex:^ber"}   1 search {"q": "berlin", "limit": 5}',
            '  >                                 2 get_item {"id": 7}                   extra',
            '     2 add_to_cart {"id": 8}        3 add_to_cart {"id": 7, "qty": 1}      arguments differ',
            '     3 checkout                     4 checkout {"total": 19.99}',
            "     4 notify                                                              missing",
        ]
    )
    assert result.expected == value and result.actual == NAMES


async def test_in_order_failure_puts_the_missing_call_beside_a_later_call_of_its_tool():
    value = ["search", {"name": "checkout", "arguments": {"total": 5}}]
    result = await trajectory(value, mode="in_order")
    assert result.message == "\n".join(
        [
            "trajectory (in_order) does not match (2 expected calls, 4 actual calls): "
            'expected call 2 checkout {"total": 5}, got call 4 checkout {"total": 19.99} '
            "(arguments differ)",
            "     expected (2)              actual (4)",
            '     1 search                  1 search {"q": "berlin", "limit": 5}',
            '                               2 get_item {"id": 7}                   extra (allowed)',
            '                               3 add_to_cart {"id": 7, "qty": 1}      extra (allowed)',
            '  >  2 checkout {"total": 5}   4 checkout {"total": 19.99}            arguments differ',
        ]
    )


async def test_in_order_says_when_the_call_came_too_early():
    result = await trajectory(["checkout", "search"], mode="in_order")
    assert result.message.splitlines()[0] == (
        "trajectory (in_order) does not match (2 expected calls, 4 actual calls): "
        "expected call 2 search was not made in order (it was made earlier)"
    )
    assert result.message.splitlines()[-1] == (
        "  >  2 search" + " " * 46 + "missing (called earlier, out of order)"
    )


async def test_unordered_failures_show_the_pairing():
    superset = await trajectory(["checkout", "refund"], mode="superset")
    assert superset.message == "\n".join(
        [
            "trajectory (superset) does not match (2 expected calls, 4 actual calls): "
            "expected call 2 refund was not made",
            "     expected (2)   actual (4)",
            '                    1 search {"q": "berlin", "limit": 5}   extra (allowed)',
            '                    2 get_item {"id": 7}                   extra (allowed)',
            '                    3 add_to_cart {"id": 7, "qty": 1}      extra (allowed)',
            '     1 checkout     4 checkout {"total": 19.99}',
            "  >  2 refund                                              missing",
        ]
    )
    subset = await trajectory(["checkout", "search", "refund"], mode="subset")
    lines = subset.message.splitlines()
    assert lines[0].endswith('call 2 get_item {"id": 7} was not expected')
    assert lines[3].startswith("  >") and lines[-1].endswith("not called (allowed)")


async def test_a_long_alignment_shows_a_window_around_the_first_divergence():
    calls = [call("step", n=i) for i in range(100)]
    value = [{"name": "step", "arguments": {"n": i if i != 40 else -1}} for i in range(100)]
    lines = (await trajectory(value, calls=calls)).message.splitlines()
    assert lines[2] == "     … 30 rows before" and lines[-1] == "     … 30 rows after"
    assert len(lines) == 2 + 1 + 40 + 1
    marked = [line for line in lines if line.startswith("  >")]
    assert marked == ['  >   41 step {"n": -1}    41 step {"n": 40}   arguments differ']


async def test_negate_and_a_passing_message():
    result = await trajectory(NAMES, mode="any_order")
    assert result.message == "trajectory (any_order) matches: 4 calls as expected, in some order"
    assert not (await trajectory(NAMES, negate=True)).passed


# --- scope ---------------------------------------------------------------------------------


async def test_scope_all_reads_the_conversation_and_turn_the_turn_under_test():
    turn = [call("checkout", total=19.99)]
    subject = Subject(output="", text="", tool_calls=turn, conversation_calls=TRACE)
    every = Assertion(type="trajectory", value=NAMES)
    this_turn = Assertion(type="trajectory", value=["checkout"], scope="turn")
    results = await evaluate([every, this_turn], subject, AssertionEnv())
    assert [r.passed for r in results] == [True, True], [r.message for r in results]


# --- the matching held to brute force ------------------------------------------------------

TOOLS = ["a", "b"]
# Values that match each other by match_value's rules in some modes and not others (1, 1.0,
# "1", True, [1]), so the pairing's index of literal arguments is held to the definition too.
ACTUAL_VALUES = [0, 1, 2, 1.0, "1", "2", True, [1], None]
EXPECTED_VALUES = [0, 1, 2, 1.0, "1", "regex:^1$", {"$any": True}, {"$approx": 1.2, "tol": 0.5}]


def actual_call(tool: str, arguments: Any) -> ToolCall:
    return ToolCall(server="shop", tool=tool, arguments=arguments)


CALL_POOL = [
    *(actual_call(tool, {"x": x}) for tool in TOOLS for x in ACTUAL_VALUES),
    actual_call("a", json.dumps({"x": 1})),
    actual_call("a", json.dumps({"x": "1"})),
    actual_call("x__a", {"x": 1}),
    actual_call("a", {}),
]
EXPECTED_POOL = [
    *TOOLS,
    *({"name": name, "arguments": {"x": x}} for name in TOOLS for x in EXPECTED_VALUES),
    {"name": "shop__a", "arguments": {"x": 1}},
    {"name": "x__a", "arguments": {"x": 1}},
]
calls_strategy = st.lists(st.sampled_from(CALL_POOL), max_size=6)
expected_strategy = st.lists(st.sampled_from(EXPECTED_POOL), max_size=6)


def brute_force(
    expected: list[ExpectedCall], calls: list[ToolCall], mode: str, arguments_mode: str
) -> bool:
    """The definition of each mode, by trying every assignment."""

    def fits(e: ExpectedCall, c: ToolCall) -> bool:
        return not e.difference(c, arguments_mode)  # type: ignore[arg-type]

    if mode == "exact":
        return len(expected) == len(calls) and all(map(fits, expected, calls))
    if mode == "in_order":
        return any(
            all(fits(e, calls[i]) for e, i in zip(expected, chosen, strict=True))
            for chosen in itertools.combinations(range(len(calls)), len(expected))
        )
    if mode == "any_order" and len(expected) != len(calls):
        return False
    small, large, fit = (
        (calls, expected, lambda c, e: fits(e, c)) if mode == "subset" else (expected, calls, fits)
    )
    return any(
        all(fit(s, large[i]) for s, i in zip(small, chosen, strict=True))
        for chosen in itertools.permutations(range(len(large)), len(small))
    )


@settings(max_examples=600, deadline=None)
@given(
    calls_strategy,
    expected_strategy,
    st.sampled_from(["exact", "in_order", "any_order", "subset", "superset"]),
    st.sampled_from(["partial", "exact"]),
)
def test_every_mode_agrees_with_its_definition(calls, value, mode, arguments_mode):
    expected = [ExpectedCall.of(item) for item in value]
    outcome = match_trajectory(expected, calls, mode, arguments_mode)
    assert outcome.passed is brute_force(expected, calls, mode, arguments_mode), outcome.message
    if not outcome.passed:
        assert sum(line.startswith("  >") for line in outcome.message.splitlines()) == 1


# Leaves of every kind the compiled tests decide themselves or hand to match_value.
LEAVES = st.sampled_from(
    [0, 1, 2, 1.0, 1.5, -0.0, float("nan"), "1", "a", "", True, False, None, [1], {"y": 1}]
)
EXPECTED_LEAVES = st.one_of(
    LEAVES,
    st.sampled_from(
        [
            "regex:^1",
            "regex:a|1",
            {"$any": True},
            {"$approx": 1, "tol": 0.5},
            {"$approx": 1.0},
            {"y": "regex:1"},
            [{"$any": True}],
        ]
    ),
)
KEYS = st.sampled_from(["x", "y", "z"])


@settings(max_examples=800, deadline=None)
@given(
    st.one_of(
        st.dictionaries(KEYS, LEAVES, max_size=3),
        st.dictionaries(KEYS, LEAVES, max_size=3).map(json.dumps),
        LEAVES,
    ),
    st.one_of(st.dictionaries(KEYS, EXPECTED_LEAVES, max_size=3), EXPECTED_LEAVES),
    st.booleans(),
)
def test_compiled_argument_tests_agree_with_match_value(actual, expected, exact):
    # The pairing matches through each expected call's compiled tests; they must decide
    # every pair as match_value does (whose rules the docs give).
    compiled = ExpectedCall.of({"name": "t", "arguments": expected})
    assert compiled.arguments_match(actual, exact) is match_value(actual, expected, exact)


async def test_a_shuffled_trajectory_pairs_through_loosely_typed_arguments():
    # Text expected against a number, and arguments sent as JSON text, still pair when the
    # expected calls come in another order than the calls (the index must not drop them).
    calls = [
        actual_call("get", {"id": 5}),
        actual_call("get", '{"id": 6}'),
        actual_call("get", {"id": "7"}),
        actual_call("x__get", {"id": 8}),
    ]
    value = [
        {"name": "x__get", "arguments": {"id": 8}},
        {"name": "get", "arguments": {"id": "7"}},
        {"name": "get", "arguments": {"id": 6}},
        {"name": "get", "arguments": {"id": "5"}},
    ]
    assert (await trajectory(value, calls, mode="any_order")).passed
    assert not (await trajectory(value, calls, mode="any_order", arguments_mode="exact")).passed


# --- the bundled example --------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[3]


def test_the_expense_cases_pass_offline_and_the_documented_failure_is_what_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from agentcli.cli.main import _register, app

    _register()
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    out = tmp_path / "ok.jsonl"
    ran = CliRunner().invoke(
        app, ["eval", "-i", "assistants/expense/tests/trajectory.jsonl", "-o", str(out)]
    )
    assert ran.exit_code == 0, ran.output
    records = [json.loads(line) for line in out.read_text().splitlines()]
    results = [r for r in records if r.get("type") not in ("header", "summary")]
    assert len(results) == 7 and all(r["status"] == "passed" for r in results)
    types = {a["type"] for r in results for a in r.get("assertions", [])}
    assert {"trajectory", "tool_not_called", "tool_args_valid", "tool_called"} <= types

    failing = tmp_path / "failing.jsonl"
    CliRunner().invoke(
        app, ["eval", "-i", "assistants/expense/tests/failing.jsonl", "-o", str(failing)]
    )
    [wrong] = [
        json.loads(line)
        for line in failing.read_text().splitlines()
        if json.loads(line).get("id") == "wrong-trajectory"
    ]
    docs = (ROOT / "docs" / "eval.md").read_text()
    assert wrong["status"] == "failed"
    assert f"```text\n{wrong['assertions'][0]['message']}\n```" in docs

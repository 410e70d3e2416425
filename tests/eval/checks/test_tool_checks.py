"""Call counts (``tool_called`` times/min/max), ``tool_not_called``, ``tool_args_valid``, and
the load-time errors of every new field: from the rules, and from a case file with its line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentcli.errors import CaseFileError
from agentcli.eval.cases.load import load_cases
from agentcli.eval.cases.model import Assertion
from agentcli.eval.checks.assertions import AssertionEnv, Subject, evaluate, validate_assertion
from agentcli.eval.checks.matching import call_names, tool_name_matches
from agentcli.eval.results.model import AssertionResult, ToolCall

CALLS = [
    ToolCall(server="web", tool="search", arguments={"q": "berlin"}),
    ToolCall(server="web", tool="search", arguments={"q": "paris"}),
    ToolCall(server="web", tool="search", arguments={"q": "berlin", "page": 2}),
    ToolCall(server="shop", tool="buy", arguments={"amount": 0}),
]


async def check(
    type: str, value: Any = None, calls: list[ToolCall] = CALLS, env: AssertionEnv | None = None
) -> AssertionResult:
    assertion = Assertion(type=type, value=value)
    assert validate_assertion(assertion) is None
    [result] = await evaluate([assertion], Subject.of("", tool_calls=calls), env or AssertionEnv())
    return result


@pytest.mark.parametrize(
    "value, passed",
    [
        ({"name": "search", "times": 3}, True),
        ({"name": "search", "times": 2}, False),
        ({"name": "search", "arguments": {"q": "berlin"}, "times": 2}, True),
        ({"name": "search", "min": 2}, True),
        ({"name": "search", "min": 4}, False),
        ({"name": "search", "max": 3}, True),
        ({"name": "search", "max": 2}, False),
        ({"name": "search", "min": 1, "max": 3}, True),
        ({"name": "buy", "max": 1}, True),
        ({"name": "refund", "max": 1}, False),  # max alone still wants one call
        ({"name": "refund", "min": 0, "max": 1}, True),
        ({"name": "refund", "times": 0}, True),
        ([{"name": "search", "times": 1}, {"name": "buy", "times": 1}], True),  # any of
    ],
)
async def test_tool_called_counts(value, passed):
    result = await check("tool_called", value)
    assert result.passed is passed, result.message


async def test_count_messages():
    bad = await check("tool_called", {"name": "search", "arguments": {"q": "berlin"}, "times": 1})
    assert bad.message == (
        'expected tool "search" with arguments {"q": "berlin"} to be called exactly 1 time, '
        "but it was called 2 times (3 times with any arguments)"
    )
    ok = await check("tool_called", {"name": "search", "min": 1, "max": 3})
    assert ok.message == 'tool "search" was called 3 times (between 1 and 3 times)'
    assert ok.actual == ["search", "search", "search", "buy"]


async def test_tool_not_called():
    assert (await check("tool_not_called", "refund")).passed
    assert (await check("tool_not_called", ["refund", "cancel"])).passed
    assert (await check("tool_not_called", {"name": "search", "arguments": {"q": "rome"}})).passed
    bad = await check("tool_not_called", {"name": "search", "arguments": {"q": "paris"}})
    assert not bad.passed
    assert bad.message == (
        'expected tool "search" with arguments {"q": "paris"} not to be called, '
        'but call 2 was search {"q": "paris"}'
    )
    assert not (await check("tool_not_called", "shop__buy")).passed
    assert (await check("tool_not_called", "buy", calls=[])).passed


SCHEMAS = {
    ("web", "search"): {
        "type": "object",
        "properties": {"q": {"type": "string"}, "page": {"type": "integer", "minimum": 1}},
        "required": ["q"],
    },
    ("shop", "buy"): {
        "type": "object",
        "properties": {"amount": {"type": "number", "exclusiveMinimum": 0}},
        "required": ["amount"],
    },
}


def schema_env() -> AssertionEnv:
    async def tool_schema(call: ToolCall) -> dict[str, Any] | None:
        return SCHEMAS.get((call.server, call.tool))

    return AssertionEnv(tool_schema=tool_schema)


async def test_tool_args_valid_catches_a_schema_invalid_call():
    bad = await check("tool_args_valid", env=schema_env())
    assert not bad.passed
    assert bad.message == (
        'call 4 buy {"amount": 0}: amount: 0 is less than or equal to the minimum of 0'
    )
    good = await check("tool_args_valid", calls=CALLS[:3], env=schema_env())
    assert good.passed and good.message == "the arguments of 3 tool calls match their schemas"


async def test_tool_args_valid_on_unknown_tools_and_without_schemas():
    stray = [ToolCall(server="", tool="made_up", arguments={})]
    result = await check("tool_args_valid", calls=stray, env=schema_env())
    assert not result.passed and "no schema is known for this tool" in result.message
    several = [*CALLS, ToolCall(server="web", tool="search", arguments={"page": 0})]
    result = await check("tool_args_valid", calls=several, env=schema_env())
    assert result.message.endswith("(and 1 more invalid call)")
    assert "call 5 search" in result.actual[1] and "'q' is a required property" in result.actual[1]
    assert (await check("tool_args_valid", calls=[], env=schema_env())).passed
    assert not (await check("tool_args_valid")).passed  # no schemas to check against


@pytest.mark.parametrize(
    "record",
    [
        ToolCall(tool="search"),
        ToolCall(server="web", tool="search"),
        ToolCall(server="my.web", tool="a__b"),
        ToolCall(server="x", tool="___"),
        ToolCall(server="", tool=""),
    ],
)
@pytest.mark.parametrize(
    "name", ["search", "web__search", "my_web__a__b", "a__b", "b", "_b", "", "_", "__", "arch"]
)
def test_call_names_agree_with_the_suffix_rule(record, name):
    candidates = [record.tool]
    if record.server:
        candidates += [
            f"{record.server}__{record.tool}",
            f"{record.server.replace('.', '_')}__{record.tool}",
        ]
    rule = bool(name) and any(c == name or c.endswith("__" + name) for c in candidates)
    assert tool_name_matches(record, name) is rule
    assert (name in call_names(record)) is rule


# --- load-time errors ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "fields, problem",
    [
        (
            {"type": "trajectory", "value": ["a"], "mode": "in-order"},
            'trajectory "mode" must be one of exact, in_order, any_order, subset, superset, '
            'got "in-order" (did you mean "in_order"?)',
        ),
        ({"type": "contains", "value": "x", "scope": "turn"}, '"scope" is only used by trajectory assertions, not contains'),
        ({"type": "trajectory", "value": "a"}, 'trajectory "value" must be a list of calls ("name" or {"name", "arguments", "result"})'),
        ({"type": "trajectory", "value": [{"name": "a", "args": {}}]}, 'trajectory "value"[0]: unknown key "args" (did you mean "arguments"?)'),
        ({"type": "trajectory", "value": [{"name": "a", "xyz": 1}]}, 'trajectory "value"[0]: unknown key "xyz" (use name, arguments, result)'),
        ({"type": "trajectory", "value": [{"name": "a", "arguments": {"x": {"$approx": 1, "tol": -1}}}]}, 'trajectory "value"[0]: "tol" must be a non-negative number, got -1'),
        ({"type": "trajectory", "value": [{"name": "a", "arguments": {"x": {"$any": False}}}]}, 'trajectory "value"[0]: {"$any": true} stands alone, got {"$any": false}'),
        ({"type": "trajectory", "value": [], "mode": "in_order"}, "an empty trajectory matches every case in mode in_order; use exact for no calls"),
        ({"type": "tool_called", "value": {"name": "a", "times": -1}}, 'tool_called "times" must be a non-negative integer, got -1'),
        ({"type": "tool_called", "value": {"name": "a", "times": 1, "min": 1}}, 'tool_called: give "times" or "min"/"max", not both'),
        ({"type": "tool_not_called", "value": {"name": "a", "times": 1}}, 'tool_not_called: unknown key "times" (use name, arguments)'),
        ({"type": "tool_args_valid", "value": "a"}, 'tool_args_valid takes no "value": it checks the arguments of every call'),
    ],
)  # fmt: skip
def test_rule_problems(fields, problem):
    assert validate_assertion(Assertion(**fields)) == problem


def test_a_case_file_names_the_file_line_and_a_near_miss(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    lines = [
        {"id": "ok", "input": "x", "assert": {"type": "trajectory", "value": ["a"], "mode": "superset"}},
        {"id": "a", "input": "x", "assert": {"type": "trajectory", "value": ["a"], "arguments_mode": "partal"}},
        {"id": "b", "input": "x", "assert": [{"type": "tool_called", "value": {"name": "s", "time": 2}}]},
        {"id": "c", "input": "x", "assert": {"type": "trajectory", "value": [{"name": "s", "argumnets": {}}]}},
        {"id": "d", "input": "x", "assert": {"type": "trajectory", "value": [{"name": "s", "arguments": {"n": {"$aprox": 3}}}]}},
        {"id": "e", "input": "x", "assert": {"type": "tool_not_called", "value": []}},
    ]  # fmt: skip
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with pytest.raises(CaseFileError) as caught:
        load_cases(path, project_root=tmp_path)
    assert caught.value.problems == [
        'cases.jsonl:2: assert.arguments_mode: must be one of "exact", "partial", "ignore", '
        'got "partal" (did you mean "partial"?)',
        'cases.jsonl:3: assert[0].value: unknown field "time" (did you mean "times"?)',
        'cases.jsonl:4: assert.value[0]: unknown field "argumnets" (did you mean "arguments"?)',
        'cases.jsonl:5: assert: trajectory "value"[0]: unknown matcher "$aprox" (did you mean "$approx"?)',
        "cases.jsonl:6: assert.value: must not be empty",
    ]


def test_the_fast_schema_check_agrees_with_jsonschema_on_the_new_fields():
    from jsonschema import Draft202012Validator

    from agentcli.eval.cases.files import CASE_SCHEMA

    validator = Draft202012Validator(CASE_SCHEMA.schema)
    assertions = [
        {"type": "trajectory", "value": ["a", {"name": "b", "arguments": {}, "result": 1}]},
        {"type": "trajectory", "value": "a"},
        {"type": "trajectory", "value": [{"name": ""}]},
        {"type": "trajectory", "value": [], "mode": "nope"},
        {"type": "trajectory", "value": [], "mode": "subset", "arguments_mode": "ignore", "scope": "turn"},
        {"type": "tool_called", "value": [{"name": "a", "times": 2}, "b"]},
        {"type": "tool_called", "value": {"name": "a", "max": -1}},
        {"type": "tool_called", "value": {"name": "a", "min": 1.5}},
        {"type": "tool_not_called", "value": {"name": "a", "min": 1}},
        {"type": "tool_not_called", "value": ["a", {"name": "b", "arguments": {"x": 1}}]},
        {"type": "tool_args_valid"},
        "tool_args_valid",
    ]  # fmt: skip
    answers = []
    for assertion in assertions:
        case = {"id": "x", "input": "x", "assert": assertion}
        assert CASE_SCHEMA.conforms(case) is validator.is_valid(case), assertion
        answers.append(validator.is_valid(case))
    assert answers == [True, False, False, False, True, True, False, False, False, True, True, True]

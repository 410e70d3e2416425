"""The tool world of a case run (agentcli/eval/run/tool_world.py): which stub answers a call,
`once`, `unmatched: error`, the seeded fault decisions and what each fault looks like."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from agentcli.assistant.interception import InterceptedCall
from agentcli.errors import ToolError
from agentcli.eval.cases.world import CaseTools, ToolStub
from agentcli.eval.run.tool_world import ToolWorld, fault_for, garbled, world_for
from agentcli.faults import FaultPlan
from agentcli.runtime.tools import ToolResult


def stub(name: str, **fields: Any) -> ToolStub:
    return ToolStub(name, has_arguments="arguments" in fields, **fields)


def world(*stubs: ToolStub, unmatched: Any = None, faults: FaultPlan | None = None) -> ToolWorld:
    return ToolWorld(CaseTools(stubs, unmatched), faults, "case", 1)


def call(tool: str = "get_forecast", raising: bool = False, **arguments: Any) -> InterceptedCall:
    return InterceptedCall("weather", tool, arguments, raising, 30)


async def live() -> Any:
    return {"city": "Paris", "summary": "real"}


def answer(box: ToolWorld, request: InterceptedCall) -> Any:
    return asyncio.run(box.call(request, live))


@pytest.mark.parametrize(
    "name", ["get_forecast", "weather__get_forecast"], ids=["bare", "server__tool"]
)
def test_a_stub_names_its_tool_as_tool_called_does(name):
    assert world(stub(name)).stub_for(call()) is not None


@pytest.mark.parametrize("name", ["forecast", "weather", "other__get_forecast"])
def test_a_stub_never_matches_a_substring_or_another_server(name):
    assert world(stub(name)).stub_for(call()) is None


@pytest.mark.parametrize(
    ("arguments", "matches"),
    [
        ({"city": "Paris"}, True),
        ({"city": "regex:^P"}, True),
        ({"city": "regex:^L"}, False),
        ({"days": {"$approx": 3, "tol": 0.5}}, True),
        ({"days": {"$approx": 5, "tol": 0.5}}, False),
        ({"city": {"$any": True}}, True),
        ({"country": {"$any": True}}, False),
    ],
)
def test_arguments_match_partially_with_the_trajectory_matchers(arguments, matches):
    box = world(stub("get_forecast", arguments=arguments))
    assert (box.stub_for(call(city="Paris", days=3)) is not None) is matches


def test_a_stubbed_result_is_marked_for_the_model_and_plain_for_ctx_mcp():
    box = world(stub("get_forecast", result={"summary": "canned"}))
    result = answer(box, call())
    assert isinstance(result, ToolResult) and result.content == {"summary": "canned"}
    assert result.details == {"stubbed": True}
    assert answer(box, call(raising=True)) == {"summary": "canned"}


def test_a_stubbed_error_is_an_error_result_or_raises_for_ctx_mcp():
    box = world(stub("get_forecast", error="quota exceeded"))
    result = answer(box, call())
    assert result.is_error and result.content == "quota exceeded"
    with pytest.raises(ToolError, match="quota exceeded"):
        answer(box, call(raising=True))


def test_once_answers_the_first_call_then_the_next_stub_or_the_tool():
    box = world(
        stub("get_forecast", once=True, result=1), stub("get_forecast", once=True, result=2)
    )
    assert [answer(box, call(raising=True)) for _ in range(3)] == [1, 2, live_value()]


def live_value() -> Any:
    return asyncio.run(live())


def test_unmatched_error_refuses_calls_no_stub_answers():
    box = world(stub("list_cities", result=[]), unmatched="error")
    result = answer(box, call(city="Oslo"))
    assert result.is_error and result.details == {"error_type": "UnmatchedToolCall"}
    assert result.content.startswith('no stub of this case matches weather/get_forecast {"city"')
    assert answer(box, call(tool="list_cities", raising=True)) == []


def test_the_same_seed_fails_the_same_calls_and_another_seed_others():
    def decisions(seed: int, case: str = "c") -> list[Any]:
        plan = FaultPlan(0.3, ("timeout", "error", "malformed"), seed)
        return [
            fault_for(plan, case, 1, f"weather/get_forecast:{{}}:{index}") for index in range(200)
        ]

    assert decisions(42) == decisions(42)
    assert decisions(42) != decisions(43)
    assert decisions(42) != decisions(42, case="d")
    failing = [kind for kind in decisions(42) if kind]
    assert 40 <= len(failing) <= 80  # about 30% of 200
    assert set(failing) == {"timeout", "error", "malformed"}


def test_rate_one_fails_every_call_and_rate_zero_none():
    assert all(fault_for(FaultPlan(1.0, ("error",)), "c", 1, str(i)) == "error" for i in range(50))
    assert world_for(CaseTools(faults=FaultPlan(0.0)), FaultPlan(1.0), "c", 1) is None
    assert world_for(None, None, "c", None) is None
    assert world_for(CaseTools(unmatched="run"), None, "c", None) is None


def test_each_fault_kind_fails_as_that_failure_would():
    timeout = answer(world(faults=FaultPlan(1.0, ("timeout",))), call())
    assert timeout.is_error and timeout.content == "weather/get_forecast timed out after 30s"
    assert timeout.details == {"fault": "timeout"}
    error = answer(world(faults=FaultPlan(1.0, ("error",))), call())
    assert error.content == "weather/get_forecast failed: service unavailable"
    malformed = answer(world(faults=FaultPlan(1.0, ("malformed",))), call())
    assert malformed.details == {"fault": "malformed"} and not malformed.is_error
    with pytest.raises(json.JSONDecodeError):
        json.loads(malformed.content)
    with pytest.raises(ToolError, match="timed out"):
        answer(world(faults=FaultPlan(1.0, ("timeout",))), call(raising=True))


def test_a_call_is_decided_by_itself_and_its_index_among_its_equals_not_by_the_order():
    plan = FaultPlan(0.5, seed=1)

    def run(order: list[str]) -> dict[tuple[str, int], Any]:
        box = world(faults=plan)
        seen: dict[str, int] = {}
        decided = {}
        for city in order:
            index = seen[city] = seen.get(city, -1) + 1
            decided[city, index] = box._fault(call(city=city))
        return decided

    cities = ["Paris", "Oslo", "Paris", "Rome", "Lima", "Oslo"]
    assert run(cities) == run(list(reversed(cities)))


def test_a_timeout_fault_does_not_wait_for_the_timeout():
    async def slow() -> Any:
        await asyncio.sleep(30)

    box = world(faults=FaultPlan(1.0, ("timeout",)))
    result = asyncio.run(asyncio.wait_for(box.call(call(), slow), 1))
    assert result.details == {"fault": "timeout"}


def test_garbled_results_are_never_valid_json_for_objects_and_lists():
    for value in ({"a": 1}, [1, 2, 3], {"summary": "x" * 100}):
        with pytest.raises(json.JSONDecodeError):
            json.loads(garbled(value))

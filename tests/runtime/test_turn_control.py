"""Turn control from seed 004: transform_context -> convert_to_llm, prepare_request,
finish_turn, terminate hints and responses cut by length."""

from __future__ import annotations

import asyncio
from typing import Any

from agentcli.errors import RateLimited
from agentcli.models.base import ModelResponse, ToolCallRequest
from agentcli.runtime.agent import Agent
from agentcli.runtime.events import Event
from agentcli.runtime.messages import Message, custom_message, to_llm_messages
from agentcli.runtime.tools import Block, Tool, ToolResult
from agentcli.runtime.turns import TurnResult

from .conftest import ScriptModel, call, calls, user_texts

DONE = Tool("done", lambda args: ToolResult("", "", "finished", terminate=True))
WORK = Tool("work", lambda args: "worked")


async def test_transform_context_then_convert_to_llm_run_before_every_call():
    trail: list[tuple[str, int]] = []

    def transform(messages: list[Message]) -> list[Message]:
        trail.append(("transform", len(messages)))
        return messages[-3:]  # prune old context

    def convert(messages: list[Message]) -> list[dict[str, Any]]:
        trail.append(("convert", len(messages)))
        kept = [m for m in messages if m.role != "custom"]
        notes = [
            {"role": "user", "content": f"note: {m.data}"} for m in messages if m.role == "custom"
        ]
        return [*notes, *to_llm_messages(kept)]

    model = ScriptModel(call("work"), "answer")
    agent = Agent(model, tools=[WORK], transform_context=transform, convert_to_llm=convert)
    agent.send(custom_message("notification", "disk almost full"), trigger=False)
    await agent.prompt("hi")
    assert trail == [("transform", 2), ("convert", 2), ("transform", 4), ("convert", 3)]
    assert model.seen[0] == [
        {"role": "user", "content": "note: disk almost full"},
        {"role": "user", "content": "hi"},
    ]
    assert [m["role"] for m in model.seen[1]] == ["user", "assistant", "tool"]


async def test_prepare_request_runs_before_every_request_including_the_first():
    canonical = [{"role": "user", "content": "canonical context"}]
    seen: list[int] = []

    def prepare(request: dict[str, Any]) -> dict[str, Any]:
        seen.append(request["step"])
        return {**request, "messages": [*canonical, *request["messages"][-1:]]}

    model = ScriptModel(call("work"), "answer")
    agent = Agent(model, tools=[WORK], prepare_request=prepare)
    await agent.prompt("hi")
    assert seen == [1, 2]
    assert model.seen[0] == [canonical[0], {"role": "user", "content": "hi"}]
    assert model.seen[1][0] == canonical[0] and model.seen[1][1]["role"] == "tool"


async def test_finish_turn_end_stops_after_the_batch_without_polling_queues():
    agent = Agent(ScriptModel(call("work"), "never"), tools=[WORK])
    agent.finish_turn = lambda result, message: {"action": "end"}
    agent.follow_up("later")
    result = await agent.prompt("go")
    await agent.wait()
    assert (result.reason, result.steps) == ("done", 1)
    assert [r.content for r in result.tool_results] == ["worked"]  # the batch still ran
    assert [m.content for m in agent.peek_queued_messages()] == ["later"]  # not polled


async def test_finish_turn_continue_makes_one_context_only_request():
    decisions = iter(["continue", None])
    model = ScriptModel("first thought", "second thought")
    agent = Agent(model, finish_turn=lambda result, message: next(decisions))
    result = await agent.prompt("hi")
    assert [m.content for m in result.messages] == ["hi", "first thought", "second thought"]
    assert len(model.calls) == 2
    assert model.seen[1][-1] == {"role": "assistant", "content": "first thought"}


async def test_finish_turn_continue_is_satisfied_by_tool_results():
    model = ScriptModel(call("work"), "answer")
    agent = Agent(model, tools=[WORK])
    agent.finish_turn = lambda result, message: "continue" if message.tool_calls else None
    result = await agent.prompt("go")
    assert len(model.calls) == 2 and result.text == "answer"


async def test_finish_turn_continue_is_satisfied_by_a_queued_follow_up():
    model = ScriptModel(lambda m: f"re: {m[-1]['content']}")
    agent = Agent(model)
    decisions = iter(["continue"])
    agent.finish_turn = lambda result, message: next(decisions, None)
    agent.follow_up("and also")
    first = await agent.prompt("hi")
    await agent.wait()
    assert first.steps == 1  # no context-only request: the follow-up made it
    assert [m.content for m in agent.messages] == ["hi", "re: hi", "and also", "re: and also"]


async def test_finish_turn_decisions_are_ignored_for_error_responses():
    seen: list[str | None] = []

    def finish(result: TurnResult, message: Message) -> str:
        seen.append(message.finish_reason)
        return "continue"

    model = ScriptModel(RateLimited("slow down", status_code=429), "never")
    agent = Agent(model, finish_turn=finish)
    result = await agent.prompt("hi")
    assert (result.reason, result.error_kind) == ("failed", "rate_limit")
    assert seen == ["error"] and len(model.calls) == 1


async def test_finish_turn_decisions_are_ignored_for_aborted_responses():
    entered = asyncio.Event()
    seen: list[str | None] = []

    async def slow(messages: Any) -> str:
        entered.set()
        await asyncio.sleep(30)
        return "late"

    def finish(result: TurnResult, message: Message) -> str:
        seen.append(message.finish_reason)
        raise RuntimeError("a hook that assumes success")

    agent = Agent(ScriptModel(slow), finish_turn=finish)
    task = asyncio.create_task(agent.prompt("hi"))
    await entered.wait()
    agent.abort()
    result = await task
    assert result.reason == "aborted"
    assert seen == ["aborted"]


async def test_every_result_terminating_stops_after_the_batch():
    model = ScriptModel(calls(("done", {}), ("done", {})), "never")
    agent = Agent(model, tools=[DONE])
    result = await agent.prompt("finish")
    assert (result.reason, result.steps, len(model.calls)) == ("done", 1, 1)
    assert [r.terminate for r in result.tool_results] == [True, True]


async def test_a_mixed_batch_goes_on():
    model = ScriptModel(calls(("done", {}), ("work", {})), "answer")
    agent = Agent(model, tools=[DONE, WORK])
    result = await agent.prompt("go")
    assert (result.steps, result.text) == (2, "answer")


async def test_blocked_calls_and_after_tool_call_overrides_can_terminate():
    def block(call_: Any, services: Any) -> Any:
        return Block("not allowed", terminate=True) if call_.name == "danger" else None

    def after(call_: Any, result: ToolResult) -> Any:
        return {"terminate": True} if call_.name == "work" and not result.is_error else None

    model = ScriptModel(calls(("danger", {}), ("work", {})), "never")
    agent = Agent(
        model,
        tools=[Tool("danger", lambda a: "ran"), WORK],
        before_tool_call=block,
        after_tool_call=after,
    )
    result = await agent.prompt("go")
    assert (result.steps, len(model.calls)) == (1, 1)
    assert [(r.content, r.terminate) for r in result.tool_results] == [
        ("not allowed", True),
        ("worked", True),
    ]


async def test_a_response_cut_by_length_fails_its_calls_and_goes_on():
    cut = ModelResponse(
        tool_calls=[ToolCallRequest("c1", "work", {"partial": True})], finish_reason="length"
    )
    events: list[Event] = []
    model = ScriptModel(cut, "complete now")
    agent = Agent(model, tools=[Tool("work", lambda a: pytest_fail())])
    agent.subscribe(events.append)
    result = await agent.prompt("go")
    (failed,) = result.tool_results
    assert failed.is_error and not failed.terminate
    assert "re-issue the call with complete arguments" in failed.content
    names = [e.type for e in events]
    assert names.count("tool_execution_start") == names.count("tool_execution_end") == 1
    assert result.text == "complete now"


def pytest_fail() -> None:
    raise AssertionError("a call from a cut response must not run")


async def test_steering_makes_the_next_request_of_the_same_turn():
    holder: dict[str, Agent] = {}

    def tool(args: Any) -> str:
        holder["agent"].steer("change of plan")
        return "worked"

    model = ScriptModel(call("work"), lambda m: f"re: {m[-1]['content']}")
    agent = Agent(model, tools=[Tool("work", tool)])
    holder["agent"] = agent
    result = await agent.prompt("go")
    assert result.steps == 2
    assert user_texts(model.seen[1]) == ["go", "change of plan"]

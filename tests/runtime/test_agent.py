"""The agent loop with offline models: steps, tools, hooks, limits, abort, queues."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentcli.models.base import ModelResponse, ResponseDone, ToolCallRequest
from agentcli.models.offline import FunctionModel
from agentcli.runtime.agent import Agent
from agentcli.runtime.events import Event
from agentcli.runtime.tools import Block, Replace, Tool, ToolResult

from .conftest import call, calls, reply_sequence

ADD_SCHEMA = {
    "type": "object",
    "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
    "required": ["a", "b"],
}


def add_tool() -> Tool:
    return Tool("add", lambda args: args["a"] + args["b"], parameters=ADD_SCHEMA)


def recorder(agent: Agent) -> list[Event]:
    events: list[Event] = []
    agent.subscribe(events.append)
    return events


def types(events: list[Event]) -> list[str]:
    return [e.type for e in events if e.type != "message_update"]


async def test_multi_step_turn_with_tool(scripted):
    model = scripted(call("add", a=2, b=3), lambda m: f"The sum is {m[-1]['content']}")
    agent = Agent(model, tools=[add_tool()])
    events = recorder(agent)

    result = await agent.prompt("add 2 and 3")

    assert result.reason == "done"
    assert result.text == "The sum is 5"
    assert result.steps == 2
    assert [r.content for r in result.tool_results] == [5]
    assert types(events) == [
        "agent_start",
        "turn_start",
        "message_start", "message_end",  # user
        "message_start", "message_end",  # assistant with the call
        "tool_execution_start", "tool_execution_end",
        "message_start", "message_end",  # tool result
        "step_end",
        "message_start", "message_end",  # final answer
        "step_end",
        "turn_end",
        "agent_end",
    ]  # fmt: skip
    assert [m.role for m in agent.messages] == ["user", "assistant", "tool", "assistant"]


async def test_parallel_tools_keep_model_order_when_finishing_in_reverse(scripted):
    finished: list[str] = []

    async def slow(args: dict[str, Any]) -> str:
        await asyncio.sleep(args["delay"])
        finished.append(args["name"])
        return args["name"]

    tool = Tool("wait", slow)
    reply = calls(
        ("wait", {"name": "first", "delay": 0.15}), ("wait", {"name": "second", "delay": 0.0})
    )
    agent = Agent(scripted(reply, "done"), tools=[tool])
    loop = asyncio.get_running_loop()
    started = loop.time()

    result = await agent.prompt("go")

    assert finished == ["second", "first"]  # they really ran concurrently
    assert loop.time() - started < 0.3
    assert [r.content for r in result.tool_results] == ["first", "second"]
    tool_messages = [m for m in agent.messages if m.role == "tool"]
    assert [m.content for m in tool_messages] == ["first", "second"]


async def test_a_sequential_tool_makes_its_batch_sequential(scripted):
    active = {"now": 0, "max": 0}

    async def work(args: dict[str, Any]) -> str:
        active["now"] += 1
        active["max"] = max(active["max"], active["now"])
        await asyncio.sleep(0.02)
        active["now"] -= 1
        return "ok"

    tools = [Tool("a", work, sequential=True), Tool("b", work)]
    agent = Agent(scripted(calls(("a", {}), ("b", {}), ("b", {})), "done"), tools=tools)
    await agent.prompt("go")
    assert active["max"] == 1


@pytest.mark.parametrize(
    ("execution", "order"),
    [
        ("parallel", ["start a", "start b", "start c", "end a", "end b", "end c"]),
        ("sequential", ["start a", "end a", "start b", "end b", "start c", "end c"]),
    ],
)
async def test_sequential_execution_runs_each_call_start_to_end_before_the_next(
    scripted, execution, order
):
    """Seed 004: sequential mode executes the calls one by one, each from its
    tool_execution_start to its tool_execution_end before the next starts."""

    async def work(args: dict[str, Any]) -> str:
        await asyncio.sleep(0.01)
        return "ok"

    reply = calls(("work", {"n": "a"}), ("work", {"n": "b"}), ("work", {"n": "c"}))
    agent = Agent(scripted(reply, "done"), tools=[Tool("work", work)], tool_execution=execution)
    seen: list[str] = []

    def on_event(event: Any) -> None:
        if event.type in ("tool_execution_start", "tool_execution_end"):
            seen.append(f"{event.type.split('_')[-1]} {event.call.arguments['n']}")

    agent.subscribe(on_event)
    await agent.prompt("go")
    assert seen == order


async def test_before_tool_call_can_block_and_replace(scripted):
    def before(call_, services):
        if call_.name == "danger":
            return Block("not allowed here")
        if call_.name == "add":
            return Replace({"a": 10, "b": 1})
        return None

    danger = Tool("danger", lambda args: pytest.fail("blocked tool ran"))
    reply = calls(("danger", {}), ("add", {"a": 1, "b": 1}))
    agent = Agent(scripted(reply, "done"), tools=[danger, add_tool()], before_tool_call=before)

    result = await agent.prompt("go")

    blocked, added = result.tool_results
    assert (blocked.content, blocked.is_error) == ("not allowed here", True)
    assert (added.content, added.is_error) == (11, False)


async def test_before_tool_call_accepts_dict_decisions(scripted):
    agent = Agent(
        scripted(call("add", a=1, b=2), "done"),
        tools=[add_tool()],
        before_tool_call=lambda c, s: {"block": True, "reason": "nope"},
    )
    result = await agent.prompt("go")
    assert result.tool_results[0].content == "nope"


async def test_after_tool_call_rewrites_the_result(scripted):
    async def after(call_, result: ToolResult):
        return {"content": f"<{result.content}>", "details": {"audited": True}}

    agent = Agent(
        scripted(call("add", a=1, b=2), "done"), tools=[add_tool()], after_tool_call=after
    )
    result = await agent.prompt("go")
    assert result.tool_results[0].content == "<3>"
    assert result.tool_results[0].details == {"audited": True}
    assert [m.content for m in agent.messages if m.role == "tool"] == ["<3>"]


async def test_a_raising_tool_becomes_an_error_result_and_the_loop_goes_on(scripted):
    def broken(args):
        raise RuntimeError("disk on fire")

    agent = Agent(scripted(call("broken"), "recovered"), tools=[Tool("broken", broken)])
    result = await agent.prompt("go")
    assert result.reason == "done"
    assert result.text == "recovered"
    (failed,) = result.tool_results
    assert failed.is_error
    assert failed.content == "disk on fire"  # what the model reads: the message
    assert failed.details == {"error_type": "RuntimeError"}  # the class, for the trace


async def test_a_tool_raising_without_a_message_is_named_by_its_class(scripted):
    def broken(args):
        raise KeyError

    agent = Agent(scripted(call("broken"), "recovered"), tools=[Tool("broken", broken)])
    (failed,) = (await agent.prompt("go")).tool_results
    assert (failed.content, failed.details) == ("KeyError", {"error_type": "KeyError"})


async def test_invalid_arguments_are_an_error_result(scripted):
    agent = Agent(scripted(call("add", a="two"), "ok"), tools=[add_tool()])
    result = await agent.prompt("go")
    (failed,) = result.tool_results
    assert failed.is_error
    assert failed.content.startswith("invalid arguments for add:")
    assert "'b' is a required property" in failed.content
    assert "'two' is not of type 'number'" in failed.content


class FirstResponseModel:
    """Answers with ``first`` until a tool result arrives, then with "ok"."""

    provider = "test"
    name = "first-response"

    def __init__(self, first: ModelResponse) -> None:
        self.first = first

    async def stream(self, messages, tools, settings):
        if messages[-1]["role"] == "tool":
            yield ResponseDone(ModelResponse(content="ok"))
        else:
            yield ResponseDone(self.first)


async def test_unparseable_arguments_are_an_error_result():
    request = ToolCallRequest("c1", "add", {}, arguments_error="Expecting value: line 1")
    model = FirstResponseModel(ModelResponse(tool_calls=[request], finish_reason="tool_calls"))
    agent = Agent(model, tools=[add_tool()])
    result = await agent.prompt("go")
    (failed,) = result.tool_results
    assert failed.is_error
    assert failed.content == "invalid arguments: Expecting value: line 1"
    assert result.text == "ok"


async def test_unknown_tool_is_an_error_result(scripted):
    agent = Agent(scripted(call("nope"), "ok"), tools=[add_tool()])
    result = await agent.prompt("go")
    (failed,) = result.tool_results
    assert failed.is_error
    assert failed.content == "unknown tool 'nope' (available: add)"
    assert result.text == "ok"


async def test_max_steps_ends_the_turn_with_a_reason(scripted):
    agent = Agent(scripted(call("add", a=1, b=1)), tools=[add_tool()], max_steps=3)
    events = recorder(agent)
    result = await agent.prompt("loop forever")
    assert result.reason == "max_steps"
    assert result.steps == 3
    assert len(result.tool_results) == 3
    assert events[-2].type == "turn_end" and events[-2].reason == "max_steps"


async def test_abort_during_a_slow_tool(scripted):
    saw_cancel = asyncio.Event()
    started = asyncio.Event()

    async def slow(args):
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            saw_cancel.set()
            raise

    agent = Agent(
        scripted(calls(("slow", {}), ("add", {"a": 1, "b": 1})), "never"),
        tools=[Tool("slow", slow), add_tool()],
    )
    events = recorder(agent)
    agent.follow_up("queued for later")
    task = asyncio.create_task(agent.prompt("go"))
    await started.wait()
    agent.abort()
    result = await task

    assert saw_cancel.is_set()
    assert result.reason == "aborted"
    # every call has a result, so the transcript stays valid for the next model call
    assert [m.role for m in agent.messages] == ["user", "assistant", "tool", "tool"]
    slow_result = next(m for m in agent.messages if m.role == "tool" and m.name == "slow")
    assert slow_result.is_error
    # well-formed event sequence: every start has its end, turn_end then agent_end
    names = types(events)
    assert names.count("tool_execution_start") == names.count("tool_execution_end") == 2
    assert names.count("message_start") == names.count("message_end")
    assert names[-2:] == ["turn_end", "agent_end"]
    assert events[-2].reason == "aborted"
    # the queued follow-up was not lost
    assert [m.content for m in agent.peek_queued_messages()] == ["queued for later"]


async def test_abort_during_the_model_call():
    started = asyncio.Event()

    async def slow_model(messages, tools, settings):
        started.set()
        await asyncio.sleep(30)
        return "late"

    agent = Agent(FunctionModel(slow_model, name="slow"))
    task = asyncio.create_task(agent.prompt("hi"))
    await started.wait()
    agent.abort()
    result = await task
    assert result.reason == "aborted"
    assert agent.messages[-1].finish_reason == "aborted"


async def test_cancelling_prompt_aborts_the_turn():
    started = asyncio.Event()

    async def slow_model(messages, tools, settings):
        started.set()
        await asyncio.sleep(30)

    agent = Agent(FunctionModel(slow_model, name="slow"))
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.1):
            await agent.prompt("hi")
    await asyncio.wait_for(agent.wait(), 1)
    assert not agent.is_busy


async def test_steering_is_delivered_after_the_tool_batch(scripted):
    seen: list[list[dict[str, Any]]] = []
    agent_ref: dict[str, Agent] = {}

    def tool(args):
        agent_ref["agent"].steer("actually, stop")
        return "tool done"

    def function(messages, tools, settings):
        seen.append(messages)
        if len(seen) == 1:
            return call("work")
        return f"last: {messages[-1]['content']}"

    agent = Agent(FunctionModel(function, name="t"), tools=[Tool("work", tool)])
    agent_ref["agent"] = agent
    result = await agent.prompt("start")
    roles = [m["role"] for m in seen[1]]
    assert roles == ["user", "assistant", "tool", "user"]
    assert result.text == "last: actually, stop"


async def test_follow_up_runs_when_the_agent_would_stop(scripted):
    model = FunctionModel(reply_sequence(lambda m: f"re: {m[-1]['content']}"), name="t")
    agent = Agent(model)
    events = recorder(agent)
    agent.follow_up("second")
    await agent.prompt("first")
    await agent.wait()
    assert [m.content for m in agent.messages] == ["first", "re: first", "second", "re: second"]
    assert types(events).count("turn_start") == 2
    assert types(events).count("agent_start") == 1


async def test_run_yields_one_turns_events(scripted):
    agent = Agent(scripted("hello"))
    seen = [event.type async for event in agent.run("hi")]
    assert seen[0] == "agent_start"
    assert seen[-2:] == ["turn_end", "agent_end"]
    assert "message_update" in seen


async def test_a_failing_subscriber_never_breaks_the_loop(scripted):
    agent = Agent(scripted("fine"))

    def bad(event):
        raise ValueError("boom")

    async def bad_async(event):
        raise ValueError("boom")

    agent.subscribe(bad)
    agent.subscribe(bad_async)
    result = await agent.prompt("hi")
    assert result.text == "fine"


async def test_usage_is_summed_per_turn(scripted):
    agent = Agent(scripted(call("add", a=1, b=1), "two"), tools=[add_tool()])
    result = await agent.prompt("one plus one")
    per_step = [m.usage for m in result.messages if m.role == "assistant"]
    assert all(u is not None for u in per_step)
    assert result.usage.input_tokens == sum(u.input_tokens for u in per_step)
    assert result.usage.output_tokens == sum(u.output_tokens for u in per_step)
    assert result.usage.output_tokens > 0


async def test_model_error_fails_the_turn():
    from agentcli.errors import RateLimited

    def function(messages, tools, settings):
        raise RateLimited("slow down", status_code=429)

    agent = Agent(FunctionModel(function, name="t"))
    events = recorder(agent)
    result = await agent.prompt("hi")
    assert result.reason == "failed"
    assert result.error_kind == "rate_limit"
    assert "error" in types(events)


async def test_length_cut_fails_its_tool_calls():
    request = ToolCallRequest("c1", "add", {"a": 1})
    model = FirstResponseModel(ModelResponse(tool_calls=[request], finish_reason="length"))
    agent = Agent(model, tools=[add_tool()])
    result = await agent.prompt("hi")
    (failed,) = result.tool_results
    assert failed.is_error
    assert "re-issue the call with complete arguments" in failed.content
    assert result.text == "ok"

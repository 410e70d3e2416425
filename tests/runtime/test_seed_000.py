"""Seed 000 (@yesimagent/core) items: to_model_output, caller tools, wait(timeout=),
tool_failed / tool_blocked, a turn's error as {name, message, cause}, duplicate tools."""

from __future__ import annotations

import asyncio
import textwrap
from typing import Any

import pytest

from agentcli.errors import AgentWaitTimeout, ProviderError, ToolConflictError
from agentcli.runtime import DIRECT_TOOL_CALL, Agent, Block, Tool

from .conftest import ScriptModel, call


async def test_to_model_output_projects_the_result_for_the_model_and_the_trace_keeps_it() -> None:
    rows = [{"id": i, "body": "x" * 50} for i in range(100)]
    search = Tool(
        "search",
        lambda args: rows,
        to_model_output=lambda result: f"{len(result.content)} rows; first id {rows[0]['id']}",
    )
    model = ScriptModel(call("search"), "found them")
    agent = Agent(model, tools=[search])
    ends = []
    agent.subscribe(lambda e: ends.append(e.result) if e.type == "tool_execution_end" else None)
    result = await agent.prompt("find")
    tool_message = model.seen[1][-1]
    assert tool_message["content"] == "100 rows; first id 0"  # what the model saw
    assert result.tool_results[0].content == rows  # the whole result in the turn's results
    assert ends[0].content == rows and ends[0].model_content == "100 rows; first id 0"


async def test_a_failed_result_is_not_projected() -> None:
    def broken(args):
        raise RuntimeError("disk full")

    model = ScriptModel(call("search"), "sorry")
    agent = Agent(model, tools=[Tool("search", broken, to_model_output=lambda r: "summary")])
    await agent.prompt("find")
    assert model.seen[1][-1]["content"] == "disk full"


async def program(args: dict[str, Any], ctx: Any) -> Any:
    """A code-mode-like caller tool: runs the model's Python program, whose only way out
    is ``await tools.<name>(**arguments)`` (a test program, not a sandbox)."""

    class Tools:
        def __getattr__(self, name: str) -> Any:
            async def run(**arguments: Any) -> Any:
                result = await ctx.call_tool(name, arguments)
                if result.is_error:
                    raise RuntimeError(result.content)
                return result.content

            return run

    source = "async def main(tools):\n" + textwrap.indent(args["code"], "    ")
    scope: dict[str, Any] = {"__builtins__": {"len": len, "RuntimeError": RuntimeError}}
    exec(compile(source, "<program>", "exec"), scope)
    return await scope["main"](Tools())


CODE = """\
total = await tools.add(a=2, b=3)
total = await tools.add(a=total, b=10)
await tools.send(text=f"total {total}")
return total
"""


def add_tool() -> Tool:
    return Tool("add", lambda args: args["a"] + args["b"])


async def test_a_caller_tool_reaches_tools_through_the_same_hooks_and_events() -> None:
    outbox = []
    send = Tool("send", lambda args: outbox.append(args["text"]) or "sent")
    model = ScriptModel(call("program", code=CODE), "done")
    hooked, events = [], []
    agent = Agent(
        model,
        tools=[Tool("program", program), add_tool(), send],
        tool_callers={"add": ["program"], "send": ["program", DIRECT_TOOL_CALL]},
        before_tool_call=lambda c, services: hooked.append((c.name, c.caller)),
        after_tool_call=lambda c, r: {"details": {"audited": True}},
    )
    agent.subscribe(
        lambda e: (
            events.append((e.type, e.call.name, e.call.caller))
            if e.type.startswith("tool_execution")
            else None
        )
    )
    result = await agent.prompt("add things and tell me")
    assert result.tool_results[0].content == 15
    assert outbox == ["total 15"]
    assert hooked == [
        ("program", None),
        ("add", "program"),
        ("add", "program"),
        ("send", "program"),
    ]
    assert events == [
        ("tool_execution_start", "program", None),
        ("tool_execution_start", "add", "program"),
        ("tool_execution_end", "add", "program"),
        ("tool_execution_start", "add", "program"),
        ("tool_execution_end", "add", "program"),
        ("tool_execution_start", "send", "program"),
        ("tool_execution_end", "send", "program"),
        ("tool_execution_end", "program", None),
    ]
    declared = [t["function"]["name"] for t in model.calls[0][1]]
    assert declared == ["program", "send"]  # add is reachable from the program only


async def test_tool_callers_refuse_calls_from_where_they_are_not_allowed() -> None:
    model = ScriptModel(
        call("add", a=1, b=2), call("program", code="return await tools.echo()"), "ok"
    )
    agent = Agent(
        model,
        tools=[Tool("program", program), add_tool(), Tool("echo", lambda args: "hi")],
        tool_callers={"add": ["program"]},
    )
    result = await agent.prompt("go")
    direct, nested = result.tool_results
    assert direct.is_error and direct.content == "tool 'add' is only reachable from program"
    assert nested.is_error
    assert "tool 'echo' may not be called from 'program' (tool_callers)" in nested.content


async def test_tool_failed_and_tool_blocked_come_before_the_calls_end() -> None:
    def broken(args):
        raise ValueError("bad input")

    model = ScriptModel(
        {"tool_calls": [{"name": "broken", "arguments": {}}, {"name": "guarded", "arguments": {}}]},
        "ok",
    )
    agent = Agent(
        model,
        tools=[Tool("broken", broken), Tool("guarded", lambda args: "ran")],
        before_tool_call=lambda c, s: Block("not now") if c.name == "guarded" else None,
        tool_execution="sequential",
    )
    seen = []
    agent.subscribe(
        lambda e: (
            seen.append((e.type, e.call.name, e.result.content))
            if e.type in ("tool_failed", "tool_blocked", "tool_execution_end")
            else None
        )
    )
    await agent.prompt("go")
    assert seen == [
        ("tool_failed", "broken", "bad input"),
        ("tool_execution_end", "broken", "bad input"),
        ("tool_blocked", "guarded", "not now"),
        ("tool_execution_end", "guarded", "not now"),
    ]


async def test_a_failed_turn_reports_name_message_and_cause() -> None:
    try:
        try:
            raise ConnectionResetError("peer reset")
        except ConnectionResetError as low:
            raise ProviderError("the provider hung up") from low
    except ProviderError as error:
        failure = error
    agent = Agent(ScriptModel(failure))
    ends = []
    agent.subscribe(lambda e: ends.append(e) if e.type == "turn_end" else None)
    result = await agent.prompt("hi")
    assert result.error_info is not None
    assert result.error_info.to_dict() == {
        "name": "ProviderError",
        "message": "the provider hung up",
        "cause": {"name": "ConnectionResetError", "message": "peer reset"},
    }
    assert ends[0].error_info == result.error_info
    assert agent.error_message == "the provider hung up"


def test_a_tool_name_given_twice_is_a_tool_conflict() -> None:
    with pytest.raises(ToolConflictError, match="tool 'add' is given twice"):
        Agent(ScriptModel("x"), tools=[add_tool(), add_tool()])
    agent = Agent(ScriptModel("x"))
    with pytest.raises(ToolConflictError):
        agent.tools = [add_tool(), add_tool()]


async def test_wait_with_a_timeout_raises_and_leaves_the_turn_running() -> None:
    gate = asyncio.Event()

    async def slow(messages):
        await gate.wait()
        return "finally"

    agent = Agent(ScriptModel(slow))
    agent.send("hi")
    await asyncio.sleep(0.01)
    with pytest.raises(AgentWaitTimeout, match=r"still busy after 0\.05s"):
        await agent.wait(timeout=0.05)
    assert agent.is_busy  # the timeout cancelled the wait, not the turn
    waiter = asyncio.create_task(agent.wait())
    await asyncio.sleep(0.01)
    waiter.cancel()  # cancelling a wait leaves the turn alone too
    with pytest.raises(asyncio.CancelledError):
        await waiter
    gate.set()
    await agent.wait(timeout=5)
    assert agent.messages[-1].content == "finally"


async def test_a_tool_callers_entry_naming_no_tool_fails_the_turn_clearly() -> None:
    agent = Agent(ScriptModel("hi"), tools=[add_tool()], tool_callers={"add": ["progrm"]})
    result = await agent.prompt("go")
    assert result.reason == "failed"
    assert result.error.startswith("tool_callers['add'] names 'progrm', which is not a tool")


def test_an_error_raised_from_itself_ends_the_cause_chain() -> None:
    from agentcli.runtime import TurnError

    error = ProviderError("truncated")
    error.__cause__ = error  # what `raise error from error` leaves
    assert TurnError.from_exception(error).to_dict() == {
        "name": "ProviderError",
        "message": "truncated",
    }

"""Seed 004 (pi-agent-core) items: thinking, session id, get_api_key, reset, state fields,
system-message sections, tool-loadout announcements, agent_loop, images, settling."""

from __future__ import annotations

import asyncio

import pytest

from agentcli.errors import AgentRuntimeError
from agentcli.models.offline import EchoModel
from agentcli.models.openai_model import OpenAICompatModel
from agentcli.runtime import (
    Agent,
    AgentContext,
    AgentLoopConfig,
    Tool,
    agent_loop,
    agent_loop_continue,
    system_message,
    user_message,
)
from fixtures.openai_server import Reply

from .conftest import ScriptModel, call


@pytest.fixture
async def loopback(openai_server):
    model = OpenAICompatModel("m", api_base=openai_server.base_url, api_key="static")
    yield model
    await model.aclose()


async def test_thinking_level_budgets_and_session_id_reach_the_model() -> None:
    model = ScriptModel("ok")
    agent = Agent(model, thinking_level="low", thinking_budgets={"low": 300}, session_id="s-1")
    await agent.prompt("hi")
    settings = model.calls[0][2]
    assert (settings.thinking_level, settings.thinking_budget, settings.session_id) == (
        "low",
        300,
        "s-1",
    )
    agent.thinking_level = "off"
    await agent.prompt("again")
    assert model.calls[1][2].thinking_level is None


async def test_thinking_goes_to_the_server_and_its_deltas_come_back_as_events(
    openai_server, loopback
) -> None:
    openai_server.enqueue(Reply(text="42", reasoning="let me think"))
    agent = Agent(loopback, thinking_level="medium", session_id="conv-7")
    thinking = []
    agent.subscribe(
        lambda e: (
            thinking.append(e.delta.text)
            if e.type == "message_update" and e.delta.type == "thinking_delta"
            else None
        )
    )
    result = await agent.prompt("what is the answer?")
    body = openai_server.requests[-1].body
    assert (body["reasoning_effort"], body["prompt_cache_key"]) == ("medium", "conv-7")
    assert "".join(thinking) == "let me think"
    assert result.messages[-1].thinking == "let me think"


async def test_get_api_key_is_awaited_before_each_request(openai_server, loopback) -> None:
    tokens = iter(["token-1", "token-2"])
    asked = []

    async def get_api_key(provider: str) -> str:
        asked.append(provider)
        return next(tokens)  # an expiring token, renewed between the requests

    openai_server.enqueue(
        Reply(tool_calls=[{"name": "clock", "arguments": {}}]), Reply(text="done")
    )
    agent = Agent(loopback, tools=[Tool("clock", lambda args: "noon")], get_api_key=get_api_key)
    await agent.prompt("what time is it?")
    assert asked == ["openai", "openai"]
    sent = [r.headers["authorization"] for r in openai_server.requests]
    assert sent == ["Bearer token-1", "Bearer token-2"]


async def test_state_fields_while_streaming_and_running_tools() -> None:
    gate = asyncio.Event()
    seen = {}

    async def slow_tool(args):
        seen["pending"] = agent.pending_tool_calls
        await gate.wait()
        return "ok"

    def during_stream(event):
        if event.type == "message_update":
            seen.setdefault("streaming", agent.streaming_message)

    agent = Agent(ScriptModel(call("slow"), "all done"), tools=[Tool("slow", slow_tool)])
    agent.subscribe(during_stream)
    assert not agent.is_streaming and agent.streaming_message is None
    running = asyncio.create_task(agent.prompt("go"))
    await asyncio.sleep(0.05)
    assert agent.is_streaming
    call_id = agent.messages[-1].tool_calls[0].id
    assert seen["pending"] == {call_id} and agent.pending_tool_calls == {call_id}
    gate.set()
    await running
    assert seen["streaming"].role == "assistant"
    assert (agent.is_streaming, agent.streaming_message, agent.pending_tool_calls) == (
        False,
        None,
        frozenset(),
    )
    assert agent.error_message is None


async def test_reset_starts_over() -> None:
    agent = Agent(ScriptModel(RuntimeError("boom"), "fine"), initial_state={"n": 0})
    await agent.prompt("first")
    assert agent.error_message == "boom"
    agent.state.update(n=5)
    agent.follow_up("later")
    agent.reset()
    assert (agent.messages, agent.peek_queued_messages(), agent.error_message) == ([], [], None)
    assert agent.state.get() == {"n": 0}
    assert agent.storage.read() == [e for e in agent.storage.read() if e.type == "state"]


async def test_system_sections_replace_named_parts_of_the_prompt() -> None:
    model = ScriptModel("ok")
    agent = Agent(model, instructions="You are helpful.")
    await agent.prompt(
        [system_message(sections={"skills": "<skills>a</skills>"}), user_message("one")]
    )
    await agent.prompt(
        [system_message(sections={"skills": "<skills>b</skills>"}), user_message("two")]
    )
    heads = [messages[0] for messages in model.seen]
    assert heads == [
        {"role": "system", "content": "You are helpful.\n\n<skills>a</skills>"},
        {"role": "system", "content": "You are helpful.\n\n<skills>b</skills>"},
    ]
    assert [m["role"] for m in model.seen[1]] == ["system", "user", "assistant", "user"]
    resumed = Agent(model, instructions="You are helpful.", storage=agent.storage)
    await resumed.prompt("three")  # the sections are replayed from the stored transcript
    assert model.seen[2][0]["content"].endswith("<skills>b</skills>")


async def test_a_changed_tool_loadout_is_announced_before_the_request() -> None:
    model = ScriptModel("ok")
    agent = Agent(model, tools=[Tool("a", lambda x: 1)], announce_tools=True)
    await agent.prompt("one")
    agent.tools = [Tool("a", lambda x: 1), Tool("b", lambda x: 2)]
    await agent.prompt("two")
    await agent.prompt("three")  # unchanged: nothing more to announce
    notes = [m for m in agent.messages if m.role == "system"]
    assert [m.content for m in notes] == ["The tools changed; now available: b."]
    assert notes[0].data == {"tools": ["a", "b"]}
    assert model.seen[1][-1] == {
        "role": "system",
        "content": "The tools changed; now available: b.",
    }
    assert model.seen[0] == [{"role": "user", "content": "one"}]


async def test_agent_loop_and_continue_yield_the_events_and_extend_the_context() -> None:
    context = AgentContext(system_prompt="Be brief.", tools=[Tool("add", lambda a: a["a"] + 1)])
    config = AgentLoopConfig(model=ScriptModel(call("add", a=1), "two", "three"))
    types = [e.type async for e in agent_loop("add one to one", context, config)]
    assert types[:2] == ["agent_start", "turn_start"] and types[-2:] == ["turn_end", "agent_end"]
    assert types.count("tool_execution_end") == 1
    assert [m.role for m in context.messages] == ["user", "assistant", "tool", "assistant"]
    with pytest.raises(AgentRuntimeError, match="cannot continue from an assistant message"):
        agent_loop_continue(context, config)
    context.messages.append(user_message("and again"))
    events = [e async for e in agent_loop_continue(context, config)]
    assert events[-2].type == "turn_end" and events[-2].message.content == "three"
    assert context.messages[-1].content == "three"


async def test_prompt_with_images_sends_image_parts() -> None:
    model = ScriptModel("a cat")
    agent = Agent(model)
    await agent.prompt(
        "What is in it?", images=[{"type": "image", "data": "QUJD", "mimeType": "image/jpeg"}]
    )
    assert model.seen[0][-1]["content"] == [
        {"type": "text", "text": "What is in it?"},
        {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,QUJD"}},
    ]


async def test_prompt_settles_only_after_awaited_agent_end_listeners() -> None:
    flushed = []

    async def flush(event):
        if event.type == "agent_end":
            await asyncio.sleep(0.02)
            flushed.append("flushed")

    agent = Agent(EchoModel())
    agent.subscribe(flush)
    await agent.prompt("hi")
    assert flushed == ["flushed"]
    assert not agent.is_streaming

"""The channel: typed pub-sub with the agent's "agent" and "stream" channels."""

from __future__ import annotations

import asyncio
from typing import Any

from agentcli.models.base import ResponseDone, TextDelta, ToolCallDelta
from agentcli.runtime.agent import Agent
from agentcli.runtime.channel import Channel
from agentcli.runtime.tools import Tool

from .conftest import ScriptModel, call


async def test_subscribe_emit_unsubscribe_in_order_with_async_listeners():
    channel = Channel()
    seen: list[tuple[str, Any]] = []

    async def slow(value: Any) -> None:
        await asyncio.sleep(0)
        seen.append(("slow", value))

    stop_fast = channel.subscribe("custom", lambda value: seen.append(("fast", value)))
    channel.subscribe("custom", slow)
    channel.subscribe("other", lambda value: seen.append(("other", value)))
    await channel.emit("custom", 1)
    stop_fast()
    stop_fast()  # twice is harmless
    await channel.emit("custom", 2)
    await channel.emit("nobody", 3)
    assert seen == [("fast", 1), ("slow", 1), ("slow", 2)]
    assert channel.has("custom") and not channel.has("nobody")


async def test_listener_errors_are_swallowed():
    channel = Channel()
    seen: list[int] = []

    def bad(value: int) -> None:
        raise ValueError("ui bug")

    async def bad_async(value: int) -> None:
        raise ValueError("ui bug")

    channel.subscribe("c", bad)
    channel.subscribe("c", bad_async)
    channel.subscribe("c", seen.append)
    await channel.emit("c", 1)
    channel.emit_nowait("c", 2)
    await asyncio.sleep(0)
    assert seen == [1, 2]


async def test_the_agent_channel_carries_every_event():
    agent = Agent(ScriptModel("hello"))
    via_channel: list[str] = []
    via_subscribe: list[str] = []
    agent.channel.subscribe("agent", lambda event: via_channel.append(event.type))
    agent.subscribe(lambda event: via_subscribe.append(event.type))
    await agent.prompt("hi")
    assert via_channel == via_subscribe
    assert via_channel[0] == "agent_start" and via_channel[-1] == "agent_end"


async def test_the_stream_channel_carries_every_part_of_every_step_in_order():
    model = ScriptModel(call("echo", text="x"), "all done")
    agent = Agent(model, tools=[Tool("echo", lambda a: a["text"])])
    parts: list[Any] = []
    agent.channel.subscribe("stream", parts.append)
    await agent.prompt("go")
    assert [type(p) for p in parts] == [ToolCallDelta, ResponseDone, TextDelta, ResponseDone]
    assert parts[2].text == "all done"
    assert parts[3].response.content == "all done"


async def test_stream_parts_are_not_replayed_to_late_subscribers():
    agent = Agent(ScriptModel("first", "second"))
    await agent.prompt("one")
    parts: list[Any] = []
    agent.channel.subscribe("stream", parts.append)
    await agent.prompt("two")
    assert [p.text for p in parts if isinstance(p, TextDelta)] == ["second"]


async def test_a_stream_listener_sees_parts_before_the_message_is_stored():
    agent = Agent(ScriptModel("streamed"))
    stored_when_seen: list[int] = []
    agent.channel.subscribe(
        "stream",
        lambda part: stored_when_seen.append(len(agent.messages)),
    )
    await agent.prompt("hi")
    assert stored_when_seen == [1, 1]  # only the user message was stored while streaming

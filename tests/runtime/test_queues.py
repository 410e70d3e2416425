"""Steering and follow-up queues: modes, peeking, clearing, and abort keeping them."""

from __future__ import annotations

import asyncio

import pytest

from agentcli.runtime.agent import Agent
from agentcli.runtime.messages import user_message
from agentcli.runtime.queues import MessageQueue

from .conftest import ScriptModel, user_texts


def echo_model() -> ScriptModel:
    return ScriptModel(lambda m: f"re: {m[-1]['content']}")


def test_message_queue_modes():
    queue = MessageQueue()
    queue.push([user_message("a"), user_message("b")])
    assert [m.content for m in queue.peek()] == ["a"]
    assert [m.content for m in queue.take()] == ["a"]
    queue.mode = "all"
    queue.push([user_message("c")])
    assert [m.content for m in queue.peek()] == ["b", "c"]
    assert [m.content for m in queue.take()] == ["b", "c"]
    assert queue.take() == [] and not queue
    with pytest.raises(ValueError, match="queue mode must be 'one-at-a-time' or 'all'"):
        queue.mode = "some"
    with pytest.raises(ValueError):
        Agent(ScriptModel("x"), steering_mode="batch")


async def test_steering_one_at_a_time_gives_each_message_its_own_step():
    model = echo_model()
    agent = Agent(model)
    agent.steer("s1")
    agent.steer("s2")
    result = await agent.prompt("go")
    assert result.steps == 2
    assert user_texts(model.seen[0]) == ["go", "s1"]
    assert user_texts(model.seen[1]) == ["go", "s1", "s2"]


async def test_steering_all_delivers_the_whole_queue_at_once():
    model = echo_model()
    agent = Agent(model, steering_mode="all")
    agent.steer("s1")
    agent.steer("s2")
    result = await agent.prompt("go")
    assert result.steps == 1
    assert user_texts(model.seen[0]) == ["go", "s1", "s2"]


async def test_follow_up_one_at_a_time_runs_a_turn_per_message():
    agent = Agent(echo_model())
    starts: list[str] = []
    agent.subscribe(lambda e: starts.append(e.turn_id) if e.type == "turn_start" else None)
    agent.follow_up("f1")
    agent.follow_up("f2")
    await agent.prompt("go")
    await agent.wait()
    assert len(starts) == 3
    assert [m.content for m in agent.messages if m.role == "user"] == ["go", "f1", "f2"]


async def test_follow_up_all_runs_one_turn_for_the_whole_queue():
    model = echo_model()
    agent = Agent(model, follow_up_mode="all")
    agent.follow_up("f1")
    agent.follow_up("f2")
    await agent.prompt("go")
    await agent.wait()
    assert len(model.calls) == 2
    assert user_texts(model.seen[1])[-2:] == ["f1", "f2"]


async def test_peek_respects_modes_and_prefers_steering():
    agent = Agent(ScriptModel("x"))
    assert agent.peek_queued_messages() == [] and not agent.has_queued_messages()
    agent.follow_up("f1")
    agent.follow_up("f2")
    assert [m.content for m in agent.peek_queued_messages()] == ["f1"]
    agent.follow_up_mode = "all"
    assert [m.content for m in agent.peek_queued_messages()] == ["f1", "f2"]
    agent.steer("s1")
    assert [m.content for m in agent.peek_queued_messages()] == ["s1"]
    assert agent.has_queued_messages()
    agent.clear_steering_queue()
    assert [m.content for m in agent.peek_queued_messages()] == ["f1", "f2"]
    agent.clear_follow_up_queue()
    assert not agent.has_queued_messages()
    agent.steer("s")
    agent.follow_up("f")
    agent.clear_all_queues()
    assert agent.peek_queued_messages() == []


async def test_abort_loses_no_queued_message():
    entered = asyncio.Event()

    async def slow(messages):
        entered.set()
        await asyncio.sleep(30)

    agent = Agent(ScriptModel(slow, "ok"))
    task = asyncio.create_task(agent.prompt("go"))
    await entered.wait()
    agent.steer("steer me")
    agent.follow_up("follow me")
    agent.abort()
    assert (await task).reason == "aborted"
    await agent.wait()
    # an aborted run does not poll follow-ups, and steering waits for the next turn
    assert [m.content for m in agent.peek_queued_messages()] == ["steer me"]
    agent.clear_steering_queue()
    assert [m.content for m in agent.peek_queued_messages()] == ["follow me"]

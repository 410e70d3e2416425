"""Sending while busy (defer / join / reject, trigger), run, continue_ and the pending wake,
interrupt, stop, wait, clear and set_model."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentcli.errors import AgentBusyError, AgentRuntimeError
from agentcli.runtime.agent import Agent
from agentcli.runtime.events import Event
from agentcli.runtime.plugins import Plugin
from agentcli.runtime.tools import Tool

from .conftest import ScriptModel, call, user_texts


class Gate:
    """A reply that waits until the test opens the gate."""

    def __init__(self, reply: Any) -> None:
        self.reply = reply
        self.entered = asyncio.Event()
        self.open = asyncio.Event()

    async def __call__(self, messages: list[dict[str, Any]]) -> Any:
        self.entered.set()
        await self.open.wait()
        return self.reply


def recorder(agent: Agent) -> list[Event]:
    events: list[Event] = []
    agent.subscribe(events.append)
    return events


def kinds(events: list[Event]) -> list[str]:
    return [e.type for e in events if e.type != "message_update"]


async def test_defer_queues_a_new_turn_that_the_running_turn_never_sees():
    gate = Gate("one")
    model = ScriptModel(gate, lambda m: f"re: {m[-1]['content']}")
    agent = Agent(model)
    events = recorder(agent)

    first = agent.send("first")
    await gate.entered.wait()
    second = agent.send("second")
    assert second != first
    assert [e.turn_id for e in events if e.type == "turn_queued"] == [second]
    gate.open.set()
    await agent.wait()

    assert user_texts(model.seen[0]) == ["first"]
    assert user_texts(model.seen[1]) == ["first", "second"]
    starts = [e.turn_id for e in events if e.type == "turn_start"]
    assert starts == [first, second]
    assert kinds(events).count("agent_start") == 1
    stored = [(e.data["type"], e.turn_id) for e in agent.storage.read() if e.type == "event"]
    assert ("turn_queued", second) in stored


async def test_join_adds_the_message_to_the_running_turns_next_step():
    gate = Gate("one")
    model = ScriptModel(gate, lambda m: f"re: {m[-1]['content']}")
    agent = Agent(model)
    events = recorder(agent)

    turn = agent.send("first")
    await gate.entered.wait()
    assert agent.send("extra", if_busy="join") == turn
    gate.open.set()
    await agent.wait()

    # the step was terminal, but joined input with a trigger gets its own step
    assert [e.turn_id for e in events if e.type == "turn_start"] == [turn]
    assert user_texts(model.seen[1]) == ["first", "extra"]
    assert [m.content for m in agent.messages] == ["first", "one", "extra", "re: extra"]
    assert all(e.turn_id == turn for e in agent.storage.read() if e.type == "message")


async def test_reject_raises_only_while_busy():
    gate = Gate("one")
    agent = Agent(ScriptModel(gate, "two"))
    agent.send("first", if_busy="reject")  # idle: it simply runs
    await gate.entered.wait()
    with pytest.raises(AgentBusyError):
        agent.send("second", if_busy="reject")
    with pytest.raises(AgentBusyError):
        agent.send("second", if_busy="reject", trigger=False)
    gate.open.set()
    await agent.wait()
    assert [m.content for m in agent.messages] == ["first", "one"]


async def test_an_unknown_if_busy_is_a_value_error():
    agent = Agent(ScriptModel("x"))
    with pytest.raises(ValueError, match="if_busy must be defer, join or reject"):
        agent.send("hi", if_busy="later")


async def test_untriggered_join_is_seen_by_the_next_step_without_adding_one():
    gate = Gate(call("work"))
    model = ScriptModel(gate, "done")
    agent = Agent(model, tools=[Tool("work", lambda args: "worked")])

    agent.send("go")
    await gate.entered.wait()
    assert agent.send("fyi", if_busy="join", trigger=False) is None
    gate.open.set()
    await agent.wait()

    assert len(model.calls) == 2
    assert user_texts(model.seen[1]) == ["go", "fyi"]
    assert [m.role for m in agent.messages] == ["user", "assistant", "tool", "user", "assistant"]


async def test_untriggered_join_on_a_terminal_step_is_recorded_but_not_answered():
    gate = Gate("only answer")
    model = ScriptModel(gate)
    agent = Agent(model)
    agent.send("go")
    await gate.entered.wait()
    agent.send("fyi", if_busy="join", trigger=False)
    gate.open.set()
    await agent.wait()
    assert len(model.calls) == 1
    assert [m.content for m in agent.messages] == ["go", "only answer", "fyi"]


async def test_untriggered_defer_is_seen_by_the_next_turn_only():
    gate = Gate(call("work"))
    model = ScriptModel(gate, "done", lambda m: f"re: {user_texts(m)}")
    agent = Agent(model, tools=[Tool("work", lambda args: "worked")])

    agent.send("go")
    await gate.entered.wait()
    agent.send("later", trigger=False)
    gate.open.set()
    await agent.wait()

    assert len(model.calls) == 2  # no turn of its own
    assert user_texts(model.seen[1]) == ["go"]  # not visible to the running turn
    assert agent.messages[-1].content == "later"  # recorded once the turn ended
    result = await agent.prompt("next")
    assert result.text == "re: ['go', 'later', 'next']"


async def test_untriggered_send_while_idle_records_at_once():
    agent = Agent(ScriptModel("x"))
    assert agent.send("note", trigger=False) is None
    assert not agent.is_busy
    assert [m.content for m in agent.messages] == ["note"]
    assert [e.type for e in agent.storage.read()] == ["message"]


async def test_run_yields_the_events_of_the_deferred_turn_only():
    gate = Gate("one")
    agent = Agent(ScriptModel(gate, "two"))
    agent.send("first")
    await gate.entered.wait()

    async def collect() -> list[Event]:
        return [event async for event in agent.run("second")]

    task = asyncio.create_task(collect())
    await asyncio.sleep(0)
    gate.open.set()
    events = await task
    names = kinds(events)
    assert names[0] == "turn_start"
    assert names[-2:] == ["turn_end", "agent_end"]
    assert {e.turn_id for e in events if e.type != "agent_end"} == {events[0].turn_id}
    assert events[-2].message.content == "two"


async def test_run_with_join_follows_the_running_turn_to_its_end():
    gate = Gate("one")
    agent = Agent(ScriptModel(gate, lambda m: f"re: {m[-1]['content']}"))
    turn = agent.send("first")
    await gate.entered.wait()

    async def collect() -> list[Event]:
        return [event async for event in agent.run("extra", if_busy="join")]

    task = asyncio.create_task(collect())
    await asyncio.sleep(0)
    gate.open.set()
    events = await asyncio.wait_for(task, 2)
    assert "turn_start" not in kinds(events)  # it had started before
    assert kinds(events)[-2:] == ["turn_end", "agent_end"]
    assert all(e.turn_id == turn for e in events if e.type != "agent_end")
    assert events[-2].message.content == "re: extra"


async def test_continue_starts_a_turn_with_its_prompt_when_idle():
    model = ScriptModel(lambda m: f"re: {user_texts(m)}")
    agent = Agent(model)
    events = recorder(agent)
    turn = agent.continue_("hello")
    assert isinstance(turn, str)
    await agent.wait()
    assert [e.turn_id for e in events if e.type == "turn_start"] == [turn]
    assert agent.messages[-1].content == "re: ['hello']"


async def test_continue_without_a_prompt_opens_on_what_is_stored():
    model = ScriptModel(lambda m: f"re: {user_texts(m)}")
    agent = Agent(model)
    agent.send("stored", trigger=False)
    agent.continue_()
    await agent.wait()
    # the stored input is seen once, with no placeholder message
    assert [m["role"] for m in model.seen[0]] == ["user"]
    assert agent.messages[-1].content == "re: ['stored']"


async def test_continue_on_an_empty_conversation_is_an_error():
    agent = Agent(ScriptModel("x"))
    with pytest.raises(AgentRuntimeError, match="nothing to continue"):
        agent.continue_()


async def test_prompts_merge_into_the_single_pending_wake():
    gate = Gate("one")
    model = ScriptModel(gate, lambda m: f"re: {m[-1]['content']}")
    agent = Agent(model)
    events = recorder(agent)
    agent.send("first")
    await gate.entered.wait()
    assert agent.continue_("check the logs") is None
    assert agent.continue_() is None
    assert agent.continue_("then report") is None
    gate.open.set()
    await agent.wait()

    assert len(model.calls) == 2  # one wake, one turn
    assert model.seen[1][-1] == {"role": "user", "content": "check the logs; then report"}
    assert kinds(events).count("turn_start") == 2
    assert kinds(events).count("turn_queued") == 0


async def test_a_wake_answers_input_that_joined_a_terminal_step():
    gate = Gate("answer one")
    model = ScriptModel(gate, lambda m: f"re: {m[-1]['content']}")
    agent = Agent(model)
    agent.send("first")
    await gate.entered.wait()
    agent.send("late news", if_busy="join", trigger=False)
    agent.continue_()
    gate.open.set()
    await agent.wait()

    assert [m.content for m in agent.messages] == [
        "first",
        "answer one",
        "late news",
        "re: late news",
    ]
    assert user_texts(model.seen[1]) == ["first", "late news"]  # seen once, no placeholder


async def test_the_wake_fires_after_deferred_turns():
    gate = Gate("one")
    model = ScriptModel(gate, lambda m: f"re: {m[-1]['content']}")
    agent = Agent(model)
    agent.send("first")
    await gate.entered.wait()
    agent.continue_("wake")
    agent.send("deferred")
    gate.open.set()
    await agent.wait()
    assert [m.content for m in agent.messages if m.role == "user"] == ["first", "deferred", "wake"]


async def test_interrupt_aborts_and_drops_everything_queued():
    gate = Gate("never")
    model = ScriptModel(gate, "later")
    agent = Agent(model)
    events = recorder(agent)
    running = asyncio.create_task(agent.prompt("first"))
    await gate.entered.wait()
    queued = asyncio.create_task(agent.prompt("second"))
    await asyncio.sleep(0)
    agent.continue_("wake me")
    agent.steer("steer")
    agent.follow_up("follow")

    agent.interrupt("user pressed Ctrl+C")
    first, second = await running, await queued
    await agent.wait()

    assert (first.reason, first.abort_reason) == ("aborted", "user pressed Ctrl+C")
    assert (second.reason, second.steps) == ("aborted", 0)
    assert not agent.has_queued_messages()
    assert len(model.calls) == 1  # neither the queued turn nor the wake ran
    assert [m.content for m in agent.messages if m.role == "user"] == ["first"]
    assert events[-2].type == "turn_end" and events[-2].abort_reason == "user pressed Ctrl+C"


async def test_abort_keeps_the_pending_wake():
    gate = Gate("never")
    agent = Agent(ScriptModel(gate, lambda m: f"re: {m[-1]['content']}"))
    agent.send("first")
    await gate.entered.wait()
    agent.continue_("still wanted")
    agent.abort()
    await agent.wait()
    assert agent.messages[-1].content == "re: still wanted"


async def test_stop_interrupts_stops_plugins_and_refuses_new_input():
    gate = Gate("never")
    seen: list[str] = []

    class Watcher(Plugin):
        name = "watcher"

        def init(self, agent: Agent) -> None:
            self.agent = agent
            seen.append("init")

        def stop(self) -> None:
            for attempt in (self.agent.continue_, self.agent.send):
                try:
                    attempt("too late")
                except AgentRuntimeError as error:
                    seen.append(error.message)

    agent = Agent(ScriptModel(gate, "ok"), plugins=[Watcher()])
    running = asyncio.create_task(agent.prompt("first"))
    await gate.entered.wait()
    agent.continue_("discarded")
    await agent.stop()
    assert (await running).reason == "aborted"
    assert seen == ["init", "Agent is stopping", "Agent is stopping"]
    assert not agent.is_busy
    # usable again afterwards: plugins are initialized anew
    assert (await agent.prompt("again")).text == "ok"
    assert seen[-1] == "init"


async def test_wait_returns_when_idle():
    agent = Agent(ScriptModel("ok"))
    await agent.wait()  # idle already
    agent.send("hi")
    assert agent.is_busy
    await agent.wait()
    assert not agent.is_busy
    assert agent.messages[-1].content == "ok"


async def test_clear_forgets_the_conversation_but_not_while_busy():
    gate = Gate("one")
    agent = Agent(ScriptModel(gate, "two"))
    agent.send("hi")
    await gate.entered.wait()
    with pytest.raises(AgentBusyError):
        agent.clear()
    gate.open.set()
    await agent.wait()
    agent.clear()
    assert agent.messages == []
    assert agent.storage.read() == []


async def test_set_model_takes_effect_on_the_next_step_and_is_recorded():
    second = ScriptModel("from b", name="b")
    holder: dict[str, Agent] = {}

    def switch(args: dict[str, Any]) -> str:
        holder["agent"].set_model(second)
        return "switched"

    first = ScriptModel(call("switch"), "never", name="a")
    agent = Agent(first, tools=[Tool("switch", switch)])
    holder["agent"] = agent
    result = await agent.prompt("go")

    assert result.text == "from b"
    assert [(m.provider, m.model) for m in result.messages if m.role == "assistant"] == [
        ("test", "a"),
        ("test", "b"),
    ]
    assert len(first.calls) == 1 and len(second.calls) == 1

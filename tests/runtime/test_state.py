"""agent.state: get/set/update, persisted as state entries, restored from storage."""

from __future__ import annotations

import json

import pytest

from agentcli.runtime.agent import Agent
from agentcli.runtime.plugins import Plugin
from agentcli.runtime.storage import JsonlStorage

from .conftest import ScriptModel


def test_get_set_update():
    agent = Agent(ScriptModel("ok"), initial_state={"version": 1})
    state = agent.state
    assert state.get() == {"version": 1}
    assert state.update({"user": "Alice"}, mood="calm") == {
        "version": 1,
        "user": "Alice",
        "mood": "calm",
    }
    assert state.get("user") == "Alice" and state["mood"] == "calm" and "version" in state
    assert state.get("missing", 0) == 0
    assert state.set(lambda current: {"count": len(current)}) == {"count": 3}
    with pytest.raises(TypeError, match="agent state must be a mapping"):
        state.set(["not", "a", "dict"])  # type: ignore[arg-type]


def test_changes_are_private_copies_persisted_as_state_entries():
    agent = Agent(ScriptModel("ok"))
    value = {"items": [1]}
    agent.state.set(value)
    value["items"].append(2)  # the caller's dict is not the state
    agent.state.get()["extra"] = True  # nor is what get() returned
    assert agent.state.get() == {"items": [1]}
    entries = [e for e in agent.storage.read() if e.type == "state"]
    assert [e.data for e in entries] == [{"items": [1]}]


async def test_state_is_restored_from_jsonl_else_initial_state(tmp_path):
    path = tmp_path / "session.jsonl"
    fresh = Agent(ScriptModel("ok"), storage=JsonlStorage(path), initial_state={"n": 0})
    assert fresh.state.get() == {"n": 0}  # nothing stored yet: the initial state

    fresh.state.update(user="Alice")
    await fresh.prompt("hi")
    fresh.state.update(n=5)
    kinds = [json.loads(line)["type"] for line in path.read_text().splitlines()]
    assert kinds.count("state") == 2

    again = Agent(ScriptModel("ok"), storage=JsonlStorage(path), initial_state={"n": 0})
    assert again.state.get() == {"n": 5, "user": "Alice"}
    assert [m.content for m in again.messages] == ["hi", "ok"]


async def test_plugins_read_and_write_state_during_turns():
    class Counter(Plugin):
        name = "counter"

        def init(self, agent: Agent) -> None:
            self.agent = agent

        def on_turn_finish(self, result) -> None:
            self.agent.state.update(turns=self.agent.state.get("turns", 0) + 1)

    agent = Agent(ScriptModel("ok"), plugins=[Counter()])
    await agent.prompt("one")
    await agent.prompt("two")
    assert agent.state.get("turns") == 2
    stored = [e for e in agent.storage.read() if e.type == "state"]
    assert [e.data["turns"] for e in stored] == [1, 2]
    assert all(e.turn_id for e in stored)  # written inside a turn: tagged with it


async def test_clear_keeps_the_state():
    agent = Agent(ScriptModel("ok"))
    agent.state.update(user="Alice")
    await agent.prompt("hi")
    agent.clear()
    assert agent.messages == []
    assert agent.state.get() == {"user": "Alice"}
    assert [(e.type, e.data) for e in agent.storage.read()] == [("state", {"user": "Alice"})]


async def test_state_changes_are_published_on_the_state_channel():
    agent = Agent(ScriptModel("ok"))
    seen: list[dict] = []
    agent.channel.subscribe("state", seen.append)
    agent.state.update(a=1)
    agent.state.update(b=2)
    assert seen == [{"a": 1}, {"a": 1, "b": 2}]


def test_a_state_kept_after_its_agent_is_gone_still_updates():
    """The state points back at its agent weakly (no cycle); once the agent is gone there is
    nothing to record the change in, and the state itself still works."""
    import gc

    state = Agent(ScriptModel([]), initial_state={"visits": 0}).state
    gc.collect()
    state.update(visits=1)
    assert state.get() == {"visits": 1}

"""Loading history from stored entries: repairs of tool calls stored without a result."""

from __future__ import annotations

from agentcli.runtime.agent import Agent
from agentcli.runtime.events import Event
from agentcli.runtime.history import MISSING_RESULT, load_history, repair_tool_results
from agentcli.runtime.messages import Message
from agentcli.runtime.storage import Entry, JsonlStorage
from agentcli.runtime.tools import ToolCall

from .conftest import ScriptModel


def assistant_calling(*ids: str) -> Message:
    return Message(role="assistant", tool_calls=[ToolCall(i, f"tool_{i}") for i in ids])


def result_for(call_id: str) -> Message:
    return Message(role="tool", content="ok", tool_call_id=call_id, name=f"tool_{call_id}")


def test_a_complete_history_is_returned_as_is():
    messages = [Message(role="user", content="hi"), assistant_calling("a"), result_for("a")]
    repaired, missing = repair_tool_results(messages)
    assert repaired is messages and missing == []


def test_missing_results_are_inserted_where_they_belong():
    messages = [
        Message(role="user", content="hi"),
        assistant_calling("a", "b"),
        result_for("a"),
        Message(role="user", content="next"),
        assistant_calling("c"),
    ]
    repaired, missing = repair_tool_results(messages)
    assert [c.id for c in missing] == ["b", "c"]
    assert [(m.role, m.tool_call_id) for m in repaired] == [
        ("user", None),
        ("assistant", None),
        ("tool", "a"),
        ("tool", "b"),
        ("user", None),
        ("assistant", None),
        ("tool", "c"),
    ]
    filled = repaired[3]
    assert (filled.content, filled.is_error, filled.name) == (MISSING_RESULT, True, "tool_b")
    assert len(messages) == 5  # the input list is not modified


def test_load_history_takes_messages_and_the_latest_state():
    entries = [
        Entry("state", {"n": 1}),
        Entry("message", Message(role="user", content="hi").to_dict()),
        Entry("event", {"type": "turn_start"}),
        Entry("state", {"n": 2}),
    ]
    loaded = load_history(entries)
    assert [m.content for m in loaded.messages] == ["hi"]
    assert loaded.state == {"n": 2} and loaded.repaired == []


async def test_an_unrecorded_tool_result_is_repaired_on_load_with_an_event(tmp_path):
    path = tmp_path / "crashed.jsonl"
    storage = JsonlStorage(path)
    # a session killed while its tool ran: the call is stored, its result is not
    storage.append(Entry("message", Message(role="user", content="deploy").to_dict()))
    storage.append(Entry("message", assistant_calling("call_1").to_dict()))
    storage.close()

    model = ScriptModel("it was interrupted; retrying later")
    agent = Agent(model, storage=JsonlStorage(path))
    events: list[Event] = []
    agent.subscribe(events.append)
    result = await agent.prompt("what happened?")

    assert [m["role"] for m in model.seen[0]] == ["user", "assistant", "tool", "user"]
    assert model.seen[0][2]["content"] == MISSING_RESULT
    repaired = [e for e in events if e.type == "tool_result_repaired"]
    assert [(e.call.id, e.turn_id) for e in repaired] == [("call_1", result.turn_id)]
    names = [e.type for e in events]
    assert names.index("turn_start") < names.index("tool_result_repaired")
    # the store keeps what actually happened: the repair is not written back
    stored = [e.data["role"] for e in JsonlStorage(path).read() if e.type == "message"]
    assert stored == ["user", "assistant", "user", "assistant"]
    again = Agent(ScriptModel("x"), storage=JsonlStorage(path))
    assert [m.role for m in again.messages] == ["user", "assistant", "tool", "user", "assistant"]


async def test_an_explicit_init_reports_repairs_once():
    storage_entries = [Entry("message", assistant_calling("x").to_dict())]
    agent = Agent(ScriptModel("ok"))
    for entry in storage_entries:
        agent.storage.append(entry)
    events: list[Event] = []
    agent.subscribe(events.append)
    await agent.init()
    await agent.init()
    await agent.prompt("hi")
    assert [e.type for e in events].count("tool_result_repaired") == 1
    assert events[0].turn_id is None

"""Entries, the memory and JSONL backends, and rebuilding an agent from a session file."""

from __future__ import annotations

import json

import pytest

from agentcli.runtime.agent import Agent
from agentcli.runtime.storage import Entry, JsonlStorage, MemoryStorage, StorageError
from agentcli.runtime.tools import Tool

from .conftest import call


def test_memory_storage_appends_reads_and_clears():
    storage = MemoryStorage()
    storage.append(Entry("message", {"role": "user", "content": "hi"}, turn_id="t1"))
    storage.append(Entry("state", {"x": 1}))
    assert [e.type for e in storage.read()] == ["message", "state"]
    storage.clear()
    assert storage.read() == []


def test_jsonl_round_trip(tmp_path):
    path = tmp_path / "session.jsonl"
    storage = JsonlStorage(path)
    first = Entry("message", {"role": "user", "content": "héllo"}, turn_id="t1")
    storage.append(first)
    storage.append(Entry("event", {"type": "turn_end"}, turn_id="t1"))
    storage.close()

    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    assert json.loads(lines[0])["data"]["content"] == "héllo"
    again = JsonlStorage(path).read()
    assert again[0].to_dict() == first.to_dict()


def test_a_corrupt_line_is_reported_with_its_number(tmp_path):
    path = tmp_path / "session.jsonl"
    good = json.dumps(Entry("state", {}).to_dict())
    path.write_text(f"{good}\n{{broken\n{good}\n", encoding="utf-8")
    with pytest.raises(StorageError) as info:
        JsonlStorage(path).read()
    assert f"{path}:2: corrupt session entry" in str(info.value)


def test_an_unknown_entry_type_is_reported(tmp_path):
    path = tmp_path / "session.jsonl"
    path.write_text('{"type": "nonsense", "data": 1}\n{"type": "state", "data": 1}\n')
    with pytest.raises(StorageError, match=r":1: corrupt session entry: unknown entry type"):
        JsonlStorage(path).read()


def test_a_torn_last_line_is_skipped(tmp_path):
    path = tmp_path / "session.jsonl"
    good = json.dumps(Entry("state", {"n": 1}).to_dict())
    path.write_text(f"{good}\n{good[:20]}", encoding="utf-8")
    assert len(JsonlStorage(path).read()) == 1


async def test_agent_resumes_from_jsonl(tmp_path, scripted):
    path = tmp_path / "session.jsonl"
    tool = Tool("add", lambda a: a["a"] + a["b"])
    first = Agent(
        scripted(call("add", a=1, b=2), "three"), tools=[tool], storage=JsonlStorage(path)
    )
    await first.prompt("1+2?")

    seen: list[list[dict]] = []

    def function(messages, tools, settings):
        seen.append(messages)
        return "still here"

    from agentcli.models.offline import FunctionModel

    second = Agent(FunctionModel(function, name="t"), tools=[tool], storage=JsonlStorage(path))
    assert [m.role for m in second.messages] == ["user", "assistant", "tool", "assistant"]
    await second.prompt("and now?")
    assert [m["role"] for m in seen[0]] == ["user", "assistant", "tool", "assistant", "user"]
    assert seen[0][2]["content"] == "3"
    kinds = [e.type for e in JsonlStorage(path).read()]
    assert kinds.count("message") == 6
    assert "event" in kinds

"""ctx.trace: nodes, logs, endings, the current node, events and the report list."""

from __future__ import annotations

import json
import threading

import pytest

from agentcli.assistant.trace import TraceEvent, TraceNode, TraceRecorder

NODE_KEYS = {
    "id",
    "parent_id",
    "label",
    "type",
    "icon",
    "description",
    "metadata",
    "status",
    "input",
    "output",
    "error",
    "logs",
    "started_at",
    "ended_at",
    "duration_ms",
}


class FakeClock:
    """A clock the test moves by hand (2024-01-01T00:00:00Z)."""

    def __init__(self) -> None:
        self.now = 1_704_067_200.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def trace(clock: FakeClock) -> TraceRecorder:
    return TraceRecorder(clock=clock)


def test_add_with_the_seed_option_dict(trace):
    node = trace.add(
        {"query": "input data"},
        {"label": "Processing", "type": "process", "icon": "play", "description": "d"},
    )
    assert isinstance(node, TraceNode)
    [entry] = trace.to_list()
    assert set(entry) == NODE_KEYS
    assert entry == {
        "id": "n1",
        "parent_id": None,
        "label": "Processing",
        "type": "process",
        "icon": "play",
        "description": "d",
        "metadata": {},
        "status": "running",
        "input": {"query": "input data"},
        "output": None,
        "error": None,
        "logs": [],
        "started_at": "2024-01-01T00:00:00.000Z",
        "ended_at": None,
        "duration_ms": None,
    }
    assert node.id == "n1" and node.status == "running"


def test_add_label_forms_and_keyword_overrides(trace):
    trace.add({"q": 1}, "Search")
    trace.add("Just a label")
    trace.add(
        {"q": 2}, {"label": "A", "type": "x", "metadata": {"m": 1}}, label="B", metadata={"n": 2}
    )
    trace.add(None, {"type": "hook"})
    trace.add()
    labels = [(n["label"], n["type"], n["input"]) for n in trace.to_list()]
    assert labels == [
        ("Search", None, {"q": 1}),
        ("Just a label", None, None),
        ("B", "x", {"q": 2}),
        ("hook", "hook", None),
        ("node", None, None),
    ]
    assert trace.to_list()[2]["metadata"] == {"m": 1, "n": 2}


def test_input_is_recorded_as_a_copy_and_made_json_ready(trace):
    data = {"items": [1]}
    trace.add({"data": data, "tags": {"a"}, "obj": object()}, "Step")
    data["items"].append(2)
    [entry] = trace.to_list()
    assert entry["input"]["data"] == {"items": [1]}
    assert entry["input"]["tags"] == "{'a'}"
    assert entry["input"]["obj"].startswith("<object object")
    json.dumps(trace.to_list())


def test_node_logs_levels_formatting_and_chaining(trace, clock):
    node = trace.add(None, "Step")
    clock.now += 1.5
    assert node.info("Step %d of %d", 1, 3).debug("x=%s", {"a": 1}).warn("plain") is node
    node.error(ValueError("boom"))
    node.info("no %s template", "extra", "args")
    node.info("Variable:", 42)
    logs = trace.to_list()[0]["logs"]
    assert [(entry["level"], entry["message"]) for entry in logs] == [
        ("info", "Step 1 of 3"),
        ("debug", "x={'a': 1}"),
        ("warn", "plain"),
        ("error", "boom"),
        ("info", "no %s template extra args"),  # too many args: joined, not lost
        ("info", "Variable: 42"),
    ]
    assert logs[0]["time"] == "2024-01-01T00:00:01.500Z"
    assert trace.to_list()[0]["status"] == "running"  # error() logs, it does not fail


def test_complete_with_output_and_duration(trace, clock):
    node = trace.add({"q": 1}, "Search")
    clock.now += 0.25
    assert node.complete({"status": "done"}) is node
    [entry] = trace.to_list()
    assert entry["status"] == "completed"
    assert entry["output"] == {"status": "done"}
    assert entry["ended_at"] == "2024-01-01T00:00:00.250Z"
    assert entry["duration_ms"] == 250
    assert entry["error"] is None


def test_fail_with_message_or_exception(trace):
    trace.add(None, "A").fail("Connection timeout")
    trace.add(None, "B").fail(TimeoutError())
    trace.add(None, "C").fail({"code": 1})
    errors = [(n["status"], n["error"]) for n in trace.to_list()]
    assert errors == [
        ("failed", "Connection timeout"),
        ("failed", "TimeoutError"),
        ("failed", '{"code": 1}'),
    ]


def test_the_first_ending_wins(trace):
    node = trace.add(None, "Step")
    node.fail("broken")
    node.complete({"late": True})
    other = trace.add(None, "Other").complete(1)
    other.fail("late failure")
    first, second = trace.to_list()
    assert (first["status"], first["error"], first["output"]) == ("failed", "broken", None)
    assert (second["status"], second["error"], second["output"]) == ("completed", None, 1)


def test_set_output_and_metadata_do_not_end_the_node(trace):
    node = trace.add(None, "Step")
    node.set_output({"results": 3}).set_metadata("duration", 1500).set_metadata("cache", True)
    [entry] = trace.to_list()
    assert entry["status"] == "running"
    assert entry["output"] == {"results": 3}
    assert entry["metadata"] == {"duration": 1500, "cache": True}


def test_children_and_parallel_nodes(trace):
    parent = trace.add({}, {"label": "Parent"})
    child = parent.add({}, {"label": "Child"})
    grandchild = child.add(label="Grandchild")
    side = parent.parallel(
        [
            {"input": {"source": "db"}, "option": {"label": "Database"}},
            {"input": {"source": "api"}, "option": {"label": "API"}},
        ]
    )
    assert [n.id for n in side] == ["n4", "n5"]
    parents = {n["label"]: n["parent_id"] for n in trace.to_list()}
    assert parents == {
        "Parent": None,
        "Child": parent.id,
        "Grandchild": child.id,
        "Database": parent.id,
        "API": parent.id,
    }
    assert grandchild.id == "n3"


def test_trace_level_calls_go_to_the_current_node(trace):
    trace.add(None, "First")
    second = trace.add(None, "Second")
    second.add(None, "Child")  # a child does not become current
    trace.info("to second").set_output({"o": 1}).set_metadata("k", "v").complete({"done": 1})
    first, second_entry, child = trace.to_list()
    assert first["logs"] == [] and first["status"] == "running"
    assert [entry["message"] for entry in second_entry["logs"]] == ["to second"]
    assert second_entry["output"] == {"done": 1}
    assert second_entry["metadata"] == {"k": "v"}
    assert second_entry["status"] == "completed"
    assert child["status"] == "running"


def test_trace_level_fail_targets_the_current_node(trace):
    trace.add(None, "Step")
    trace.fail("Operation failed")
    assert trace.to_list()[0]["error"] == "Operation failed"


def test_parallel_nodes_are_all_current(trace):
    nodes = trace.parallel(
        [
            {"input": {"url": "api1"}, "option": {"label": "API 1"}},
            {"input": {"url": "api2"}, "option": {"label": "API 2"}},
        ]
    )
    assert [n.id for n in nodes] == ["n1", "n2"]
    trace.warn("slow")
    assert [n["logs"][0]["message"] for n in trace.to_list()] == ["slow", "slow"]


def test_logs_without_a_node_become_entries_of_their_own(trace):
    trace.info("Starting process")
    trace.error("Tool %s failed: %s", "search", "timeout")
    entries = trace.to_list()
    assert [(e["type"], e["label"], e["status"]) for e in entries] == [
        ("log", "Starting process", "completed"),
        ("log", "Tool search failed: timeout", "completed"),
    ]
    assert entries[1]["logs"][0]["level"] == "error"
    trace.add(None, "Node")
    trace.debug("attached")
    assert len(trace) == 3


def test_mark_complete_ends_running_nodes(trace):
    trace.add(None, "Create", type="hook")
    trace.add(None, "Failed").fail("x")
    assert not trace.is_complete()
    trace.mark_complete()
    assert trace.is_complete()
    assert [n["status"] for n in trace.to_list()] == ["completed", "failed"]


def test_to_list_returns_copies(trace):
    trace.add({"q": 1}, "Step").info("hello")
    entries = trace.to_list()
    entries[0]["input"]["q"] = 2
    entries[0]["logs"].clear()
    assert trace.to_list()[0]["input"] == {"q": 1}
    assert len(trace.to_list()[0]["logs"]) == 1


def test_on_event_sees_every_change_in_order(clock):
    events: list[TraceEvent] = []
    trace = TraceRecorder(on_event=events.append, clock=clock)
    node = trace.add({"q": 1}, "Step")
    node.info("hi").set_output(1).set_metadata("k", 2).complete()
    trace.add(None, "Other").fail("bad")
    assert [(e.kind, e.node["id"]) for e in events] == [
        ("add", "n1"),
        ("log", "n1"),
        ("output", "n1"),
        ("metadata", "n1"),
        ("complete", "n1"),
        ("add", "n2"),
        ("fail", "n2"),
    ]
    assert events[1].log == {"level": "info", "message": "hi", "time": "2024-01-01T00:00:00.000Z"}
    assert events[0].node["status"] == "running"  # a snapshot, not the live record
    assert events[4].node["status"] == "completed"


def test_a_failing_on_event_callback_does_not_break_the_hook(clock, caplog):
    def broken(event: TraceEvent) -> None:
        raise RuntimeError("display crashed")

    trace = TraceRecorder(on_event=broken, clock=clock)
    trace.add(None, "Step").info("still recorded").complete()
    assert trace.to_list()[0]["status"] == "completed"
    assert "trace on_event callback failed" in caplog.text


def test_disabled_recorder_records_nothing_but_nodes_still_work(clock):
    events: list[TraceEvent] = []
    trace = TraceRecorder(on_event=events.append, clock=clock, enabled=False)
    node = trace.add({"q": 1}, "Step")
    node.info("x").add(None, "Child").complete()
    trace.info("loose")
    node.complete({"ok": True})
    assert node.status == "completed"
    assert node.to_dict()["output"] == {"ok": True}
    assert trace.to_list() == []
    assert events == []


def test_threads_record_every_node_with_unique_ids(trace):
    def work() -> None:
        for index in range(50):
            trace.add({"i": index}, "Step").info("log %d", index).complete()

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    entries = trace.to_list()
    assert len(entries) == 400
    assert len({entry["id"] for entry in entries}) == 400
    assert all(entry["status"] == "completed" and len(entry["logs"]) == 1 for entry in entries)

"""Result value types: stable key order, round trips, Yao compatibility, the summary."""

from __future__ import annotations

import json

import pytest

from agentcli.eval.results.codec import read_result, usage_dict
from agentcli.eval.results.model import (
    AssertionResult,
    CaseResult,
    CheckpointState,
    ToolCall,
    Trace,
    Turn,
    Usage,
    summarize,
)


def full_result() -> CaseResult:
    """A result with every optional field set."""
    return CaseResult(
        id="T1",
        status="failed",
        input=[{"role": "user", "content": "你好"}],
        output={"intent": "weather", "emoji": "☀️"},
        expected={"intent": "news"},
        duration_ms=1234,
        error='json_path $.intent: expected "news", got "weather"',
        assertions=[
            AssertionResult(
                type="json_path",
                passed=False,
                message='json_path $.intent: expected "news", got "weather"',
                expected="news",
                actual="weather",
                path="intent",
            ),
            AssertionResult(
                type="agent",
                passed=True,
                message="friendly",
                verdict={"passed": True, "reason": "friendly", "criteria": "be nice"},
            ),
        ],
        trace=Trace(
            completion='{"intent": "weather"}',
            tool_calls=[
                ToolCall(
                    id="call_1",
                    server="expense",
                    tool="submit",
                    arguments={"amount": 5},
                    result={"id": "E1"},
                ),
                ToolCall(id="call_2", tool="lookup", error="boom"),
            ],
            next={"data": 1},
            usage=Usage(input_tokens=10, output_tokens=5, cost=0.002),
            messages=[{"role": "assistant", "content": "hi"}],
            logs=[{"label": "step", "status": "done"}],
        ),
        metadata={"mode": "standard"},
        run=2,
        turns=[Turn(turn=1, input="hi")],
        checkpoints=[CheckpointState(id="greeting", reached=True)],
        attempts=2,
    )


def test_case_result_key_order_is_yao_shape():
    data = full_result().to_dict()
    assert list(data) == [
        "id",
        "status",
        "input",
        "output",
        "expected",
        "duration_ms",
        "error",
        "assertions",
        "trace",
        "metadata",
        "run",
        "turns",
        "checkpoints",
        "attempts",
    ]
    assert list(data["trace"]) == ["completion", "tool_calls", "next", "usage", "messages", "logs"]
    assert list(data["trace"]["tool_calls"][0]) == [
        "id",
        "server",
        "tool",
        "arguments",
        "result",
        "error",
    ]
    assert list(data["trace"]["usage"]) == ["input_tokens", "output_tokens", "total_tokens", "cost"]
    assert list(data["assertions"][0]) == [
        "type",
        "passed",
        "message",
        "expected",
        "actual",
        "path",
    ]
    assert list(data["assertions"][1]) == ["type", "passed", "message", "verdict"]


def test_optional_keys_are_left_out_when_empty():
    data = CaseResult(id="T1", status="passed", input="hi", output="hello").to_dict()
    assert list(data) == ["id", "status", "input", "output", "duration_ms", "assertions"]
    assert data["output"] == "hello"
    trace = Trace().to_dict()
    assert list(trace) == ["completion", "tool_calls", "next", "usage"]
    assert trace["usage"] == {
        "input_tokens": 0,
        "output_tokens": 0,
        "total_tokens": 0,
        "cost": None,
    }


def test_output_key_is_present_even_when_null():
    data = CaseResult(id="T1", status="error", error="agent failed").to_dict()
    assert "output" in data and data["output"] is None


def test_round_trip_through_json_is_lossless():
    original = full_result()
    text = json.dumps(original.to_dict(), ensure_ascii=False)
    restored = CaseResult.from_dict(json.loads(text))
    assert restored == original
    assert restored.to_dict() == original.to_dict()
    assert "你好" in text and "☀️" in text


def test_usage_gets_total_tokens():
    usage = Trace.from_dict({"usage": {"input_tokens": 3, "output_tokens": 4}}).usage
    assert usage_dict(usage) == {
        "input_tokens": 3,
        "output_tokens": 4,
        "total_tokens": 7,
        "cost": None,
    }
    assert Trace.from_dict({"usage": {"total_tokens": 9}}).usage.total_tokens == 9
    assert usage_dict(Usage(1, 2) + Usage(total=9)).get("total_tokens") == 12


def test_unknown_status_is_rejected():
    with pytest.raises(ValueError, match="unknown case status 'ok'"):
        CaseResult(id="T1", status="ok")


def test_reads_a_yao_report_result():
    yao = {
        "id": "T001",
        "status": "passed",
        "input": "Hello",
        "output": "Hi there",
        "duration_ms": 812,
        "trace": {
            "completion": {"role": "assistant", "content": "Hi there", "model": "gpt-4o"},
            "tool_calls": [{"toolcall_id": "c1", "server": "tools", "tool": "setup"}],
        },
    }
    result = CaseResult.from_dict(yao)
    assert result.trace is not None
    assert result.trace.completion == "Hi there"
    assert result.trace.tool_calls[0].id == "c1"
    assert result.trace.tool_calls[0].tool == "setup"
    assert result.assertions == []


def test_yao_multimodal_completion_keeps_its_text():
    trace = Trace.from_dict(
        {"completion": {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}}
    )
    assert trace.completion == "a\nb"


def statuses(*names: str) -> list[CaseResult]:
    """Results with the given statuses."""
    return [CaseResult(id=f"T{i}", status=s) for i, s in enumerate(names)]


def test_summary_excludes_skipped_from_pass_rate():
    results = statuses("passed", "passed", "failed", "skipped", "skipped", "error", "timeout")
    summary = summarize(results, agent_id="expense", connector="scripted", duration_ms=4200)
    assert summary.to_dict() == {
        "total": 7,
        "passed": 2,
        "failed": 1,
        "skipped": 2,
        "errors": 1,
        "timeouts": 1,
        "duration_ms": 4200,
        "agent_id": "expense",
        "connector": "scripted",
        "pass_rate": 40.0,
    }
    assert list(summary.to_dict()) == [
        "total",
        "passed",
        "failed",
        "skipped",
        "errors",
        "timeouts",
        "duration_ms",
        "agent_id",
        "connector",
        "pass_rate",
    ]


def test_summary_pass_rate_rounds_to_two_decimals():
    summary = summarize(
        statuses("passed", "failed", "failed"), agent_id="a", connector="c", duration_ms=0
    )
    assert summary.pass_rate == 33.33


@pytest.mark.parametrize("names", [(), ("skipped", "skipped")])
def test_summary_with_nothing_run_has_zero_pass_rate(names):
    summary = summarize(statuses(*names), agent_id="a", connector="c", duration_ms=0)
    assert summary.pass_rate == 0.0
    assert summary.total == len(names)


def test_unknown_fields_are_kept_and_written_back_after_the_known_ones():
    data = {
        "id": "T1",
        "status": "passed",
        "input": "hi",
        "output": "hello",
        "duration_ms": 3,
        "assertions": [{"type": "contains", "passed": True, "message": "", "score": 0.9}],
        "trace": {
            "completion": "hello",
            "tool_calls": [],
            "next": None,
            "usage": {"input_tokens": 1, "output_tokens": 2, "total_tokens": 3, "cost": None},
            "model": "m-1",
        },
        "from_a_newer_release": {"x": [1]},
    }
    result = CaseResult.from_dict(data)
    assert result.source is None  # the typed value says everything the record said
    assert result.extra == {"from_a_newer_release": {"x": [1]}}
    assert result.trace is not None and result.trace.extra == {"model": "m-1"}
    assert result.assertions[0].extra == {"score": 0.9}
    assert result.to_dict() == data and list(result.to_dict()) == list(data)


def test_a_record_the_typed_value_cannot_reproduce_is_written_back_as_read():
    yao = {"id": "T1", "status": "passed", "trace": {"completion": {"content": "Hi"}}}
    result, notes = read_result(yao)
    assert notes == [] and result.trace is not None and result.trace.completion == "Hi"
    assert result.to_dict() is yao
    wrong, notes = read_result({"id": "T2", "status": "passed", "run": "one"})
    assert wrong.run is None and notes == ['run is "one" (not a whole number >= 1: ignored)']
    assert wrong.to_dict() == {"id": "T2", "status": "passed", "run": "one"}


def test_steps_stop_reason_and_error_type_are_written_when_known_and_read_back():
    call = ToolCall(id="c1", tool="lookup", error="Order not found", error_type="ValueError")
    trace = Trace(completion="", tool_calls=[call], steps=20, stop_reason="max_steps")
    data = trace.to_dict()
    assert (data["steps"], data["stop_reason"]) == (20, "max_steps")
    assert data["tool_calls"][0]["error_type"] == "ValueError"
    assert Trace.from_dict(json.loads(json.dumps(data))) == trace
    # a turn that answered ("done") is the usual case: its stop reason is left out
    answered = Trace(steps=2, stop_reason="done").to_dict()
    assert answered["steps"] == 2 and "stop_reason" not in answered
    # a call that did not raise has no error_type key (older files read and write back alike)
    assert "error_type" not in ToolCall(id="c2", tool="t", error="x").to_dict()


def test_a_step_count_that_is_not_a_whole_number_is_ignored_with_a_note():
    result, notes = read_result(
        {"id": "x", "status": "failed", "trace": {"completion": "", "steps": "many"}}
    )
    assert result.trace is not None and result.trace.steps is None
    assert notes == ['trace.steps is "many" (not a whole number >= 0: ignored)']


def test_attribution_is_written_only_when_set_and_read_back():
    plain = CaseResult(id="a", status="failed")
    assert "attribution" not in plain.to_dict()
    blamed = CaseResult(id="a", status="error", attempts=2, attribution="infra")
    data = blamed.to_dict()
    assert list(data)[-2:] == ["attempts", "attribution"]
    back, notes = read_result(json.loads(json.dumps(data)))
    assert back.attribution == "infra" and notes == [] and back.source is None
    odd, notes = read_result({**data, "attribution": "gremlins"})
    assert odd.attribution is None and odd.source is not None  # written back as it was read
    assert notes and "attribution" in notes[0]


def test_tags_are_written_only_when_a_case_has_them_and_read_back():
    tagged = CaseResult(id="t", status="passed", tags=["smoke", "db"])
    assert tagged.to_dict()["tags"] == ["smoke", "db"]
    assert CaseResult.from_dict(tagged.to_dict()) == tagged
    assert "tags" not in CaseResult(id="u", status="passed").to_dict()


def test_tags_that_are_not_a_list_of_text_are_ignored_with_a_note():
    from agentcli.eval.results.codec import read_result

    result, notes = read_result({"id": "t", "status": "passed", "tags": "smoke"})
    assert result.tags == []
    assert any("tags" in note for note in notes)

"""Sample results files for the viewer's tests, written by the real JSON Lines writer."""

from __future__ import annotations

from pathlib import Path

from agentcli.assistant.request import ToolCall
from agentcli.eval.reports import writer_for
from agentcli.eval.results.model import (
    AssertionResult,
    CaseResult,
    CheckpointState,
    RunHeader,
    RunSummary,
    Trace,
    Turn,
    Usage,
    summarize,
)

HOSTILE = "<script>alert(1)</script>"


def write_run(
    path: Path,
    results: list[CaseResult],
    *,
    started: str = "2026-12-01T10:00:00+00:00",
    agent: str = "weather",
    connector: str = "scripted",
    options: dict | None = None,
    finished: bool = True,
    stability: list[dict] | None = None,
) -> Path:
    """A results file of ``results`` (without its summary line unless ``finished``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = writer_for(path)
    metadata = {"started_at": started, "version": "test", "options": options or {}}
    writer.open(RunHeader(metadata=metadata))
    for result in results:
        writer.add(result)
    if finished:
        summary = summarize(results, agent_id=agent, connector=connector, duration_ms=1234)
        writer.close(summary, stability)
    else:
        writer.abandon()
    return path


def forecast(case_id: str = "paris", *, status: str = "passed", **fields) -> CaseResult:
    """A single-turn result with a tool call, two assertions and usage."""
    passed = status == "passed"
    output = "The forecast for Paris is sunny" if passed else "I cannot say"
    defaults = dict(
        input="What's the weather in Paris?",
        output=output,
        duration_ms=42.0,
        assertions=[
            AssertionResult(
                "contains",
                passed,
                "output contains the forecast" if passed else "expected output to contain 'sunny'",
                expected="sunny",
                actual=output,
            ),
            AssertionResult(
                "tool_called", True, "get_forecast was called", expected="get_forecast"
            ),
        ],
        trace=Trace(
            completion=output,
            tool_calls=[
                ToolCall("c1", "weather", "get_forecast", {"city": "Paris"}, {"sky": "sunny"})
            ],
            usage=Usage(input_tokens=100, output_tokens=20, cost=0.0012, model="gpt-test"),
        ),
        attribution=None if passed else "agent",
    )
    defaults.update(fields)
    return CaseResult(id=case_id, status=status, **defaults)  # type: ignore[arg-type]


def dynamic(case_id: str = "order") -> CaseResult:
    """A dynamic case: two turns with the simulator's reasoning and a checkpoint."""
    return CaseResult(
        id=case_id,
        status="passed",
        input="I want a latte",
        output="Your latte is ordered",
        duration_ms=80.0,
        turns=[
            Turn(1, "I want a latte", "What size?", "What size?", reasoning="start with the order"),
            Turn(
                2,
                "Large, please",
                "Your latte is ordered",
                "Your latte is ordered",
                tool_calls=[ToolCall("t1", "shop", "place_order", {"size": "large"}, "ok")],
                checkpoints_reached=["ordered"],
                reasoning="the agent asked the size: answer it",
            ),
        ],
        checkpoints=[CheckpointState("ordered", True, 2, True, True, "order placed")],
        helper_usage={"simulator": Usage(input_tokens=50, output_tokens=10, cost=0.0005)},
    )


def sample_folder(root: Path) -> Path:
    """A runs folder: a base run, a newer one with a regression, a matrix, an unfinished
    run with repeats, and a case file that is not results."""
    write_run(
        root / "base.jsonl",
        [forecast("paris"), forecast("rome", tags=["smoke"]), dynamic()],
        started="2026-12-01T10:00:00+00:00",
    )
    write_run(
        root / "nested" / "new.jsonl",
        [
            forecast("paris", status="failed", tags=["smoke", "slow"]),
            forecast("rome", tags=["smoke"]),
            dynamic(),
            forecast(HOSTILE, status="error", error=f"boom {HOSTILE}", attribution="infra"),
        ],
        started="2026-12-01T11:00:00+00:00",
    )
    write_run(
        root / "matrix.jsonl",
        [
            forecast("paris", connector="scripted"),
            forecast("paris", connector="echo", status="failed"),
            forecast("rome", connector="scripted"),
            forecast("rome", connector="echo"),
        ],
        started="2026-12-01T09:00:00+00:00",
        connector="scripted",
        options={"connectors": ["scripted", "echo"]},
    )
    write_run(
        root / "repeats.jsonl",
        [forecast("paris", run=1), forecast("paris", run=2, status="failed")],
        started="2026-12-01T08:00:00+00:00",
        finished=False,
    )
    (root / "cases.jsonl").write_text('{"id": "a", "input": "hi"}\n', encoding="utf-8")
    return root


def summary_of(results: list[CaseResult]) -> RunSummary:
    """The summary the writer would close ``results`` with."""
    return summarize(results, agent_id="weather", connector="scripted", duration_ms=1234)

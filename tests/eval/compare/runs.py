"""Building results for comparison tests: typed results, and results files written by the
real writers (so the reader reads them as it reads any run)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentcli.eval.reports import writer_for
from agentcli.eval.results.model import (
    AssertionResult,
    CaseResult,
    RunHeader,
    ToolCall,
    Trace,
    Usage,
    summarize,
)


def result(
    case_id: str,
    status: str = "passed",
    *,
    output: Any = "ok",
    run: int | None = None,
    duration_ms: float = 100,
    calls: list[ToolCall] | None = None,
    tokens: int = 10,
    cost: float | None = None,
    message: str = "",
) -> CaseResult:
    """One result; a failed one carries a failed assertion with ``message``."""
    assertions = [AssertionResult("contains", status == "passed", message=message)]
    trace = Trace(
        completion=output if isinstance(output, str) else "",
        tool_calls=list(calls or []),
        usage=Usage(input_tokens=tokens, output_tokens=0, cost=cost),
    )
    return CaseResult(
        id=case_id,
        status=status,  # type: ignore[arg-type]
        input="question",
        output=output,
        duration_ms=duration_ms,
        assertions=assertions,
        trace=trace,
        run=run,
    )


def repeats(case_id: str, passed: int, runs: int) -> list[CaseResult]:
    """``runs`` runs of a case, the first ``passed`` of them passing."""
    return [
        result(case_id, "passed" if number <= passed else "failed", run=number)
        for number in range(1, runs + 1)
    ]


def write_run(path: Path, results: list[CaseResult], started_at: str | None = None) -> Path:
    """A results file of ``results`` in ``path``'s format (a header with ``started_at``)."""
    writer = writer_for(path, check=False)
    metadata = {"started_at": started_at} if started_at else {}
    writer.open(RunHeader(metadata=metadata))
    for item in results:
        writer.add(item)
    writer.close(summarize(results, agent_id="probe", connector="scripted", duration_ms=5))
    return path

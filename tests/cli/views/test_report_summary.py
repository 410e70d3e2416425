"""``agent report FILE`` without ``-o``: the summary of a results file at 80 columns."""

from __future__ import annotations

from agentcli.cli.views.report_summary import ResultsSummary
from agentcli.eval.results.model import CaseResult, RunSummary
from agentcli.eval.results.reader import LoadedReport
from tests.cli.views.blocks import rendered

RULE1 = "─" * 63


def _failed(index: int) -> CaseResult:
    return CaseResult(f"c{index}", "failed", error=f"wrong {index}", attribution="agent")


def test_a_finished_run_is_its_summary_and_the_first_failures():
    results = [CaseResult("ok", "passed"), *(_failed(i) for i in range(22))]
    summary = RunSummary(
        total=23, passed=1, failed=22, skipped=0, errors=0, timeouts=0,
        duration_ms=1500, agent_id="probe", connector="scripted", pass_rate=4.35,
    )  # fmt: skip
    lines = rendered(ResultsSummary(LoadedReport(results=results, summary=summary), "r.jsonl"))
    assert lines.splitlines() == [
        "",
        RULE1,
        "  Summary",
        RULE1,
        "  Agent:     probe",
        "  Connector: scripted",
        "  Total:     23",
        "  Passed:    1",
        "  Failed:    22",
        "  Pass Rate: 4.3%",
        "  Duration:  1.5s",
        "  Results:   r.jsonl",
        "",
        RULE1,
        "  Short Summary: 22 failing cases (22 agent)",
        RULE1,
        *(f"  FAILED  [c{i}] agent: wrong {i}" for i in range(20)),
        "  … and 2 more",
        "",
        "  Render it: agent report r.jsonl -o report.html",
    ]


def test_an_unfinished_run_is_counted_from_its_results():
    results = [CaseResult("a", "passed"), CaseResult("b", "error", error="boom")]
    lines = rendered(ResultsSummary(LoadedReport(results=results), "part.jsonl")).splitlines()
    assert lines[4:11] == [
        "  Agent:     -",
        "  Total:     2",
        "  Passed:    1",
        "  Failed:    0",
        "  Errors:    1",
        "  Pass Rate: 50.0%",
        "  Duration:  -",
    ]
    assert "  Short Summary: 1 failing case" in lines
    assert "  ERROR   [b]: boom" in lines

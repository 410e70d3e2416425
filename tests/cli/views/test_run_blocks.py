"""The blocks of a whole run (headings, notices, summary, stability table, banner, message
mode's answer) at a fixed width, exact text; rich rendering redacts secrets too."""

from __future__ import annotations

import pytest

from agentcli.cli.views.case_blocks import ResultLine
from agentcli.cli.views.run_blocks import (
    Banner,
    DirectOutput,
    Heading,
    Notice,
    StabilityTable,
    SummaryBlock,
)
from agentcli.eval.reports._view import format_percent
from agentcli.eval.results.model import CaseResult, RunSummary, ToolCall, Trace
from agentcli.secrets import refresh_secrets
from tests.cli.views.blocks import rendered
from tests.eval.probe import cases

RULE2 = "═" * 63
RULE1 = "─" * 63


def test_headings_are_a_title_between_rules():
    assert rendered(Heading("Agent Test", rule="═")) == f"\n{RULE2}\n  Agent Test\n{RULE2}\n"
    assert rendered(Heading("Running Tests")) == f"\n{RULE1}\n  Running Tests\n{RULE1}\n"


@pytest.mark.parametrize(
    ("level", "line"),
    [("info", "ℹ Agent: probe\n"), ("warning", "⚠ Agent: probe\n"), ("error", "✗ Agent: probe\n")],
)
def test_a_notice_is_marked_by_its_level(level, line):
    assert rendered(Notice("Agent: probe", level)) == line


SUMMARY = {
    "agent_id": "probe",
    "connector": "scripted",
    "total": 4,
    "passed": 1,
    "failed": 1,
    "skipped": 1,
    "errors": 0,
    "timeouts": 1,
    "pass_rate": 33.33,
    "duration_ms": 91_246,
}


def test_the_summary_leaves_out_zero_counts_and_ends_with_the_output():
    assert rendered(SummaryBlock(RunSummary(**SUMMARY), "out.jsonl")).splitlines() == [
        "",
        RULE1,
        "  Summary",
        RULE1,
        "  Agent:     probe",
        "  Connector: scripted",
        "  Total:     4",
        "  Passed:    1",
        "  Failed:    1",
        "  Skipped:   1",
        "  Timeouts:  1",
        "  Pass Rate: 33.3%",
        "  Duration:  1.5m",
        "",
        "  Output: out.jsonl",
    ]


def test_a_rate_short_of_100_is_never_shown_as_100():
    # one failure in 6,000 cases: 99.98%, not a rounded-up "100.0%" beside TESTS FAILED
    almost = {**SUMMARY, "total": 6000, "passed": 5999, "failed": 1, "skipped": 0}
    almost.update(timeouts=0, pass_rate=99.98)
    lines = rendered(SummaryBlock(RunSummary(**almost), None)).splitlines()
    assert "  Pass Rate: 99.98%" in lines
    assert format_percent(100.0) == "100.0%" and format_percent(0.004) == "0.004%"
    assert format_percent(99.99999) == "99.9999%" and format_percent(66.666) == "66.7%"


STABLE = {
    "runs_per_case": 5,
    "total_runs": 10,
    "stable": 1,
    "mostly_stable": 0,
    "unstable": 1,
    "highly_unstable": 0,
    "overall_pass_rate": 70.0,
    "mean_pass_rate": 70.0,
    "cases_below_threshold": ["b"],
    "min_pass_rate": 80.0,
}


def test_the_stability_table_lists_the_figures_and_the_cases_below_the_rate():
    assert rendered(StabilityTable(STABLE)).splitlines() == [
        "",
        "  Stability Analysis:",
        "    Runs/Case:       5",
        "    Total Runs:      10",
        "    Stable:          1",
        "    Mostly Stable:   0",
        "    Unstable:        1",
        "    Highly Unstable: 0",
        "    Overall Rate:    70.0%",
        "    Mean Case Rate:  70.0%",
        "    Below 80%:       b",
    ]
    # the cases below the rate line up with the figures, whatever the threshold's digits
    at_100 = rendered(StabilityTable({**STABLE, "min_pass_rate": 100.0})).splitlines()
    assert at_100[-1] == "    Below 100%:      b"


def test_a_summary_of_runs_holds_the_stability_table_before_the_output():
    summary = RunSummary(**SUMMARY, extra=STABLE)
    lines = rendered(SummaryBlock(summary, None)).splitlines()
    assert lines[-12:-10] == ["  Duration:  1.5m", ""]
    assert lines[-10:] == rendered(StabilityTable(STABLE)).splitlines()[1:]


def test_the_banner_says_the_verdict():
    assert rendered(Banner(True)) == f"\n{RULE2}\n  ✨ ALL TESTS PASSED ✨\n{RULE2}\n\n"
    assert rendered(Banner(False)) == f"\n{RULE2}\n  ❌ TESTS FAILED\n{RULE2}\n\n"


def test_direct_output_is_the_answer_then_the_tool_calls():
    trace = Trace(
        completion="",
        tool_calls=[
            ToolCall("c1", "probe", "add", {"a": 2}, 5),
            ToolCall("c2", "", "div", {"a": 1}, None, "division by zero"),
        ],
    )
    assert rendered(DirectOutput({"sum": 5}, trace)).splitlines() == [
        "{",
        '  "sum": 5',
        "}",
        "",
        "--- Tool Calls ---",
        '  probe/add → OK (args: {"a": 2})',
        '  div → ERR: division by zero (args: {"a": 1})',
    ]
    assert rendered(DirectOutput("Hello!", None, "turn aborted")) == "✗ turn aborted\nHello!\n"
    assert rendered(DirectOutput(None, None)) == ""


def test_rich_rendering_of_a_block_redacts_secrets(monkeypatch):
    monkeypatch.setenv("EXAMPLE_API_KEY", "zq7Xw2Lm9PvRt4KsB8nD")
    refresh_secrets()
    try:
        (case,) = cases({"id": "a", "input": "hi"})
        result = CaseResult(id="a", status="error", error="sent zq7Xw2Lm9PvRt4KsB8nD")
        assert rendered(ResultLine(case, result)).splitlines()[1] == "  └─ sent [redacted]"
        assert rendered(Notice("key zq7Xw2Lm9PvRt4KsB8nD", "error")) == "✗ key [redacted]\n"
    finally:
        monkeypatch.delenv("EXAMPLE_API_KEY")
        refresh_secrets()

"""The console view rendered into a StringIO, compared line for line (the rich way)."""

from __future__ import annotations

import io
import json
import re

import pytest
from rich.console import Console

from agentcli.cli.views.console import ConsoleView, format_duration, preview
from agentcli.cli.views.json_events import JsonEvents
from agentcli.eval.results.model import AssertionResult, CaseResult, RunSummary, ToolCall, Trace
from agentcli.eval.run.view import RunEvent
from tests.eval.probe import cases


def render(verbose: bool = False) -> str:
    out = io.StringIO()
    view = ConsoleView(
        Console(file=out, width=80, color_system=None), verbose=verbose, progress=False
    )
    case_a, case_b, case_c = cases(
        {"id": "greet", "input": "hello   there\nfriend"},
        {"id": "sum", "input": "add 2 3 " + "x" * 60},
        {"id": "slow", "input": "sleep"},
    )
    view.header()
    view.info("Agent: probe")
    view.section("Running Tests")
    view.on_event(
        RunEvent(
            "test_result",
            case=case_a,
            result=CaseResult(
                id="greet",
                status="passed",
                duration_ms=1234.5,
                output="Hello!",
                assertions=[AssertionResult("contains", True, 'output contains "Hello"')],
            ),
        )
    )
    view.on_event(
        RunEvent(
            "test_result",
            case=case_b,
            run=2,
            result=CaseResult(
                id="sum",
                status="failed",
                duration_ms=12,
                error='expected output to contain "6"',
                output={"sum": 5},
                trace=Trace(
                    completion="", tool_calls=[ToolCall("c1", "probe", "add", {"a": 2}, 5)]
                ),
                assertions=[AssertionResult("contains", False, 'expected output to contain "6"')],
            ),
        )
    )
    view.on_event(
        RunEvent(
            "test_result",
            case=case_c,
            result=CaseResult(
                id="slow", status="timeout", duration_ms=90_000, error="timed out after 90s"
            ),
        )
    )
    view.on_event(RunEvent("log", level="warning", message="after script failed"))
    view.summary(
        RunSummary(
            agent_id="probe",
            connector="scripted",
            total=3,
            passed=1,
            failed=1,
            skipped=0,
            errors=0,
            timeouts=1,
            pass_rate=33.33,
            duration_ms=91_246,
        ),
        "out.jsonl",
    )
    view.banner(False)
    return out.getvalue()


RULE2 = "═" * 63
RULE1 = "─" * 63


def test_console_view_plain():
    assert render().splitlines() == [
        "",
        RULE2,
        "  Agent Test",
        RULE2,
        "ℹ Agent: probe",
        "",
        RULE1,
        "  Running Tests",
        RULE1,
        "► [greet] hello there friend PASSED (1.2s)",
        "► [sum] Run 2: add 2 3 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx... FAILED (12ms)",
        '  └─ ✗ contains: expected output to contain "6"',
        '       actual: { "sum": 5 }',
        "► [slow] sleep TIMEOUT (1.5m)",
        "  └─ timed out after 90s",
        "⚠ after script failed",
        "",
        RULE1,
        "  Summary",
        RULE1,
        "  Agent:     probe",
        "  Connector: scripted",
        "  Total:     3",
        "  Passed:    1",
        "  Failed:    1",
        "  Timeouts:  1",
        "  Pass Rate: 33.3%",
        "  Duration:  1.5m",
        "",
        "  Output: out.jsonl",
        "",
        RULE2,
        "  ❌ TESTS FAILED",
        RULE2,
        "",
    ]


def test_console_view_verbose_shows_assertions_tools_and_output():
    lines = render(verbose=True).splitlines()
    start = lines.index("► [greet] hello there friend PASSED (1.2s)")
    assert lines[start + 1 : start + 3] == [
        '  │ ✓ contains output contains "Hello"',
        "  └─ Output: Hello!",
    ]
    sum_line = next(i for i, line in enumerate(lines) if line.startswith("► [sum]"))
    assert lines[sum_line + 1 : sum_line + 6] == [
        '  └─ expected output to contain "6"',
        '  │ ✗ contains expected output to contain "6"',
        '  │     actual: { "sum": 5 }',
        '  │ tool probe/add → OK (args: {"a": 2})',
        '  └─ Output: {"sum": 5}',
    ]


def test_no_color_means_no_escape_codes(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    out = io.StringIO()
    view = ConsoleView(Console(file=out, width=80, force_terminal=True), progress=False)
    view.banner(True)
    # NO_COLOR drops colours (SGR 30-39); bold may stay, as the convention allows
    assert not re.search(r"\x1b\[[0-9;]*(3[0-9])m", out.getvalue())
    assert "✨ ALL TESTS PASSED ✨" in out.getvalue()


def test_format_duration_and_preview():
    assert [format_duration(v) for v in (0.5, 12, 999, 1000, 59_999, 60_000)] == [
        "500µs",
        "12ms",
        "999ms",
        "1.0s",
        "60.0s",
        "1.0m",
    ]
    assert preview("a  b\n c") == "a b c"
    assert preview("x" * 60) == "x" * 47 + "..."


def test_json_events_are_one_object_per_line():
    out = io.StringIO()
    events = JsonEvents(out)
    (case,) = cases({"id": "a", "input": "hi"})
    events.on_event(RunEvent("test_start", case=case))
    events.on_event(
        RunEvent(
            "test_result", case=case, result=CaseResult(id="a", status="passed", duration_ms=3)
        )
    )
    events.summary(RunSummary.from_dict({"total": 1}), "x.jsonl")
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert lines == [
        {"type": "test_start", "id": "a", "input": "hi"},
        {"type": "test_result", "id": "a", "status": "passed", "duration_ms": 3},
        {"type": "summary", "total": 1, "failures": []},
    ]


def test_lines_under_a_live_progress_bar_are_batched_but_all_printed_in_order():
    out = io.StringIO()
    view = ConsoleView(Console(file=out, width=80, force_terminal=True), progress=True)
    view.start_progress(50)
    for index in range(50):
        (case,) = cases({"id": f"c{index}", "input": "hi"})
        result = CaseResult(id=f"c{index}", status="passed", duration_ms=1)
        view.on_event(RunEvent("test_result", case=case, result=result))
    view.stop_progress()
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue())
    ids = re.findall(r"► \[(c\d+)\]", text)
    assert ids == [f"c{i}" for i in range(50)]


def test_verbose_shows_model_retries():
    out = io.StringIO()
    view = ConsoleView(
        Console(file=out, width=100, color_system=None), verbose=True, progress=False
    )
    (case,) = cases({"id": "r", "input": "hi"})
    retries = [{"attempt": 1, "kind": "rate_limit", "delay_s": 0.5, "error": "429"}]
    result = CaseResult(id="r", status="passed", duration_ms=3, trace=Trace(retries=retries))
    view.on_event(RunEvent("test_result", case=case, result=result))
    assert "  │ retried a model call after rate_limit (attempt 1, waited 0.5s)" in out.getvalue()


@pytest.mark.parametrize(
    ("environ", "bar"),
    [
        ({"TERM": "xterm-256color"}, True),
        ({"TERM": "xterm-256color", "TTY_INTERACTIVE": "0"}, False),  # rich's own switch
        ({"TERM": "dumb"}, False),
    ],
)
def test_the_live_bar_is_for_interactive_terminals_only(environ, bar):
    console = Console(file=io.StringIO(), width=80, force_terminal=True, _environ=environ)
    assert ConsoleView(console).show_progress is bar


def test_the_progress_bar_counts_passed_and_failed_and_gives_an_eta():
    out = io.StringIO()
    console = Console(file=out, width=100, color_system=None, force_terminal=True)
    view = ConsoleView(console, progress=True)
    view.start_progress(4)
    (case,) = cases({"id": "a", "input": "x"})
    for status in ("passed", "failed", "error"):
        result = CaseResult(id="a", status=status, duration_ms=5)  # type: ignore[arg-type]
        view.on_event(RunEvent("test_result", case=case, result=result))
    assert view._progress is not None
    shown = io.StringIO()
    Console(file=shown, width=100, color_system=None).print(view._progress.get_renderable())
    line = shown.getvalue().rstrip()
    assert re.fullmatch(r"  running ━+\S* +3/4 ✓ 1 ✗ 2 0:00:0\d ETA (-:--:--|0:00:0\d)", line), line
    view.stop_progress()
    assert view._progress is None


def test_no_progress_bar_off_a_terminal():
    view = ConsoleView(Console(file=io.StringIO(), width=80))  # a file: CI logs, a pipe
    view.start_progress(10)
    assert view._progress is None

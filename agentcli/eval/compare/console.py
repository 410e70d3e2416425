"""A ``RunDiff`` as console lines, each with a tone (the CLI maps tones to colours): the
full diff of ``agent diff``, or the summary an ``agent eval --baseline`` run ends with
(shown through the run's view)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .model import KIND_TITLES, CaseChange, ChangeKind, RunDiff, ToolChangeKind
from .words import (
    DETAIL_KINDS,
    KIND_MARKS,
    args_text,
    metric_text,
    outcome_text,
    source_text,
    tally_text,
)

__all__ = ["SUMMARY_CASES", "Line", "Tone", "console_lines", "summary_lines"]

Tone = Literal["heading", "plain", "good", "bad", "note", "dim"]

_KIND_TONES: dict[ChangeKind, Tone] = {
    "regression": "bad",
    "fix": "good",
    "still_failing": "note",
    "not_significant": "dim",
    "passing": "good",
    "added": "plain",
    "removed": "plain",
    "skipped": "dim",
}
_CALL_MARKS: dict[ToolChangeKind, str] = {"added": "+", "removed": "-", "changed": "~"}
_CALL_TONES: dict[ToolChangeKind, Tone] = {"added": "good", "removed": "bad", "changed": "note"}
_SUMMARY_LABELS: dict[ChangeKind, str] = {
    "regression": "Regression",
    "fix": "Fixed",
    "still_failing": "Still failing",
    "not_significant": "Not significant",
    "passing": "Passing",
    "added": "New",
    "removed": "Removed",
    "skipped": "Skipped",
}
SUMMARY_CASES = 20  # cases of one kind a summary names; the rest are counted


@dataclass(frozen=True, slots=True)
class Line:
    """One console line and how it should look."""

    text: str
    tone: Tone = "plain"


def console_lines(diff: RunDiff) -> list[Line]:
    """The diff as lines (``agent diff``): the two runs, the cases by kind, then the changed
    outputs, tool calls and figures; the tally last."""
    lines = [
        Line("Comparing runs", "heading"),
        Line(f"  Base: {source_text(diff.base)}"),
        Line(f"  New:  {source_text(diff.new)}"),
    ]
    lines.extend(Line(f"  note: {note}", "dim") for note in diff.notes)
    for kind in DETAIL_KINDS:
        lines.extend(_kind_lines(diff, kind))
    lines.extend(_detail_lines(diff))
    lines.append(Line(""))
    lines.append(Line(tally_text(diff), "bad" if diff.regressions else "good"))
    return lines


def summary_lines(diff: RunDiff) -> list[Line]:
    """The short form a run ends with (``--baseline``): the runs, one line per case that is
    not plainly passing (the first ``SUMMARY_CASES`` of each kind), the tally."""
    lines = [Line(f"Base: {source_text(diff.base)}"), Line(f"New:  {source_text(diff.new)}")]
    lines.extend(Line(f"note: {note}", "dim") for note in diff.notes)
    for kind in DETAIL_KINDS:
        cases = diff.of_kind(kind)
        label, tone = _SUMMARY_LABELS[kind], _KIND_TONES[kind]
        lines.extend(
            Line(f"{label}: {case.id}: {outcome_text(case)}", tone)
            for case in cases[:SUMMARY_CASES]
        )
        if len(cases) > SUMMARY_CASES:
            lines.append(Line(f"{label}: … and {len(cases) - SUMMARY_CASES} more", tone))
    lines.append(Line(tally_text(diff), "bad" if diff.regressions else "good"))
    return lines


def _kind_lines(diff: RunDiff, kind: ChangeKind) -> list[Line]:
    """A kind's title and one line per case of it."""
    cases = diff.of_kind(kind)
    if not cases:
        return []
    tone = _KIND_TONES[kind]
    lines = [Line(""), Line(f"{KIND_TITLES[kind]} ({len(cases)})", "heading")]
    lines.extend(
        Line(f"  {KIND_MARKS[kind]} {case.id}: {outcome_text(case)}", tone) for case in cases
    )
    return lines


def _detail_lines(diff: RunDiff) -> list[Line]:
    """The changed outputs, tool calls and figures, case by case."""
    lines: list[Line] = []
    sections = (
        ("Changed outputs", [c for c in diff.cases if c.output_diff], _output_lines),
        ("Tool-call changes", [c for c in diff.cases if c.tool_changes], _tool_lines),
        ("Duration, tokens, cost", [c for c in diff.cases if c.metric_changes], _metric_lines),
    )
    for title, cases, lines_of in sections:
        if cases:
            lines.extend([Line(""), Line(f"{title} ({len(cases)})", "heading")])
            for case in cases:
                lines.extend(lines_of(case))
    return lines


def _output_lines(case: CaseChange) -> list[Line]:
    """A case's output diff, its removed lines bad and added lines good."""
    lines = [Line(f"  {case.id}:")]
    for text in case.output_diff:
        tone: Tone = "plain"
        if text.startswith("@@"):
            tone = "dim"
        elif text.startswith("-") and not text.startswith("---"):
            tone = "bad"
        elif text.startswith("+") and not text.startswith("+++"):
            tone = "good"
        lines.append(Line(f"    {text}", tone))
    return lines


def _tool_lines(case: CaseChange) -> list[Line]:
    """A case's added, removed and changed tool calls."""
    lines = [Line(f"  {case.id}:")]
    for change in case.tool_changes:
        mark = _CALL_MARKS[change.kind]
        if change.kind == "changed":
            text = f"{change.name} {args_text(change.before)} -> {args_text(change.after)}"
        else:
            text = f"{change.name} {args_text(change.after if change.kind == 'added' else change.before)}"
        lines.append(Line(f"    {mark} {text}", _CALL_TONES[change.kind]))
    return lines


def _metric_lines(case: CaseChange) -> list[Line]:
    """A case's changed figures on one line."""
    return [Line(f"  {case.id}: " + "; ".join(metric_text(m) for m in case.metric_changes))]

"""The words every diff renderer uses: a case's transition, its test, its figures, the tally."""

from __future__ import annotations

from typing import Any

from agentcli.eval.reports._view import format_duration, one_line
from agentcli.eval.results.codec import to_json

from .model import (
    CHANGE_KINDS,
    CaseChange,
    ChangeKind,
    MetricChange,
    RunDiff,
    RunSource,
    Significance,
)

__all__ = [
    "DETAIL_KINDS",
    "KIND_MARKS",
    "args_text",
    "metric_text",
    "outcome_text",
    "significance_text",
    "source_text",
    "tally_text",
    "transition_text",
]

KIND_MARKS: dict[ChangeKind, str] = {
    "regression": "✗",
    "fix": "✓",
    "still_failing": "•",
    "not_significant": "~",
    "passing": "✓",
    "added": "+",
    "removed": "-",
    "skipped": "○",
}
# The kinds listed case by case (passing cases are counted, not listed).
DETAIL_KINDS: tuple[ChangeKind, ...] = tuple(kind for kind in CHANGE_KINDS if kind != "passing")
_TALLY_WORDS: dict[ChangeKind, tuple[str, str]] = {
    "regression": ("regression", "regressions"),
    "fix": ("fix", "fixes"),
    "still_failing": ("still failing", "still failing"),
    "not_significant": ("not significant", "not significant"),
    "passing": ("passing", "passing"),
    "added": ("new", "new"),
    "removed": ("removed", "removed"),
    "skipped": ("skipped", "skipped"),
}
_ARGS_WIDTH = 80


def source_text(source: RunSource) -> str:
    """``base.jsonl (started 2026-..., 4 results)``."""
    parts = [f"started {source.started_at}"] if source.started_at else []
    parts.append(f"{source.results} result{'s' if source.results != 1 else ''}")
    return f"{source.label} ({', '.join(parts)})"


def significance_text(significance: Significance) -> str:
    """``Fisher's exact test (two-sided): p=0.0079 < 0.05``."""
    relation = "<" if significance.significant else "≥"
    return f"{significance.test}: p={significance.p_value:.4g} {relation} {significance.alpha:g}"


def transition_text(change: CaseChange) -> str:
    """``passed -> failed``, ``5/5 passed -> 0/5 passed``, ``passed`` (new), ``was passed``."""
    if change.base is None:
        return change.new.status_text() if change.new is not None else ""
    if change.new is None:
        return f"was {change.base.status_text()}"
    return f"{change.base.status_text()} -> {change.new.status_text()}"


def outcome_text(change: CaseChange) -> str:
    """A case's line after its id: the transition, the test under repeats, the reason."""
    text = transition_text(change)
    if change.significance is not None:
        text += f" ({significance_text(change.significance)})"
    reason = change.new.reason if change.new is not None else ""
    if reason and change.kind in ("regression", "still_failing", "not_significant", "added"):
        text += f": {reason}"
    return text


def args_text(arguments: Any) -> str:
    """A call's arguments on one line (compact JSON, cut)."""
    return one_line(arguments if isinstance(arguments, str) else to_json(arguments), _ARGS_WIDTH)


def _figure(metric: str, value: float) -> str:
    """One figure of a metric in its unit."""
    if metric == "duration_ms":
        return format_duration(value)
    if metric == "cost":
        return f"${value:.4f}"
    return f"{value:.0f}"


_METRIC_NAMES = {"duration_ms": "duration", "tokens": "tokens", "cost": "cost"}


def metric_text(change: MetricChange) -> str:
    """``duration 120ms -> 2.4s (+2.3s, x20.0)``."""
    sign = "+" if change.delta >= 0 else "-"
    delta = f"{sign}{_figure(change.metric, abs(change.delta))}"
    ratio = f", x{change.ratio:.1f}" if change.ratio is not None else ""
    before, after = _figure(change.metric, change.before), _figure(change.metric, change.after)
    return f"{_METRIC_NAMES[change.metric]} {before} -> {after} ({delta}{ratio})"


def tally_text(diff: RunDiff) -> str:
    """``1 regression, 1 fix, 2 passing; changed: output in 1 case`` (zero counts left out)."""
    counts = diff.counts()
    parts = [f"{count} {_TALLY_WORDS[kind][count != 1]}" for kind, count in counts.items() if count]
    extras = [
        ("output", sum(1 for case in diff.cases if case.output_diff)),
        ("tool calls", sum(1 for case in diff.cases if case.tool_changes)),
        ("duration/tokens/cost", sum(1 for case in diff.cases if case.metric_changes)),
    ]
    more = [f"{what} in {count} case{'s' if count != 1 else ''}" for what, count in extras if count]
    text = ", ".join(parts) or "no cases"
    return f"{text}; changed: {', '.join(more)}" if more else text

"""A ``RunDiff`` as one JSON document (``agent diff --json``, ``-o diff.json``)."""

from __future__ import annotations

from typing import Any

from agentcli.eval.results.codec import to_json

from .model import (
    METRICS,
    CaseChange,
    CaseSide,
    MetricChange,
    RunDiff,
    RunSource,
    Significance,
    ToolCallChange,
)

__all__ = ["DIFF_FORMAT", "diff_document", "diff_json"]

DIFF_FORMAT = "agentcli.diff/1"  # bumped when a key changes meaning


def diff_document(diff: RunDiff) -> dict[str, Any]:
    """``{format, base, new, alpha, repeats, thresholds, summary, regressions, cases, notes}``."""
    counts = diff.counts()
    return {
        "format": DIFF_FORMAT,
        "base": _source(diff.base),
        "new": _source(diff.new),
        "alpha": diff.alpha,
        "repeats": diff.repeats,
        "thresholds": {
            metric: {
                "relative": diff.thresholds.of(metric).relative,
                "absolute": diff.thresholds.of(metric).absolute,
            }
            for metric in METRICS
        },
        "summary": {
            **counts,
            "output_changes": sum(1 for case in diff.cases if case.output_diff),
            "tool_call_changes": sum(1 for case in diff.cases if case.tool_changes),
            "metric_changes": sum(1 for case in diff.cases if case.metric_changes),
        },
        "regressions": [case.id for case in diff.regressions],
        "cases": [_case(case) for case in diff.cases],
        "notes": list(diff.notes),
    }


def diff_json(diff: RunDiff) -> str:
    """The document as indented JSON text."""
    return to_json(diff_document(diff), indent=2) + "\n"


def _source(source: RunSource) -> dict[str, Any]:
    """``{file, started_at, results, min_pass_rate}``."""
    return {
        "file": source.label,
        "started_at": source.started_at,
        "results": source.results,
        "min_pass_rate": source.min_pass_rate,
    }


def _case(case: CaseChange) -> dict[str, Any]:
    """One case: its kind, both sides, the test, and what changed."""
    return {
        "id": case.id,
        "kind": case.kind,
        "base": _side(case.base),
        "new": _side(case.new),
        "significance": _significance(case.significance),
        "output_diff": list(case.output_diff),
        "tool_calls": [_tool_change(change) for change in case.tool_changes],
        "metrics": [_metric(change) for change in case.metric_changes],
    }


def _side(side: CaseSide | None) -> dict[str, Any] | None:
    """``{statuses, passed, runs, duration_ms, tokens, cost, reason}`` (``runs``: counted)."""
    if side is None:
        return None
    return {
        "statuses": list(side.statuses),
        "passed": side.passed,
        "runs": side.counted,
        "duration_ms": side.duration_ms,
        "tokens": side.tokens,
        "cost": side.cost,
        "reason": side.reason or None,
    }


def _significance(significance: Significance | None) -> dict[str, Any] | None:
    """``{test, p_value, alpha, significant}``."""
    if significance is None:
        return None
    return {
        "test": significance.test,
        "p_value": significance.p_value,
        "alpha": significance.alpha,
        "significant": significance.significant,
    }


def _tool_change(change: ToolCallChange) -> dict[str, Any]:
    """``{change, tool, server, before, after}`` (arguments)."""
    return {
        "change": change.kind,
        "tool": change.tool,
        "server": change.server or None,
        "before": change.before,
        "after": change.after,
    }


def _metric(change: MetricChange) -> dict[str, Any]:
    """``{metric, before, after, delta}``."""
    return {
        "metric": change.metric,
        "before": change.before,
        "after": change.after,
        "delta": change.delta,
    }

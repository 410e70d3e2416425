"""A readable Markdown report: summary, cases table, stability table, details of failures."""

from __future__ import annotations

from typing import Any

from ._buffered import BufferedWriter
from ._view import (
    STATUS_ICONS,
    SUMMARY_KEYS,
    assertions_of,
    format_duration,
    format_percent,
    input_text,
    one_line,
    stability_view,
    status_of,
    summary_pass_rate,
    turns_of,
    value_text,
)
from .markdown_case import STABILITY_ICONS, case_markdown, code, escape, fence, table

__all__ = ["MarkdownWriter", "render_markdown"]

# Long outputs are cut in the report; `agent extract` writes them whole.
_DETAIL_LIMIT = 4000

_SUMMARY_LABELS = {
    "total": "Total",
    "passed": "Passed",
    "failed": "Failed",
    "skipped": "Skipped",
    "errors": "Errors",
    "timeouts": "Timeouts",
}


def _summary(summary: dict[str, Any]) -> str:
    """The summary figures as a two-column table."""
    rows = [["Agent", code(summary.get("agent_id") or "-", in_table=True)]]
    if summary.get("connector"):
        rows.append(["Connector", code(summary["connector"], in_table=True)])
    rows += [[label, str(summary.get(key, 0))] for key, label in _SUMMARY_LABELS.items()]
    rows.append(["Pass Rate", format_percent(summary_pass_rate(summary))])
    rows.append(["Duration", format_duration(summary.get("duration_ms"))])
    for key, value in summary.items():
        if key not in SUMMARY_KEYS and not isinstance(value, dict | list):
            rows.append([escape(key.replace("_", " ").capitalize()), escape(value)])
    return table(["Metric", "Value"], rows)


def _pairs(data: dict[str, Any]) -> str:
    """A flat mapping as a key/value table (nested values as inline JSON)."""
    rows = [
        [escape(k), code(value_text(v), in_table=True) if v not in (None, "") else "-"]
        for k, v in data.items()
    ]
    return table(["Key", "Value"], rows)


def _cases(results: list[dict[str, Any]]) -> str:
    """One row per result: id, status, duration, assertions passed, input preview."""
    rows = []
    for index, result in enumerate(results, 1):
        status = status_of(result)
        checks = assertions_of(result)
        passed = sum(1 for a in checks if a.get("passed"))
        name = code(result.get("id", ""), in_table=True)
        if result.get("run") is not None:
            name += f" (run {result['run']})"
        rows.append(
            [
                str(index),
                name,
                f"{STATUS_ICONS[status]} {status}",
                format_duration(result.get("duration_ms")),
                f"{passed}/{len(checks)}" if checks else "-",
                escape(one_line(input_text(result.get("input")), 60)),
            ]
        )
    return table(["#", "ID", "Status", "Duration", "Assertions", "Input"], rows)


def _stability(items: list[dict[str, Any]]) -> str:
    """One row per stability result."""
    rows = []
    for item in items:
        view = stability_view(item)
        ci = "-"
        if view.ci_low is not None and view.ci_high is not None:
            ci = f"{format_percent(view.ci_low)} – {format_percent(view.ci_high)}"
        rows.append(
            [
                code(view.id, in_table=True),
                f"{view.passed}/{view.runs}",
                format_percent(view.rate),
                ci,
                f"{STABILITY_ICONS.get(view.label, '')} {escape(view.label)}".strip(),
                format_duration(view.durations.get("avg")),
                format_duration(view.durations.get("p95")),
            ]
        )
    head = ["ID", "Passed", "Pass Rate", "95% CI", "Stability", "Avg", "p95"]
    return table(head, rows)


def render_markdown(report: dict[str, Any]) -> str:
    """The whole report as one Markdown document."""
    summary = report.get("summary") or {}
    results = [r for r in report.get("results") or [] if isinstance(r, dict)]
    parts = ["# Agent Eval Report", "## Summary", _summary(summary)]
    if report.get("environment"):
        parts += ["## Environment", _pairs(report["environment"])]
    parts += ["## Cases", _cases(results) if results else "_No cases ran._"]
    stability = [s for s in report.get("stability_results") or [] if isinstance(s, dict)]
    if stability:
        parts += ["## Stability Analysis", _stability(stability)]
    details = [r for r in results if status_of(r) != "passed" or turns_of(r)]
    if details:
        parts.append("## Details")
        parts += [case_markdown(r, 3, limit=_DETAIL_LIMIT).rstrip("\n") for r in details]
    metadata = dict(report.get("metadata") or {})
    options = metadata.pop("options", None)
    if metadata:
        parts += ["## Metadata", _pairs(metadata)]
    if options:
        parts += ["**Options**", fence(value_text(options), "json")]
    return "\n\n".join(parts) + "\n"


class MarkdownWriter(BufferedWriter):
    """Writes the Markdown report at close."""

    @staticmethod
    def recognises(head: str) -> bool:
        """True when ``head`` is the start of a Markdown report of ours."""
        return head.lstrip().startswith("# Agent Eval Report")

    def render(self, report: dict[str, Any]) -> str:
        """The report as Markdown."""
        return render_markdown(report)

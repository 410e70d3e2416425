"""A readable Markdown report: summary, cases table, stability table, details of failures."""

from __future__ import annotations

from agentcli.eval.results.codec import ENVIRONMENT_KEYS, METADATA_KEYS, ordered
from agentcli.eval.results.model import CaseResult, JsonObject, RunReport, RunSummary

from ._buffered import BufferedWriter
from ._view import (
    STATUS_ICONS,
    adaptive_note,
    format_duration,
    format_percent,
    input_text,
    one_line,
    stability_view,
    summary_pass_rate,
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


def _summary(summary: RunSummary) -> str:
    """The summary figures as a two-column table."""
    rows = [["Agent", code(summary.agent_id or "-", in_table=True)]]
    if summary.connector:
        rows.append(["Connector", code(summary.connector, in_table=True)])
    rows += [[label, str(getattr(summary, key))] for key, label in _SUMMARY_LABELS.items()]
    rows.append(["Pass Rate", format_percent(summary_pass_rate(summary))])
    rows.append(["Duration", format_duration(summary.duration_ms)])
    for key, value in summary.extra.items():
        if not isinstance(value, dict | list):
            rows.append([escape(key.replace("_", " ").capitalize()), escape(value)])
    return table(["Metric", "Value"], rows)


def _pairs(data: JsonObject) -> str:
    """A flat mapping as a key/value table (nested values as inline JSON)."""
    rows = [
        [escape(k), code(value_text(v), in_table=True) if v not in (None, "") else "-"]
        for k, v in data.items()
    ]
    return table(["Key", "Value"], rows)


def _cases(results: list[CaseResult]) -> str:
    """One row per result: id, status, duration, assertions passed, input preview."""
    rows = []
    for index, result in enumerate(results, 1):
        status = result.status
        checks = result.assertions
        passed = sum(1 for a in checks if a.passed)
        name = code(result.id, in_table=True)
        if result.run is not None:
            name += f" (run {result.run})"
        rows.append(
            [
                str(index),
                name,
                f"{STATUS_ICONS[status]} {status}",
                format_duration(result.duration_ms),
                f"{passed}/{len(checks)}" if checks else "-",
                escape(one_line(input_text(result.input), 60)),
            ]
        )
    return table(["#", "ID", "Status", "Duration", "Assertions", "Input"], rows)


def _stability(items: list[JsonObject]) -> str:
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


def render_markdown(report: RunReport) -> str:
    """The whole report as one Markdown document."""
    results = report.results
    parts = ["# Agent Eval Report", "## Summary", _summary(report.summary)]
    environment = ordered(report.header.environment, ENVIRONMENT_KEYS)
    if environment:
        parts += ["## Environment", _pairs(environment)]
    parts += ["## Cases", _cases(results) if results else "_No cases ran._"]
    if report.stability:
        parts += ["## Stability Analysis", _stability(report.stability)]
        note = adaptive_note(report.summary)
        if note is not None:
            parts.append(f"_{escape(note)}_")
    details = [r for r in results if r.status != "passed" or r.turns]
    if details:
        parts.append("## Details")
        parts += [case_markdown(r, 3, limit=_DETAIL_LIMIT).rstrip("\n") for r in details]
    metadata = ordered(report.header.metadata, METADATA_KEYS)
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

    def render(self, report: RunReport) -> str:
        """The report as Markdown."""
        return render_markdown(report)

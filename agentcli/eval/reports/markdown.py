"""A readable Markdown report: summary, cases table, stability table, details of failures."""

from __future__ import annotations

from agentcli.eval.results.codec import ENVIRONMENT_KEYS, METADATA_KEYS, ordered
from agentcli.eval.results.model import CaseResult, JsonObject, RunReport, RunSummary

from ._buffered import BufferedWriter
from ._view import (
    STATUS_ICONS,
    MatrixView,
    adaptive_note,
    connector_cost_text,
    cost_text,
    format_duration,
    format_k,
    format_percent,
    input_text,
    matrix_view,
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
    cost = summary.extra.get("cost")
    if isinstance(cost, dict) and (shown := cost_text(cost)) is not None:
        rows.append(["Cost", escape(shown)])
        if (columns := connector_cost_text(cost)) is not None:
            rows.append(["Cost by connector", escape(columns)])
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
        if result.connector is not None:
            name += f" @ {code(result.connector, in_table=True)}"
        if result.tags:
            name += " " + " ".join(code(f"#{tag}", in_table=True) for tag in result.tags)
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
    views = [stability_view(item) for item in items]
    # Under faults pass^k is the robustness figure: a column of its own (runs without
    # faults keep the table they had).
    faulted = any(view.faults for view in views)
    for view in views:
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
        if faulted:
            rows[-1].append(escape(format_k(view.pass_hat_k)) if view.faults else "-")
    head = ["ID", "Passed", "Pass Rate", "95% CI", "Stability", "Avg", "p95"]
    if faulted:
        head.append("pass^k under faults")
    return table(head, rows)


def _has_details(result: CaseResult) -> bool:
    """Whether the report details the result (one that did not pass, or a conversation)."""
    return result.status != "passed" or bool(result.turns)


def _matrix(view: MatrixView, results: list[CaseResult]) -> str:
    """The connector matrix: a row per case, a column per connector; a cell whose result
    is detailed below links to it."""
    grid = view.grid
    rows = []
    for case_id, cells in grid.rows.items():
        row = [code(case_id, in_table=True)]
        for connector in grid.connectors:
            cell = cells.get(connector)
            if cell is None:
                row.append("-")
                continue
            text = escape(view.cell_text(cell))
            target = view.target(cell)
            if target is not None and _has_details(results[target]):
                text = f"[{text}](#result-{target + 1})"
            row.append(text)
        verdict = "passed" if grid.case_passes(case_id, view.mode, view.min_pass_rate) else "failed"
        row.append(f"{STATUS_ICONS[verdict]} {verdict}")
        rows.append(row)
    figures = grid.by_connector(view.min_pass_rate)
    passed = grid.passed_cases(view.mode, view.min_pass_rate)
    totals = [f"{f['passed']}/{f['cases']}" for f in figures.values()]
    rows.append(["**Passed**", *totals, f"{passed}/{len(grid.rows)}"])
    head = ["Case", *(code(c, in_table=True) for c in grid.connectors), f"Verdict ({view.mode})"]
    return table(head, rows)


def render_markdown(report: RunReport) -> str:
    """The whole report as one Markdown document."""
    results = report.results
    parts = ["# Agent Eval Report", "## Summary", _summary(report.summary)]
    environment = ordered(report.header.environment, ENVIRONMENT_KEYS)
    if environment:
        parts += ["## Environment", _pairs(environment)]
    grid = matrix_view(report)
    if grid is not None:
        parts += ["## Matrix", _matrix(grid, results)]
    parts += ["## Cases", _cases(results) if results else "_No cases ran._"]
    if report.stability:
        parts += ["## Stability Analysis", _stability(report.stability)]
        note = adaptive_note(report.summary)
        if note is not None:
            parts.append(f"_{escape(note)}_")
    details = [(i, r) for i, r in enumerate(results, 1) if _has_details(r)]
    if details:
        parts.append("## Details")
        # An anchor before each (the matrix's cells link to them by the result's number).
        parts += [
            f'<a id="result-{i}"></a>\n\n' + case_markdown(r, 3, limit=_DETAIL_LIMIT).rstrip("\n")
            if grid is not None
            else case_markdown(r, 3, limit=_DETAIL_LIMIT).rstrip("\n")
            for i, r in details
        ]
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

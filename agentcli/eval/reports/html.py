"""One self-contained HTML report: inline CSS, JS and SVG; no network; all content escaped.

User content is HTML-escaped wherever it is rendered, and the report data is embedded as
JSON in ``<script type="application/json">`` with ``<``, ``>`` and ``&`` written as
``\\u003c`` etc. so no string can close the element. A Content-Security-Policy allows only
this file's own script (by hash) and no loads at all, as a second line of defence.
"""

from __future__ import annotations

import base64
import hashlib
from functools import cache
from html import escape
from pathlib import Path
from typing import Any

from agentcli.eval.results.codec import (
    ENVIRONMENT_KEYS,
    METADATA_KEYS,
    ordered,
    summary_dict,
    to_json,
)
from agentcli.eval.results.model import (
    STATUSES,
    CaseResult,
    JsonObject,
    RunReport,
    RunSummary,
)

from ._buffered import BufferedWriter
from ._html_data import TEXT_LIMIT, report_data
from ._view import (
    MatrixView,
    adaptive_note,
    connector_cost_text,
    cost_text,
    format_duration,
    format_k,
    format_percent,
    matrix_view,
    runs_by_id,
    stability_view,
    summary_pass_rate,
    value_text,
)
from .svg import duration_histogram, pass_rate_chart

__all__ = ["HtmlWriter", "render_html"]

_CASE_HEAD = "".join(
    f"<th>{name}</th>" for name in ("#", "ID", "Status", "Duration", "Assertions", "Input")
)


@cache
def _asset(name: str) -> str:
    """A stylesheet or script shipped beside this module."""
    return Path(__file__).with_name(name).read_text(encoding="utf-8")


def _e(value: Any) -> str:
    """HTML-escaped text (quotes too, so it is safe in attributes)."""
    return escape(str(value), quote=True)


def _pre(text: str) -> str:
    """A ``<pre>`` block, cut at ``TEXT_LIMIT`` characters (the compare page's diffs)."""
    if len(text) > TEXT_LIMIT:
        text = text[:TEXT_LIMIT] + f"\n… ({len(text) - TEXT_LIMIT} more characters)"
    return f"<pre>{_e(text)}</pre>"


def _table(head: list[str], rows: list[list[str]]) -> str:
    """A table; cells must already be HTML."""
    thead = "".join(f"<th>{_e(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{thead}</tr></thead><tbody>{body}</tbody></table>"


def _card(label: str, value: str, kind: str = "") -> str:
    """One summary card."""
    return f'<div class="card {kind}"><div class="label">{_e(label)}</div><div class="value">{_e(value)}</div></div>'


def _cards(summary: RunSummary) -> str:
    """Summary cards: counts, pass rate, duration and any extra (stability) figures."""
    cards = [_card("Total", str(summary.total))]
    for key, kind in (
        ("passed", "passed"),
        ("failed", "failed"),
        ("errors", "error"),
        ("timeouts", "timeout"),
        ("skipped", ""),
    ):
        cards.append(_card(key.capitalize(), str(getattr(summary, key)), kind))
    cards.append(_card("Pass rate", format_percent(summary_pass_rate(summary))))
    cards.append(_card("Duration", format_duration(summary.duration_ms)))
    cost = summary.extra.get("cost")
    if isinstance(cost, dict) and (shown := cost_text(cost)) is not None:
        cards.append(_card("Cost", shown))
        if (columns := connector_cost_text(cost)) is not None:
            cards.append(_card("Cost by connector", columns))
    for key, value in summary.extra.items():
        if isinstance(value, int | float | str) and not isinstance(value, bool):
            shown = (
                format_percent(value)
                if key.endswith("pass_rate") and isinstance(value, int | float)
                else str(value)
            )
            cards.append(_card(key.replace("_", " ").capitalize(), shown))
    return '<section class="cards">' + "".join(cards) + "</section>"


def _meta_list(data: JsonObject) -> str:
    """A mapping as a definition list (nested values as JSON)."""
    items = "".join(
        f"<dt>{_e(k)}</dt><dd>{_e(value_text(v, empty='-'))}</dd>" for k, v in data.items()
    )
    return f'<dl class="meta">{items}</dl>'


def _badge(status: str) -> str:
    """A coloured status badge."""
    return f'<span class="badge s-{status}">{status}</span>'


def _matrix(view: MatrixView) -> str:
    """The connector matrix: a row per case, a column per connector; each cell links to
    its result in the details (its first that did not pass), which it opens."""
    grid = view.grid
    head = "".join(
        f"<th>{_e(h)}</th>" for h in ("Case", *grid.connectors, f"Verdict ({view.mode})")
    )
    rows = []
    for case_id, cells in grid.rows.items():
        tds = [f"<td><code>{_e(case_id)}</code></td>"]
        for connector in grid.connectors:
            cell = cells.get(connector)
            if cell is None:
                tds.append('<td class="num">-</td>')
                continue
            status = cell.status(grid.threshold(view.min_pass_rate))
            text = _e(view.cell_text(cell))
            target = view.target(cell)
            if target is not None:
                text = f'<a href="#case-{target}" data-open="case-{target}">{text}</a>'
            tds.append(f'<td class="cell s-{status}" data-status="{status}">{text}</td>')
        verdict = "passed" if grid.case_passes(case_id, view.mode, view.min_pass_rate) else "failed"
        tds.append(f"<td>{_badge(verdict)}</td>")
        rows.append("<tr>" + "".join(tds) + "</tr>")
    figures = grid.by_connector(view.min_pass_rate)
    passed = grid.passed_cases(view.mode, view.min_pass_rate)
    totals = "".join(f'<td class="num">{f["passed"]}/{f["cases"]}</td>' for f in figures.values())
    foot = f'<tr><th>Passed</th>{totals}<td class="num">{passed}/{len(grid.rows)}</td></tr>'
    return (
        '<section id="matrix"><h2>Matrix</h2><table id="matrix-table">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody>"
        f"<tfoot>{foot}</tfoot></table></section>"
    )


def _stability(items: list[JsonObject], results: list[CaseResult]) -> str:
    """Stability charts (pass rate per case, duration histogram) and table."""
    views = [stability_view(item) for item in items]
    runs = runs_by_id(results)
    durations = [
        float(r.duration_ms) for v in views for r in runs.get(v.id, []) if r.duration_ms is not None
    ]
    if not durations:
        durations = [v.durations["avg"] for v in views if "avg" in v.durations]
    rows = []
    for view in views:
        ci = "-"
        if view.ci_low is not None and view.ci_high is not None:
            ci = f"{format_percent(view.ci_low)} – {format_percent(view.ci_high)}"
        rows.append(
            [
                f"<code>{_e(view.id)}</code>",
                f"{view.passed}/{view.runs}",
                format_percent(view.rate),
                ci,
                _e(format_k(view.pass_hat_k) + (" under faults" if view.faults else "")),
                _e(format_k(view.pass_at_k)),
                _e(view.label),
                format_duration(view.durations.get("avg")),
                format_duration(view.durations.get("p95")),
            ]
        )
    head = ["ID", "Passed", "Pass rate", "95% CI", "pass^k", "pass@k", "Stability", "Avg", "p95"]
    charts = pass_rate_chart(views) + (duration_histogram(durations) if durations else "")
    return f'<section id="stability"><h2>Stability</h2><div class="charts">{charts}</div>{_table(head, rows)}</section>'


def _embedded(report: RunReport) -> str:
    """The report's data (``_html_data``) as JSON that cannot break out of its script
    element."""
    data = report_data(report.results)
    data["summary"] = summary_dict(report.summary)
    text = to_json(data)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render_html(report: RunReport) -> str:
    """The whole report as one self-contained HTML document."""
    summary, results, stability = report.summary, report.results, report.stability
    metadata = ordered(report.header.metadata, METADATA_KEYS)
    environment = ordered(report.header.environment, ENVIRONMENT_KEYS)
    script = _asset("report.js")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    csp = f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{digest}'"
    agent = summary.agent_id or "agent"
    subtitle = " · ".join(
        _e(part) for part in (agent, summary.connector, metadata.get("started_at")) if part
    )
    options = "".join(f'<option value="{s}">{s}</option>' for s in ("all", *STATUSES))
    sections = [
        f'<header><h1>Agent Eval Report</h1><p class="sub">{subtitle}</p></header>',
        _cards(summary),
    ]
    grid = matrix_view(report)
    if grid is not None:
        sections.append(_matrix(grid))
    if stability:
        sections.append(_stability(stability, results))
        note = adaptive_note(summary)
        if note is not None:
            sections.append(f'<p class="note">{_e(note)}</p>')
    # The rows and each case's page are drawn by the script from the data, a page of rows
    # at a time and a case when it is opened: the file carries no per-case markup.
    sections.append(
        '<section id="cases"><h2>Cases</h2><div class="filters">'
        f'<label>Status <select id="status-filter">{options}</select></label>'
        '<input type="search" id="search" placeholder="Search id, input, output, errors…" aria-label="Search">'
        '<span class="count" id="shown-count"></span></div>'
        f'<table id="case-table"><thead><tr>{_CASE_HEAD}</tr></thead><tbody></tbody></table>'
        '<button type="button" id="more" hidden></button>'
        "<noscript><p>The cases are listed by the report's script: allow JavaScript for this "
        "file, or read them with <code>agent extract</code>.</p></noscript></section>"
    )
    if environment:
        sections.append(
            '<section id="environment"><h2>Environment</h2>'
            + _meta_list(environment)
            + "</section>"
        )
    if metadata:
        sections.append(
            '<section id="metadata"><h2>Metadata</h2>' + _meta_list(metadata) + "</section>"
        )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_e(csp)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Agent Eval Report — {_e(agent)}</title>"
        f"<style>{_asset('report.css')}</style></head><body>\n"
        + "\n".join(sections)
        + f'\n<script type="application/json" id="report-data">{_embedded(report)}</script>'
        + f"\n<script>{script}</script>\n</body></html>\n"
    )


class HtmlWriter(BufferedWriter):
    """Writes the self-contained HTML report at close."""

    @staticmethod
    def recognises(head: str) -> bool:
        """True when ``head`` is the start of an HTML report of ours."""
        return head.lstrip().startswith("<!DOCTYPE html>") and "<title>Agent Eval Report" in head

    def render(self, report: RunReport) -> str:
        """The report as HTML."""
        return render_html(report)

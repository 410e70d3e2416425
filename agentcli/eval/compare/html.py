"""A ``RunDiff`` as one self-contained HTML page: the report's stylesheet inline, no script,
no loads (a Content-Security-Policy says so), every piece of user content escaped by the
HTML report's own helpers (``reports/html``)."""

from __future__ import annotations

from agentcli.eval.reports.html import _asset, _card, _e, _pre, _table

from .model import KIND_TITLES, CaseChange, ChangeKind, RunDiff
from .words import DETAIL_KINDS, args_text, metric_text, significance_text, tally_text

__all__ = ["TITLE", "render_html"]

TITLE = "Agent Diff"
_CSP = "default-src 'none'; style-src 'unsafe-inline'"
# The report's card and badge colours: a regression reads as a failure, a fix as a pass.
_CARD_KINDS: dict[ChangeKind, str] = {
    "regression": "failed",
    "fix": "passed",
    "still_failing": "error",
    "not_significant": "timeout",
    "passing": "passed",
    "added": "",
    "removed": "",
    "skipped": "",
}


def render_html(diff: RunDiff) -> str:
    """The whole page."""
    sections = [
        f'<header><h1>{TITLE}</h1><p class="sub">{_e(tally_text(diff))}</p></header>',
        _cards(diff),
        _sources(diff),
    ]
    sections.extend(f'<p class="sub">{_e(note)}</p>' for note in diff.notes)
    for kind in DETAIL_KINDS:
        cases = diff.of_kind(kind)
        if cases:
            sections.append(_kind_section(kind, cases))
    sections.extend(_outputs(diff) + _tool_calls(diff) + _metrics(diff))
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_e(_CSP)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{TITLE} — {_e(diff.base.label)} → {_e(diff.new.label)}</title>"
        f"<style>{_asset('report.css')}</style></head><body>\n"
        + "\n".join(sections)
        + "\n</body></html>\n"
    )


def _cards(diff: RunDiff) -> str:
    """One card per kind of change."""
    cards = [
        _card(KIND_TITLES[kind], str(count), _CARD_KINDS[kind])
        for kind, count in diff.counts().items()
    ]
    return '<section class="cards">' + "".join(cards) + "</section>"


def _sources(diff: RunDiff) -> str:
    """The two runs side by side."""
    base, new = diff.base, diff.new
    rows = [
        ["File", f"<code>{_e(base.label)}</code>", f"<code>{_e(new.label)}</code>"],
        ["Started", _e(base.started_at or "-"), _e(new.started_at or "-")],
        ["Results", _e(base.results), _e(new.results)],
    ]
    return '<section id="runs"><h2>Runs</h2>' + _table(["", "Base", "New"], rows) + "</section>"


def _kind_section(kind: ChangeKind, cases: list[CaseChange]) -> str:
    """A kind's table: the sides, the test under repeats, why the case fails now."""
    rows = [
        [
            f"<code>{_e(case.id)}</code>",
            _e(case.base.status_text()) if case.base else "-",
            _e(case.new.status_text()) if case.new else "-",
            _e(significance_text(case.significance)) if case.significance else "-",
            _e(case.new.reason) if case.new and case.new.reason else "-",
        ]
        for case in cases
    ]
    head = ["Case", "Base", "New", "Test", "Reason"]
    title = f"{KIND_TITLES[kind]} ({len(cases)})"
    return f'<section class="{_e(kind)}"><h2>{_e(title)}</h2>{_table(head, rows)}</section>'


def _outputs(diff: RunDiff) -> list[str]:
    """Each changed output's diff."""
    cases = [case for case in diff.cases if case.output_diff]
    if not cases:
        return []
    body = "".join(
        f"<h4><code>{_e(case.id)}</code></h4>{_pre(chr(10).join(case.output_diff))}"
        for case in cases
    )
    return [f'<section id="outputs"><h2>Changed outputs ({len(cases)})</h2>{body}</section>']


def _tool_calls(diff: RunDiff) -> list[str]:
    """Every added, removed or changed tool call."""
    cases = [case for case in diff.cases if case.tool_changes]
    if not cases:
        return []
    rows = [
        [
            f"<code>{_e(case.id)}</code>",
            _e(change.kind),
            f"<code>{_e(change.name)}</code>",
            _e(args_text(change.before)) if change.kind != "added" else "-",
            _e(args_text(change.after)) if change.kind != "removed" else "-",
        ]
        for case in cases
        for change in case.tool_changes
    ]
    head = ["Case", "Change", "Tool", "Base arguments", "New arguments"]
    title = f"Tool-call changes ({len(cases)})"
    return [f'<section id="tool-calls"><h2>{title}</h2>{_table(head, rows)}</section>']


def _metrics(diff: RunDiff) -> list[str]:
    """The figures that moved past their thresholds."""
    cases = [case for case in diff.cases if case.metric_changes]
    if not cases:
        return []
    rows = [
        [f"<code>{_e(case.id)}</code>", _e(metric_text(change))]
        for case in cases
        for change in case.metric_changes
    ]
    title = f"Duration, tokens, cost ({len(cases)})"
    return [f'<section id="metrics"><h2>{title}</h2>{_table(["Case", "Change"], rows)}</section>']

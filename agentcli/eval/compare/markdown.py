"""A ``RunDiff`` as Markdown, fit for a GitHub job summary (``$GITHUB_STEP_SUMMARY``).

Escaped as the Markdown report escapes (``reports/markdown_case``): ids and arguments in
code spans, prose backslash-escaped, output diffs in fences no backtick run can close.
"""

from __future__ import annotations

from agentcli.eval.reports.markdown_case import code, escape, fence, table

from .model import KIND_TITLES, CaseChange, ChangeKind, RunDiff
from .words import DETAIL_KINDS, args_text, metric_text, significance_text, tally_text

__all__ = ["TITLE", "render_markdown"]

TITLE = "# Agent diff"
_ICONS: dict[ChangeKind, str] = {
    "regression": "❌",
    "fix": "✅",
    "still_failing": "⚠️",
    "not_significant": "〰️",
    "passing": "✅",
    "added": "🆕",
    "removed": "🗑️",
    "skipped": "⏭️",
}


def render_markdown(diff: RunDiff) -> str:
    """The whole diff: the runs, the tally, the cases by kind, then what changed."""
    tally = escape(tally_text(diff))
    parts = [TITLE, f"**{tally}**" if diff.regressions else tally, _sources(diff)]
    parts.extend(f"> {escape(note)}" for note in diff.notes)
    for kind in DETAIL_KINDS:
        cases = diff.of_kind(kind)
        if cases:
            parts.append(f"## {_ICONS[kind]} {KIND_TITLES[kind]} ({len(cases)})")
            parts.append(_case_table(cases))
    parts.extend(_outputs(diff))
    parts.extend(_tool_calls(diff))
    parts.extend(_metrics(diff))
    return "\n\n".join(parts) + "\n"


def _sources(diff: RunDiff) -> str:
    """The two runs side by side."""
    base, new = diff.base, diff.new
    rows = [
        ["File", code(base.label, in_table=True), code(new.label, in_table=True)],
        ["Started", escape(base.started_at or "-"), escape(new.started_at or "-")],
        ["Results", str(base.results), str(new.results)],
    ]
    return table(["", "Base", "New"], rows)


def _case_table(cases: list[CaseChange]) -> str:
    """One row per case: its sides, the test under repeats, why it fails now."""
    rows = [
        [
            code(case.id, in_table=True),
            escape(case.base.status_text()) if case.base else "-",
            escape(case.new.status_text()) if case.new else "-",
            escape(significance_text(case.significance)) if case.significance else "-",
            escape(case.new.reason) if case.new and case.new.reason else "-",
        ]
        for case in cases
    ]
    return table(["Case", "Base", "New", "Test", "Reason"], rows)


def _outputs(diff: RunDiff) -> list[str]:
    """Each changed output as a diff fence."""
    cases = [case for case in diff.cases if case.output_diff]
    if not cases:
        return []
    parts = [f"## Changed outputs ({len(cases)})"]
    for case in cases:
        parts.append(f"### {code(case.id)}")
        parts.append(fence("\n".join(case.output_diff), "diff"))
    return parts


def _tool_calls(diff: RunDiff) -> list[str]:
    """Every added, removed or changed tool call, one row each."""
    cases = [case for case in diff.cases if case.tool_changes]
    if not cases:
        return []
    rows = [
        [
            code(case.id, in_table=True),
            change.kind,
            code(change.name, in_table=True),
            code(args_text(change.before), in_table=True) if change.kind != "added" else "-",
            code(args_text(change.after), in_table=True) if change.kind != "removed" else "-",
        ]
        for case in cases
        for change in case.tool_changes
    ]
    return [
        f"## Tool-call changes ({len(cases)})",
        table(["Case", "Change", "Tool", "Base arguments", "New arguments"], rows),
    ]


def _metrics(diff: RunDiff) -> list[str]:
    """The figures that moved past their thresholds."""
    cases = [case for case in diff.cases if case.metric_changes]
    if not cases:
        return []
    rows = [
        [code(case.id, in_table=True), escape(metric_text(change))]
        for case in cases
        for change in case.metric_changes
    ]
    return [f"## Duration, tokens, cost ({len(cases)})", table(["Case", "Change"], rows)]

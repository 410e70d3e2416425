"""The console blocks of a whole run: headings, notices, the summary with its stability
table, the final banner, and message mode's direct answer."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.text import Text

from agentcli.cli.views.text import RULE_WIDTH, Block, preview
from agentcli.eval.checks.matching import output_text
from agentcli.eval.reports._view import (
    connector_cost_text,
    cost_text,
    format_duration,
    format_percent,
)
from agentcli.secrets import redact_data, redact_text

if TYPE_CHECKING:
    from agentcli.eval.results.model import RunSummary, Trace

__all__ = ["Banner", "DirectOutput", "Heading", "Notice", "StabilityTable", "SummaryBlock"]

NOTICE_MARKS = {"info": ("ℹ ", "blue"), "warning": ("⚠ ", "yellow"), "error": ("✗ ", "red")}


@dataclass(slots=True)
class Heading(Block):
    """A title between two rules: ``═`` for the run's header, ``─`` for a section."""

    title: str
    rule: str = "─"
    style: str = "bold white"

    def lines(self) -> list[Text]:
        """A blank line, the rule, the title, the rule."""
        rule = self.rule * RULE_WIDTH
        return [Text(f"\n{rule}\n  {self.title}\n{rule}", style=self.style)]


@dataclass(slots=True)
class Notice(Block):
    """An ``ℹ`` info, ``⚠`` warning or ``✗`` error line."""

    message: str
    level: str = "info"

    def lines(self) -> list[Text]:
        """The one line."""
        return [Text.assemble(NOTICE_MARKS[self.level], self.message)]


@dataclass(slots=True)
class SummaryBlock(Block):
    """``Summary``: agent, connector, counts, pass rate and duration, the stability table
    of ``--runs``, and where the results went."""

    summary: RunSummary
    output_path: str | None = None

    def lines(self) -> list[Text]:
        """The heading, one row a figure, the stability table, the output path."""
        summary = self.summary
        lines = Heading("Summary").lines()
        lines.extend(
            Text.assemble(f"  {label:<11}", (str(value), style))
            for label, value, style in self._rows()
        )
        rate = float(summary.pass_rate or 0.0)
        rate_style = "bold green" if rate >= 100 else "yellow" if rate >= 80 else "red"
        lines.append(Text.assemble(f"  {'Pass Rate:':<11}", (format_percent(rate), rate_style)))
        lines.append(Text(f"  {'Duration:':<11}{format_duration(summary.duration_ms)}"))
        cost = summary.extra.get("cost")
        if isinstance(cost, Mapping) and (shown := cost_text(cost)) is not None:
            lines.append(Text(f"  {'Cost:':<11}{shown}"))
            if (columns := connector_cost_text(cost)) is not None:
                lines.append(Text(f"  {'':<11}by connector: {columns}"))
        if summary.extra.get("runs_per_case"):
            lines.extend(StabilityTable(summary.extra).lines())
        if self.output_path:
            shown = "stdout" if self.output_path == "-" else self.output_path
            lines.append(Text(f"\n  Output: {shown}"))
        return lines

    def _rows(self) -> list[tuple[str, Any, str]]:
        """``(label, value, style)`` of each count shown (zero skips, errors and timeouts
        are left out)."""
        summary = self.summary
        rows: list[tuple[str, Any, str]] = [("Agent:", summary.agent_id, "cyan")]
        if summary.connector:
            rows.append(("Connector:", summary.connector, "cyan"))
        rows.append(("Total:", summary.total, ""))
        rows.append(("Passed:", summary.passed, "green" if summary.passed else ""))
        rows.append(("Failed:", summary.failed, "red" if summary.failed else ""))
        for count, label, style in (
            (summary.skipped, "Skipped:", "yellow"),
            (summary.errors, "Errors:", "red"),
            (summary.timeouts, "Timeouts:", "red"),
        ):
            if count:
                rows.append((label, count, style))
        return rows


@dataclass(slots=True)
class StabilityTable(Block):
    """``Stability Analysis:``, the ``--runs`` figures of a summary (``RunSummary.extra``),
    and the cases below ``--min-pass-rate``."""

    summary: Mapping[str, Any]

    def lines(self) -> list[Text]:
        """The title and one row a figure."""
        summary = self.summary
        rows = [
            ("Runs/Case:", summary.get("runs_per_case")),
            ("Total Runs:", summary.get("total_runs")),
            ("Stable:", summary.get("stable")),
            ("Mostly Stable:", summary.get("mostly_stable")),
            ("Unstable:", summary.get("unstable")),
            ("Highly Unstable:", summary.get("highly_unstable")),
            ("Overall Rate:", format_percent(summary.get("overall_pass_rate") or 0)),
            ("Mean Case Rate:", format_percent(summary.get("mean_pass_rate") or 0)),
        ]
        adaptive = summary.get("adaptive")
        if isinstance(adaptive, Mapping):  # --runs auto: the runs used, and what they saved
            rows[0] = (
                "Runs/Case:",
                f"auto ({adaptive.get('min_runs')}-{adaptive.get('max_runs')})",
            )
            rows.insert(
                2,
                (
                    "Saved:",
                    f"{adaptive.get('saved_runs')} of {adaptive.get('fixed_runs')} runs"
                    f" ({adaptive.get('saved_pct') or 0:g}%) against"
                    f" --runs {adaptive.get('max_runs')}",
                ),
            )
        lines = [Text("\n  Stability Analysis:")]
        lines.extend(Text(f"    {label:<17}{value}") for label, value in rows)
        below = summary.get("cases_below_threshold") or []
        if below:
            threshold = summary.get("min_pass_rate", 100)
            label = f"Below {threshold:g}%:"  # in the column of the figures above, any threshold
            lines.append(Text(f"    {label:<17}{', '.join(below)}", style="red"))
        return lines


@dataclass(slots=True)
class Banner(Block):
    """The verdict between two double rules."""

    passed: bool

    def lines(self) -> list[Text]:
        """The banner, a blank line after it."""
        rule = "═" * RULE_WIDTH
        if self.passed:
            return [Text(f"\n{rule}\n  ✨ ALL TESTS PASSED ✨\n{rule}\n", style="bold green")]
        return [Text(f"\n{rule}\n  ❌ TESTS FAILED\n{rule}\n", style="bold red")]


@dataclass(slots=True)
class DirectOutput(Block):
    """Message mode: the error if any, the answer as is (objects as indented JSON, secrets
    redacted inside them), then the tool calls."""

    output: Any
    trace: Trace | None = None
    error: str | None = None

    def lines(self) -> list[Text]:
        """The error, the answer, the tool calls."""
        lines = Notice(self.error, "error").lines() if self.error else []
        if isinstance(self.output, str):
            lines.append(Text(redact_text(self.output)))
        elif self.output is not None:
            lines.append(Text(json.dumps(redact_data(self.output), ensure_ascii=False, indent=2)))
        if self.trace is not None and self.trace.tool_calls:
            lines.append(Text("\n--- Tool Calls ---"))
            for call in self.trace.tool_calls:
                where = f"{call.server}/{call.tool}" if call.server else call.tool
                outcome = f"ERR: {preview(call.error, 60)}" if call.error else "OK"
                arguments = preview(output_text(call.arguments), 80)
                lines.append(Text(f"  {where} → {outcome} (args: {arguments})"))
        return lines

"""The eval console view (Yao's layout, rendered with rich) and the ``--json`` NDJSON stream.

Layout: a header, info lines (``ℹ Agent: ...``), ``Running Tests``, one line per result
(``► [id] input PASSED (1.2s)`` and ``└─ error``), a summary and a final banner. A live
progress line is shown on terminals only; in CI the output is plain lines. ``NO_COLOR`` is
honoured by rich.
"""

from __future__ import annotations

import json
import re
import sys
import time
from typing import Any, TextIO

from rich.console import Console
from rich.text import Text

from agentcli.eval.cases.model import input_text
from agentcli.eval.checks.matching import output_text
from agentcli.eval.reports._view import format_duration
from agentcli.eval.results.model import RunSummary
from agentcli.eval.run.runner import RunEvent
from agentcli.secrets import redact_data, redact_text

__all__ = ["ConsoleView", "JsonEvents", "format_duration"]

RULE_WIDTH = 63
_WORD = re.compile(r"\S+")
_FLUSH_EVERY = 0.125  # seconds between batched prints under a live progress bar
STABILITY_STYLES = {
    "stable": ("Stable", "green"),
    "mostly_stable": ("Mostly Stable", "yellow"),
    "unstable": ("Unstable", "red"),
    "highly_unstable": ("Highly Unstable", "bold red"),
    "skipped": ("Skipped", "yellow"),
}
STATUS_STYLES = {
    "passed": ("PASSED", "bold green"),
    "failed": ("FAILED", "bold red"),
    "error": ("ERROR", "bold red"),
    "timeout": ("TIMEOUT", "red"),
    "skipped": ("SKIPPED", "yellow"),
}


# How much of a long text a preview reads: past the shown characters, enough that a secret
# cut by the edge is still recognised and redacted before it is cut.
_PREVIEW_MARGIN = 4096


def preview(text: str, limit: int = 50) -> str:
    """Whitespace collapsed, cut to ``limit`` characters with an ellipsis (a long text is
    read only as far as the preview needs)."""
    words: list[str] = []
    length = 0
    for word in _WORD.finditer(text):
        words.append(word.group())
        length += len(word.group()) + 1
        if length > limit + _PREVIEW_MARGIN:
            break
    flat = redact_text(" ".join(words))
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


class ConsoleView:
    """Prints a run for a person."""

    def __init__(
        self, console: Console | None = None, *, verbose: bool = False, progress: bool | None = None
    ) -> None:
        # The stream is pinned: while a case runs, sys.stdout is the router that keeps what
        # user code prints (agentcli.capture), and the view must not print into it.
        self.console = console or Console(file=sys.stdout, highlight=False, soft_wrap=True)
        self.verbose = verbose
        # Interactive, not merely a terminal: a dumb terminal or TTY_INTERACTIVE=0 (rich's
        # switch) gets the result lines without a live bar.
        self.show_progress = self.console.is_interactive if progress is None else progress
        self._progress: Any = None
        self._task: Any = None
        self._pending: list[Text] = []  # lines held while a progress bar is live
        self._flushed = 0.0

    def _print(self, line: Text | str) -> None:
        """One line: rendered by rich on a terminal; written as plain text otherwise (CI logs,
        files), which costs a tenth as much per result line. Every line is redacted here, so
        no output, error or assertion message shows a secret."""
        plain = line.plain if isinstance(line, Text) else line
        safe = redact_text(plain)
        if self.console.is_terminal:
            if safe != plain:  # the redacted text, in the line's overall style
                line = Text(safe, style=line.style if isinstance(line, Text) else "")
            text = line if isinstance(line, Text) else Text(line)
            if self._progress is None:
                self.console.print(text)
                return
            # Under a live progress bar every print redraws the bar: batch the lines and
            # print them together a few times a second.
            self._pending.append(text)
            now = time.monotonic()
            if now - self._flushed >= _FLUSH_EVERY:
                self._flush(now)
            return
        self.console.file.write(safe + "\n")

    # -- sections ----------------------------------------------------------------------

    def header(self, title: str = "Agent Test") -> None:
        """The double rule with the title."""
        rule = "═" * RULE_WIDTH
        self._print(Text(f"\n{rule}\n  {title}\n{rule}", style="bold cyan"))

    def section(self, title: str) -> None:
        """A single-rule sub-header."""
        rule = "─" * RULE_WIDTH
        self._print(Text(f"\n{rule}\n  {title}\n{rule}", style="bold white"))

    def info(self, message: str) -> None:
        """An ``ℹ`` line."""
        self._print(Text.assemble(("ℹ ", "blue"), message))

    def warning(self, message: str) -> None:
        """A ``⚠`` line."""
        self._print(Text.assemble(("⚠ ", "yellow"), message))

    def error(self, message: str) -> None:
        """A ``✗`` line."""
        self._print(Text.assemble(("✗ ", "red"), message))

    # -- progress ----------------------------------------------------------------------

    def start_progress(self, total: int) -> None:
        """A live progress bar under the result lines (terminals only)."""
        if not self.show_progress or total <= 1:
            return
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self._progress = Progress(
            TextColumn("  running"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=self.console,
            transient=True,
            refresh_per_second=8,
        )
        self._task = self._progress.add_task("cases", total=total)
        self._progress.start()

    def stop_progress(self) -> None:
        """Remove the progress bar (printing the lines it held back first)."""
        if self._progress is not None:
            self._flush(time.monotonic())
            self._progress.stop()
            self._progress = None

    def _flush(self, now: float) -> None:
        self._flushed = now
        if self._pending:
            lines, self._pending = self._pending, []
            self.console.print(Text("\n").join(lines))

    # -- events ------------------------------------------------------------------------

    def on_event(self, event: RunEvent) -> None:
        """Render one runner event."""
        if event.type == "test_result" and event.result is not None:
            if event.case is not None and event.case.is_dynamic:
                self.dynamic_block(event)
            else:
                self.result_line(event)
            if self._progress is not None:
                self._progress.advance(self._task)
        elif event.type == "log":
            if event.level == "warning":
                self.warning(event.message)
            elif event.level == "error":
                self.error(event.message)
            else:
                self.info(event.message)

    def result_line(self, event: RunEvent) -> None:
        """``► [id] input STATUS (duration)`` and the detail lines under it."""
        result = event.result
        assert result is not None and event.case is not None
        word, style = STATUS_STYLES[result.status]
        shown_input = input_text(event.case)
        line = Text.assemble(
            ("► ", "white"),
            (f"[{result.id}] ", "white"),
            (f"Run {event.run}: " if event.run else "", "white"),
            (preview(shown_input), "bright_black"),
            " " if shown_input.strip() else "",  # script tests have no input
            (word, style),
            (f" ({format_duration(result.duration_ms)})", "bright_black"),
        )
        self._print(line)
        if result.status in ("failed", "error", "timeout") and result.error:
            self._print(Text(f"  └─ {result.error}", style="red"))
        if self.verbose:
            for assertion in result.assertions:
                mark = "✓" if assertion.passed else "✗"
                detail = f" {assertion.message}" if assertion.message else ""
                self._print(Text(f"  │ {mark} {assertion.type}{detail}", style="bright_black"))
            if result.trace is not None:
                for retry in result.trace.retries or []:
                    self._print(
                        Text(
                            f"  │ retried a model call after {retry['kind']} "
                            f"(attempt {retry['attempt']}, waited {retry['delay_s']:g}s)",
                            style="yellow",
                        )
                    )
                for call in result.trace.tool_calls:
                    outcome = f"ERR: {preview(call.error, 60)}" if call.error else "OK"
                    arguments = preview(output_text(call.arguments), 80)
                    where = f"{call.server}/{call.tool}" if call.server else call.tool
                    self._print(
                        Text(
                            f"  │ tool {where} → {outcome} (args: {arguments})",
                            style="bright_black",
                        )
                    )
            for line in _printed(result):
                self._print(line)
            if result.output is not None:
                self._print(
                    Text(
                        f"  └─ Output: {preview(output_text(result.output), 100)}",
                        style="bright_black",
                    )
                )

    def dynamic_block(self, event: RunEvent) -> None:
        """A dynamic case as one block, printed when it ends so parallel cases never
        interleave: ``► [id] (dynamic, N checkpoints)``, with ``-v`` the conversation and
        ``✓ checkpoint: <id>`` marks, then ``└─ PASSED (T turns, R/N checkpoints, 8.5s)``."""
        result, case = event.result, event.case
        assert result is not None and case is not None
        word, style = STATUS_STYLES[result.status]
        turns = result.turns or []
        total = len(case.checkpoints)
        # Yao prints the total here whatever happened; reached/total says how far it got.
        reached = sum(1 for point in result.checkpoints or [] if point.reached)
        lines = [
            Text.assemble(
                (f"► [{result.id}] ", "white"),
                (f"Run {event.run}: " if event.run else "", "white"),
                (f"(dynamic, {total} checkpoints)", "cyan"),
            )
        ]
        if self.verbose:
            lines.append(_verbose(f"Dynamic test: {case.id} (max {case.max_turns} turns)"))
            for turn in turns:
                number = turn.turn
                lines.append(_verbose(f"Turn {number}: User: {preview(str(turn.input), 80)}"))
                for call in turn.tool_calls:
                    outcome = f"ERR: {preview(call.error, 60)}" if call.error else "OK"
                    lines.append(_verbose(f"Turn {number}: Tool: {call.tool} → {outcome}"))
                agent = preview(output_text(turn.output), 80)
                lines.append(_verbose(f"Turn {number}: Agent: {agent}"))
                lines.extend(
                    _verbose(f"  ✓ checkpoint: {point}") for point in turn.checkpoints_reached
                )
            for point in result.checkpoints or []:
                if point.required and not point.reached:
                    why = f": {point.message}" if point.message else ""
                    lines.append(_verbose(f"  ✗ checkpoint: {point.id} not reached{why}"))
            lines.extend(_printed(result))
        lines.append(
            Text.assemble(
                "  └─ ",
                (word, style),
                (
                    f" ({len(turns)} turn{'' if len(turns) == 1 else 's'}, "
                    f"{reached}/{total} checkpoints, {format_duration(result.duration_ms)})",
                    "bright_black",
                ),
            )
        )
        if result.status in ("failed", "error", "timeout") and result.error:
            lines.append(Text(f"  └─ {result.error}", style="red"))
        self._print(Text("\n").join(lines))

    def stability(self, stats: Any) -> None:
        """``[id] 80% (4/5) Mostly Stable avg 1.2s p95 2.0s`` once a case's runs are done."""
        label, style = STABILITY_STYLES.get(stats.stability, (stats.stability, "white"))
        rate = "-" if stats.pass_rate is None else f"{stats.pass_rate:g}%"
        duration = stats.duration or {}
        timing = ""
        if duration.get("avg") is not None:
            timing = (
                f" avg {format_duration(duration['avg'])} p95 {format_duration(duration['p95'])}"
            )
        self._print(
            Text.assemble(
                (f"[{stats.id}] ", "white"),
                (f"{rate} ({stats.passed}/{stats.runs}) {label}", style),
                (timing, "bright_black"),
            )
        )

    # -- the end -----------------------------------------------------------------------

    def summary(self, summary: RunSummary, output_path: str | None) -> None:
        """The summary block, the output path and the final banner."""
        self.stop_progress()
        self.section("Summary")
        rows: list[tuple[str, Any, str]] = [("Agent:", summary.agent_id, "cyan")]
        if summary.connector:
            rows.append(("Connector:", summary.connector, "cyan"))
        rows.append(("Total:", summary.total, ""))
        rows.append(("Passed:", summary.passed, "green" if summary.passed else ""))
        rows.append(("Failed:", summary.failed, "red" if summary.failed else ""))
        for key, label in (
            ("skipped", "Skipped:"),
            ("errors", "Errors:"),
            ("timeouts", "Timeouts:"),
        ):
            if getattr(summary, key):
                rows.append((label, getattr(summary, key), "red" if key != "skipped" else "yellow"))
        for label, value, style in rows:
            self._print(Text.assemble(f"  {label:<11}", (str(value), style)))
        rate = float(summary.pass_rate or 0.0)
        rate_style = "bold green" if rate >= 100 else "yellow" if rate >= 80 else "red"
        self._print(Text.assemble(f"  {'Pass Rate:':<11}", (f"{rate:.1f}%", rate_style)))
        self._print(f"  {'Duration:':<11}{format_duration(summary.duration_ms or 0)}")
        if summary.extra.get("runs_per_case"):
            self._stability_table(summary.extra)
        if output_path:
            self._print(f"\n  Output: {output_path}")

    def _stability_table(self, summary: dict[str, Any]) -> None:
        self._print("\n  Stability Analysis:")
        rows = [
            ("Runs/Case:", summary.get("runs_per_case")),
            ("Total Runs:", summary.get("total_runs")),
            ("Stable:", summary.get("stable")),
            ("Mostly Stable:", summary.get("mostly_stable")),
            ("Unstable:", summary.get("unstable")),
            ("Highly Unstable:", summary.get("highly_unstable")),
            ("Overall Rate:", f"{summary.get('overall_pass_rate') or 0:.1f}%"),
            ("Mean Case Rate:", f"{summary.get('mean_pass_rate') or 0:.1f}%"),
        ]
        for label, value in rows:
            self._print(f"    {label:<17}{value}")
        below = summary.get("cases_below_threshold") or []
        if below:
            threshold = summary.get("min_pass_rate", 100)
            self._print(Text(f"    Below {threshold:g}%:      {', '.join(below)}", style="red"))

    def output_file(self, path: str) -> None:
        """Where the results went (already shown in the summary)."""

    def dry_run_case(self, case: Any) -> None:
        """``○ [id] input`` for ``--dry-run``."""
        self._print(Text(f"  ○ [{case.id}] {preview(input_text(case), 80)}"))

    def direct_output(self, output: Any, trace: Any, duration_ms: float, error: str | None) -> None:
        """Message mode: the answer as is (objects as indented JSON), then the tool calls."""
        if error:
            self.error(error)
        if isinstance(output, str):
            self._print(redact_text(output))
        elif output is not None:
            text = json.dumps(redact_data(output), ensure_ascii=False, indent=2)
            self._print(text)
        if trace is not None and trace.tool_calls:
            self._print("\n--- Tool Calls ---")
            for call in trace.tool_calls:
                where = f"{call.server}/{call.tool}" if call.server else call.tool
                outcome = f"ERR: {preview(call.error, 60)}" if call.error else "OK"
                arguments = preview(output_text(call.arguments), 80)
                self._print(f"  {where} → {outcome} (args: {arguments})")

    def direct_error(self, message: str) -> None:
        """Message mode failed before an answer."""
        self.error(message)

    def banner(self, passed: bool) -> None:
        """The final banner."""
        rule = "═" * RULE_WIDTH
        if passed:
            self._print(Text(f"\n{rule}\n  ✨ ALL TESTS PASSED ✨\n{rule}\n", style="bold green"))
        else:
            self._print(Text(f"\n{rule}\n  ❌ TESTS FAILED\n{rule}\n", style="bold red"))


def _verbose(message: str) -> Text:
    """A grey ``│`` detail line."""
    return Text(f"  │ {message}", style="bright_black")


def _printed(result: Any) -> list[Text]:
    """``│ stdout: ...`` lines: what the case's hooks, tools and scripts printed."""
    return [
        Text(f"  │ {entry['stream']}: {entry['text']}", style="bright_black")
        for entry in result.logs or []
    ]


class JsonEvents:
    """``--json``: one JSON object per line on stdout, nothing else there."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout

    def emit(self, data: dict[str, Any]) -> None:
        """Write one event line (secrets redacted)."""
        self.out.write(json.dumps(redact_data(data), ensure_ascii=False, default=str) + "\n")
        self.out.flush()

    def on_event(self, event: RunEvent) -> None:
        """Translate a runner event."""
        if event.type == "output" and event.case is not None:
            data: dict[str, Any] = {
                "type": "log",
                "level": "warning" if event.stream == "stderr" else "info",
                "id": event.case.id,
                "stream": event.stream,
                "message": event.message,
            }
            if event.run:
                data["run"] = event.run
            self.emit(data)
        elif event.case is not None and event.case.is_dynamic:
            self._dynamic(event)
        elif event.type == "test_start" and event.case is not None:
            data = {
                "type": "test_start",
                "id": event.case.id,
                "input": input_text(event.case)[:200],
            }
            if event.run:
                data["run"] = event.run
            self.emit(data)
        elif event.type == "test_result" and event.result is not None:
            result = event.result
            data = {
                "type": "test_result",
                "id": result.id,
                "status": result.status,
                "duration_ms": result.duration_ms,
            }
            if event.run:
                data["run"] = event.run
            if result.error:
                data["error"] = result.error
            self.emit(data)
        elif event.type == "log":
            self.emit({"type": "log", "level": event.level, "message": event.message})

    def _dynamic(self, event: RunEvent) -> None:
        """``dynamic_start`` / ``dynamic_result`` in place of test_start / test_result."""
        case, result = event.case, event.result
        assert case is not None
        data: dict[str, Any]
        if event.type == "test_start":
            data = {
                "type": "dynamic_start",
                "id": case.id,
                "checkpoints": len(case.checkpoints),
                "max_turns": case.max_turns,
            }
        elif event.type == "test_result" and result is not None:
            reached = sum(1 for p in result.checkpoints or [] if p.reached)
            data = {
                "type": "dynamic_result",
                "id": result.id,
                "status": result.status,
                "turns": len(result.turns or []),
                "checkpoints": len(case.checkpoints),
                "checkpoints_reached": reached,
                "duration_ms": result.duration_ms,
            }
            if result.error:
                data["error"] = result.error
        else:
            return
        if event.run:
            data["run"] = event.run
        self.emit(data)

    def header(self, title: str = "") -> None:
        """Not part of the stream."""

    def section(self, title: str) -> None:
        """Not part of the stream."""

    def info(self, message: str) -> None:
        """A log event."""
        self.emit({"type": "log", "level": "info", "message": message})

    def warning(self, message: str) -> None:
        """A log event."""
        self.emit({"type": "log", "level": "warning", "message": message})

    def error(self, message: str) -> None:
        """A log event."""
        self.emit({"type": "log", "level": "error", "message": message})

    def start_progress(self, total: int) -> None:
        """No progress bar in the stream."""

    def stop_progress(self) -> None:
        """No progress bar in the stream."""

    def stability(self, stats: Any) -> None:
        """A case's stability figures, once its runs are done."""
        self.emit({"type": "stability", **stats.to_dict()})

    def summary(self, summary: RunSummary, output_path: str | None) -> None:
        """The summary event."""
        self.emit({"type": "summary", **summary.to_dict()})

    def output_file(self, path: str) -> None:
        """Where the results went."""
        self.emit({"type": "output_file", "path": path})

    def banner(self, passed: bool) -> None:
        """Not part of the stream."""

    def dry_run_case(self, case: Any) -> None:
        """One planned case."""
        self.emit({"type": "dry_run_case", "case": case.to_dict()})

    def direct_output(self, output: Any, trace: Any, duration_ms: float, error: str | None) -> None:
        """Message mode's single JSON object."""
        data: dict[str, Any] = {
            "type": "direct_output",
            "output": output,
            "duration_ms": duration_ms,
        }
        if trace is not None:
            data["trace"] = trace.to_dict()
        if error:
            data["error"] = error
        self.emit(data)

    def direct_error(self, message: str) -> None:
        """Message mode failed before an answer."""
        self.emit({"type": "direct_output", "output": None, "error": message})

"""The eval console view: Yao's layout, each block a small rich renderable
(``case_blocks``, ``run_blocks``), printed as the run goes.

Layout: a header, info lines (``ℹ Agent: ...``), ``Running Tests``, one line per result
(``► [id] input PASSED (1.2s)`` and ``└─ error``), a summary and a final banner. A live
progress line is shown on terminals only; in CI the output is plain lines. ``NO_COLOR`` is
honoured by rich.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from agentcli.cli.views.case_blocks import DryRunLine, DynamicBlock, ResultLine, StabilityLine
from agentcli.cli.views.recap import FailureRecap
from agentcli.cli.views.run_blocks import Banner, DirectOutput, Heading, Notice, SummaryBlock
from agentcli.cli.views.text import Block, preview, redacted
from agentcli.eval.reports._view import format_duration

if TYPE_CHECKING:
    from collections.abc import Mapping

    from rich.progress import Progress, TaskID

    from agentcli.eval.cases.model import Case
    from agentcli.eval.results.matrix import Matrix, MatrixPass
    from agentcli.eval.results.model import RunSummary, Trace
    from agentcli.eval.run.recap import RecapLists
    from agentcli.eval.run.view import RunEvent
    from agentcli.eval.stats.stability import CaseStability

__all__ = ["ConsoleView", "format_duration", "preview"]

_FLUSH_EVERY = 0.125  # seconds between batched prints under a live progress bar


def progress_bar(console: Console) -> Progress:
    """``running ━━━━━━╸━━━  40/100 ✓ 38 ✗ 2 0:00:12 ETA 0:00:18``: done of total, the
    passed and failed (errors and timeouts too) so far, elapsed and remaining time."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(
        TextColumn("  running"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("[green]✓ {task.fields[passed]}[/] [red]✗ {task.fields[failed]}[/]"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
        transient=True,
        refresh_per_second=8,
    )


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
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self._pending: list[Text] = []  # lines held while a progress bar is live
        self._recap: FailureRecap | None = None
        self._flushed = 0.0

    def show(self, block: Block) -> None:
        """Print a block, line by line."""
        for line in block.lines():
            self._print(line)

    def _print(self, line: Text) -> None:
        """One line: rendered by rich on a terminal; written as plain text otherwise (CI logs,
        files), which costs a tenth as much per result line. Every line is redacted here, so
        no output, error or assertion message shows a secret."""
        if not self.console.is_terminal:
            self.console.file.write(redacted(line).plain + "\n")
            return
        text = redacted(line)
        if self._progress is None:
            self.console.print(text)
            return
        # Under a live progress bar every print redraws the bar: batch the lines and print
        # them together a few times a second.
        self._pending.append(text)
        now = time.monotonic()
        if now - self._flushed >= _FLUSH_EVERY:
            self._flush(now)

    # -- sections ----------------------------------------------------------------------

    def header(self, title: str = "Agent Test") -> None:
        """The double rule with the title."""
        self.show(Heading(title, rule="═", style="bold cyan"))

    def section(self, title: str) -> None:
        """A single-rule sub-header."""
        self.show(Heading(title))

    def info(self, message: str) -> None:
        """An ``ℹ`` line."""
        self.show(Notice(message, "info"))

    def warning(self, message: str) -> None:
        """A ``⚠`` line."""
        self.show(Notice(message, "warning"))

    def error(self, message: str) -> None:
        """A ``✗`` line."""
        self.show(Notice(message, "error"))

    # -- progress ----------------------------------------------------------------------

    def start_progress(self, total: int) -> None:
        """A live progress bar under the result lines (interactive terminals only: in CI
        logs and files the result lines are the progress)."""
        if not self.show_progress or total <= 1:
            return
        self._progress = progress_bar(self.console)
        self._task = self._progress.add_task("cases", total=total, passed=0, failed=0)
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
            assert event.case is not None
            if event.retrying:  # the "retrying" warning says it; the last attempt is shown
                return
            if event.case.is_dynamic:
                # One line: parallel cases never interleave inside a conversation.
                lines = DynamicBlock(event.case, event.result, event.run, self.verbose).lines()
                self._print(Text("\n").join(lines))
            else:
                self.show(ResultLine(event.case, event.result, event.run, self.verbose))
            if self._progress is not None and self._task is not None:
                counts = self._progress.tasks[0].fields
                key = "passed" if event.result.status == "passed" else "failed"
                if event.result.status != "skipped":
                    counts[key] += 1
                self._progress.advance(self._task)
        elif event.type == "log":
            self.show(Notice(event.message, event.level))

    def stability(self, stats: CaseStability) -> None:
        """A case's stability figures, once its runs are done."""
        self.show(StabilityLine(stats))

    # -- the end -----------------------------------------------------------------------

    def failures(self, recap: RecapLists, classes: Mapping[str, int]) -> None:
        """Kept for the summary, after which the recap is shown."""
        self._recap = FailureRecap(recap) if recap else None

    def summary(self, summary: RunSummary, output_path: str | None) -> None:
        """The summary block and the output path, then the recap of what did not pass."""
        self.stop_progress()
        self.show(SummaryBlock(summary, output_path))
        if self._recap is not None:
            self.show(self._recap)

    def matrix(self, grid: Matrix, mode: MatrixPass, min_pass_rate: float) -> None:
        """The connector matrix, case by connector, after the summary."""
        from agentcli.cli.views.matrix_table import MatrixTable

        self.show(MatrixTable(grid, mode, min_pass_rate, width=self.console.width))

    def output_file(self, path: str) -> None:
        """Where the results went (already shown in the summary)."""

    def dry_run_case(self, case: Case) -> None:
        """``○ [id] input`` for ``--dry-run``."""
        self.show(DryRunLine(case))

    def direct_output(
        self, output: Any, trace: Trace | None, duration_ms: float, error: str | None
    ) -> None:
        """Message mode: the answer as is (objects as indented JSON), then the tool calls."""
        self.show(DirectOutput(output, trace, error))

    def direct_error(self, message: str) -> None:
        """Message mode failed before an answer."""
        self.error(message)

    def banner(self, passed: bool) -> None:
        """The final banner."""
        self.show(Banner(passed))

"""The console's end-of-run recap: one line per case that failed, errored or timed out, with
who it is on and why (pytest's "short test summary"), cut to fit 80 columns. Under
``--runs`` the failed runs of a case that met ``--min-pass-rate`` follow as ``FLAKY``: they
are not failures (the run passes), but worth a look."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text

from agentcli.choices import ATTRIBUTIONS
from agentcli.cli.views.run_blocks import Heading
from agentcli.cli.views.text import STATUS_STYLES, Block, preview
from agentcli.eval.results.model import cell_label
from agentcli.words import counted

if TYPE_CHECKING:
    from agentcli.eval.run.recap import Failure, RecapLists

__all__ = ["FailureRecap"]

WIDTH = 80  # a line of the recap fits a classic terminal
_STATUS_WIDTH = max(len(word) for word, _ in STATUS_STYLES.values())
_FLAKY = ("FLAKY", "yellow")
_FAILED_AS = {"failed": "failed", "error": "errored", "timeout": "timed out"}


@dataclass(slots=True)
class FailureRecap(Block):
    """``Short Summary``: the failing cases (how many are on each attribution class in the
    title), then the flaky ones."""

    recap: RecapLists
    limit: int | None = None  # lines listed (None: every one), the rest counted

    def lines(self) -> list[Text]:
        """The heading, then ``STATUS [id] (runs ...) class: reason`` per failure and
        ``FLAKY [id] (runs ... failed) class: reason`` per flaky case."""
        failing, flaky = self.recap.failing, self.recap.flaky
        title = f"Short Summary: {counted(len(failing), 'failing case')}"
        classes = Counter(failure.attribution for failure in failing if failure.attribution)
        if classes:
            ordered = [(name, classes[name]) for name in ATTRIBUTIONS if classes[name]]
            title += " (" + ", ".join(f"{n} {name}" for name, n in ordered) + ")"
        if flaky:
            title += f", {len(flaky):,} flaky (met --min-pass-rate {self.recap.min_pass_rate:g}%)"
        lines = Heading(title).lines()
        every = [(failure, False) for failure in failing] + [(failure, True) for failure in flaky]
        shown = every if self.limit is None else every[: self.limit]
        lines.extend(self._line(failure, is_flaky) for failure, is_flaky in shown)
        if len(shown) < len(every):
            lines.append(Text(f"  … and {len(every) - len(shown):,} more", style="red"))
        return lines

    @staticmethod
    def _line(failure: Failure, flaky: bool) -> Text:
        """One failure, its reason cut to what is left of the line."""
        word, style = _FLAKY if flaky else STATUS_STYLES[failure.status]
        where = f"[{cell_label(failure.id, failure.connector)}]"
        if failure.runs:
            label = "run" if len(failure.runs) == 1 else "runs"
            how = f" {_FAILED_AS.get(failure.status, failure.status)}" if flaky else ""
            where += f" ({label} {', '.join(map(str, failure.runs))}{how})"
        who = f" {failure.attribution}:" if failure.attribution else ":"
        head = f"  {word:<{_STATUS_WIDTH}} {preview(where, 40)}{who} "
        room = max(WIDTH - len(head), 20)
        return Text.assemble(
            (head[: 2 + _STATUS_WIDTH], style),
            head[2 + _STATUS_WIDTH :],
            preview(failure.reason, room),
        )

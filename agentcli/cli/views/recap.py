"""The console's end-of-run recap: one line per case that failed, errored or timed out, with
who it is on and why (pytest's "short test summary"), cut to fit 80 columns."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text

from agentcli.choices import ATTRIBUTIONS
from agentcli.cli.views.run_blocks import Heading
from agentcli.cli.views.text import STATUS_STYLES, Block, preview
from agentcli.eval.results.model import cell_label
from agentcli.words import counted

if TYPE_CHECKING:
    from agentcli.eval.run.recap import Failure

__all__ = ["FailureRecap"]

WIDTH = 80  # a line of the recap fits a classic terminal
_STATUS_WIDTH = max(len(word) for word, _ in STATUS_STYLES.values())


@dataclass(slots=True)
class FailureRecap(Block):
    """``Short Summary``: the failures, how many are on each attribution class in the title."""

    failures: Sequence[Failure]
    limit: int | None = None  # failures listed (None: every one), the rest counted

    def lines(self) -> list[Text]:
        """The heading, then ``STATUS [id] (runs ...) class: reason`` per failure."""
        count = len(self.failures)
        title = f"Short Summary: {counted(count, 'failing case')}"
        classes = Counter(failure.attribution for failure in self.failures if failure.attribution)
        if classes:
            ordered = [(name, classes[name]) for name in ATTRIBUTIONS if classes[name]]
            title += " (" + ", ".join(f"{n} {name}" for name, n in ordered) + ")"
        lines = Heading(title).lines()
        shown = self.failures if self.limit is None else self.failures[: self.limit]
        lines.extend(self._line(failure) for failure in shown)
        if len(shown) < count:
            lines.append(Text(f"  … and {count - len(shown):,} more", style="red"))
        return lines

    @staticmethod
    def _line(failure: Failure) -> Text:
        """One failure, its reason cut to what is left of the line."""
        word, style = STATUS_STYLES[failure.status]
        where = f"[{cell_label(failure.id, failure.connector)}]"
        if failure.runs:
            label = "run" if len(failure.runs) == 1 else "runs"
            where += f" ({label} {', '.join(map(str, failure.runs))})"
        who = f" {failure.attribution}:" if failure.attribution else ":"
        head = f"  {word:<{_STATUS_WIDTH}} {preview(where, 40)}{who} "
        room = max(WIDTH - len(head), 20)
        return Text.assemble(
            (head[: 2 + _STATUS_WIDTH], style),
            head[2 + _STATUS_WIDTH :],
            preview(failure.reason, room),
        )

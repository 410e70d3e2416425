"""``agent report FILE`` without ``-o``: what the results file says, as the end of the run
that wrote it looked (its summary, its recap of what did not pass), and how to render it."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text

from agentcli.cli.views.recap import FailureRecap
from agentcli.cli.views.run_blocks import SummaryBlock
from agentcli.cli.views.text import Block
from agentcli.eval.results.codec import finite
from agentcli.eval.results.model import header_names, summary_from_counts
from agentcli.eval.run.recap import recap_of

if TYPE_CHECKING:
    from agentcli.eval.results.reader import LoadedReport

__all__ = ["RECAP_LIMIT", "ResultsSummary"]

RECAP_LIMIT = 20  # failures listed; the rendered report has them all


@dataclass(slots=True)
class ResultsSummary(Block):
    """The summary of a results file ``path`` as read (``loaded``)."""

    loaded: LoadedReport
    path: str

    def lines(self) -> list[Text]:
        """The summary, the recap, the hint."""
        loaded = self.loaded
        lines: list[Text] = []
        summary = loaded.summary
        if summary is None:  # an unfinished run (the reader says so): counted from its results
            statuses: Counter[str] = Counter(result.status for result in loaded.results)
            agent_id, connector = header_names(loaded.header)  # named when the run began
            summary = summary_from_counts(
                statuses, agent_id=agent_id or "-", connector=connector, duration_ms=0
            )
            summary.duration_ms = None  # shown as "-": the run's wall time is not known
        lines += SummaryBlock(summary).lines()
        lines.append(Text(f"  {'Results:':<11}{self.path}"))
        bar = finite(summary.extra.get("min_pass_rate"))  # the bar its run was held to
        if recap := recap_of(loaded.results, 100.0 if bar is None else bar):
            lines += FailureRecap(recap, limit=RECAP_LIMIT).lines()
        lines.append(Text(f"\n  Render it: agent report {self.path} -o report.html"))
        return lines

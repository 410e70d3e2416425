"""``--max-cost``: stop starting cases once what the run spent would pass the limit.

"Would": before a case starts, the run projects what the cases in flight and this one will
cost at the mean cost of the cases finished so far; when that projection passes the limit
the case is skipped. Cases already running finish (their spend is sunk), so the limit can
be overshot by at most what the cases in flight cost beyond the mean.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentcli.models.pricing import format_usd

__all__ = ["CostBudget"]


@dataclass(slots=True)
class CostBudget:
    """The limit, what finished cases spent, and how many were skipped for it."""

    limit: float
    spent: float = 0.0
    finished: int = 0  # cases whose cost is in ``spent``
    skipped: int = 0

    def add(self, cost: float | None) -> None:
        """A case finished having cost ``cost`` (None: nothing reported a cost)."""
        self.finished += 1
        self.spent += cost or 0.0

    def refusal(self, in_flight: int) -> str | None:
        """Why the next case may not start, or None when it may."""
        mean = self.spent / self.finished if self.finished else 0.0
        projected = self.spent + mean * (in_flight + 1)
        if projected <= self.limit:
            return None
        self.skipped += 1
        return (
            f"not run: --max-cost {format_usd(self.limit)} would be exceeded "
            f"({format_usd(self.spent)} spent, {format_usd(mean)} a case)"
        )

    @property
    def cut(self) -> bool:
        """True when the limit stopped at least one case."""
        return self.skipped > 0

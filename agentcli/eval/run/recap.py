"""The end-of-run recap: every failed, errored or timed-out case with a one-line reason and
who it is on (pytest's "short test summary"), and the count of each attribution class.

Built from the results as they come (kept ones first), holding only the failures, so a run
of 100,000 passing cases keeps nothing here.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from agentcli.choices import ATTRIBUTIONS, Attribution
from agentcli.eval.results.model import CaseResult, Status

__all__ = ["Failure", "Recap", "reason_of"]

_FAILING: frozenset[str] = frozenset(("failed", "error", "timeout"))
_REASON_LIMIT = 500  # characters of a reason kept: one line, not a stack of output


@dataclass(slots=True)
class Failure:
    """One case that did not pass with one status (under ``--runs``: the runs it did so in;
    in a connector matrix, on ``connector``)."""

    id: str
    status: Status
    reason: str
    attribution: Attribution | None = None
    runs: list[int] = field(default_factory=list)
    connector: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{id, status, reason[, connector][, attribution][, runs]}``."""
        data: dict[str, Any] = {"id": self.id, "status": self.status, "reason": self.reason}
        if self.connector is not None:
            data["connector"] = self.connector
        if self.attribution is not None:
            data["attribution"] = self.attribution
        if self.runs:
            data["runs"] = list(self.runs)
        return data


def reason_of(result: CaseResult) -> str:
    """Why a result did not pass, in one line: its error, else its first failed assertion's
    message, else its status."""
    text = result.error or next((a.message for a in result.assertions if not a.passed), "")
    line = next((part.strip() for part in str(text).splitlines() if part.strip()), "")
    return (line or result.status)[:_REASON_LIMIT]


class Recap:
    """The failures of a run, in the order their cases first failed, one per (case, status)
    (in a connector matrix: per cell and status)."""

    def __init__(self) -> None:
        self._failures: dict[tuple[str, str | None, str], Failure] = {}
        self.classes: Counter[str] = Counter()

    def add(self, result: CaseResult) -> None:
        """Note ``result`` when it failed, errored or timed out."""
        if result.status not in _FAILING:
            return
        if result.attribution is not None:
            self.classes[result.attribution] += 1
        key = (result.id, result.connector, result.status)
        known = self._failures.get(key)
        if known is None:
            known = self._failures[key] = Failure(
                result.id,
                result.status,
                reason_of(result),
                result.attribution,
                connector=result.connector,
            )
        if result.run is not None:
            known.runs.append(result.run)

    def failures(self) -> list[Failure]:
        """Every failure, in order."""
        return list(self._failures.values())

    def counts(self) -> dict[str, int]:
        """Failed results per attribution class, in ``ATTRIBUTIONS`` order (classes with
        none left out)."""
        return {name: self.classes[name] for name in ATTRIBUTIONS if self.classes[name]}

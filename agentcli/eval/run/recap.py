"""The end-of-run recap: every failed, errored or timed-out case with a one-line reason and
who it is on (pytest's "short test summary"), and the count of each attribution class.

Built from the results as they come (kept ones first), holding only the failures, so a run
of 100,000 passing cases keeps nothing here. Under ``--runs`` a case fails only when its pass
rate is below ``--min-pass-rate`` (as the exit code and ``--rerun`` judge it): the failed
runs of a case that met the bar are told apart as flaky, not as failures. ``Recap.lists``
is the one place that sorts them, for every view (console, ``--json``, ``agent report``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from agentcli.choices import ATTRIBUTIONS, Attribution
from agentcli.eval.results.model import CaseResult, Status
from agentcli.eval.stats.stability import CaseStability, stability_for_case

__all__ = ["Failure", "Recap", "RecapLists", "reason_of", "recap_of"]

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


@dataclass(slots=True)
class RecapLists:
    """What the recap shows: the cases that failed (under ``--runs``: below the bar) and the
    failed runs of cases that still met ``min_pass_rate`` (``flaky``; only under ``--runs``)."""

    failing: list[Failure] = field(default_factory=list)
    flaky: list[Failure] = field(default_factory=list)
    min_pass_rate: float = 100.0

    def __bool__(self) -> bool:
        return bool(self.failing or self.flaky)


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

    def lists(
        self, stability: Iterable[CaseStability] = (), min_pass_rate: float = 100.0
    ) -> RecapLists:
        """The failures, in order, split by the bar: one whose case (matrix cell) has
        ``stability`` figures that meet ``min_pass_rate`` is flaky, every other one failing
        (outside ``--runs`` there are no figures: all of them)."""
        met = {(stats.id, stats.connector) for stats in stability if stats.meets(min_pass_rate)}
        lists = RecapLists(min_pass_rate=min_pass_rate)
        for failure in self._failures.values():
            flaky = (failure.id, failure.connector) in met
            (lists.flaky if flaky else lists.failing).append(failure)
        return lists

    def counts(self) -> dict[str, int]:
        """Failed results per attribution class, in ``ATTRIBUTIONS`` order (classes with
        none left out)."""
        return {name: self.classes[name] for name in ATTRIBUTIONS if self.classes[name]}


def recap_of(results: Iterable[CaseResult], min_pass_rate: float = 100.0) -> RecapLists:
    """The recap of a results file's ``results``, held to the bar its run was held to: the
    stability figures are computed from the runs, as the run that wrote them did."""
    recap = Recap()
    runs: dict[tuple[str, str | None], list[CaseResult]] = {}
    for result in results:
        recap.add(result)
        if result.run is not None:
            runs.setdefault(result.cell, []).append(result)
    stability = [
        stability_for_case(cell[0], cell_runs, cell[1]) for cell, cell_runs in runs.items()
    ]
    return recap.lists(stability, min_pass_rate)

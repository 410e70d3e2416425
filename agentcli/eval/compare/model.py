"""The typed value of a comparison: a ``RunDiff`` of two runs, one ``CaseChange`` per case.

Every renderer (console, JSON, Markdown, HTML) and the ``--baseline`` gate read these and
nothing else, so a later view (a connector matrix, a viewer) can reuse them as they are.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from agentcli.eval.results.model import Status, ToolCall

__all__ = [
    "CHANGE_KINDS",
    "KIND_TITLES",
    "METRICS",
    "CaseChange",
    "CaseSide",
    "ChangeKind",
    "Metric",
    "MetricChange",
    "RunDiff",
    "RunSource",
    "Significance",
    "Threshold",
    "Thresholds",
    "ToolCallChange",
    "ToolChangeKind",
]

# What became of a case, in the order every renderer lists them.
ChangeKind = Literal[
    "regression",  # passed in the base, fails now (under --runs: a significant fall)
    "fix",  # failed in the base, passes now (under --runs: a significant rise)
    "still_failing",  # failed in both
    "not_significant",  # passed in one, failed in the other, within the noise of repeats
    "passing",  # passed in both
    "added",  # only in the new run
    "removed",  # only in the base
    "skipped",  # every run of it skipped on one side
]
CHANGE_KINDS: tuple[ChangeKind, ...] = get_args(ChangeKind)
KIND_TITLES: dict[ChangeKind, str] = {
    "regression": "Regressions",
    "fix": "Fixes",
    "still_failing": "Still failing",
    "not_significant": "Changed, not significant",
    "passing": "Passing",
    "added": "New cases",
    "removed": "Removed cases",
    "skipped": "Skipped",
}
ToolChangeKind = Literal["added", "removed", "changed"]
Metric = Literal["duration_ms", "tokens", "cost"]
METRICS: tuple[Metric, ...] = get_args(Metric)


@dataclass(frozen=True, slots=True)
class RunSource:
    """Where one side came from: the file as named, its start time, how many results."""

    label: str
    started_at: str | None = None
    results: int = 0
    min_pass_rate: float = 100.0  # the bar a case's repeats had to reach in that run
    # The connector a run that was no matrix ran on (its header's): against a matrix its
    # cases pair with that connector's cells. None for a matrix, or when the file names none.
    connector: str | None = None


@dataclass(frozen=True, slots=True)
class CaseSide:
    """One case in one run: its statuses (one per run, in run order) and what it did."""

    statuses: tuple[Status, ...]
    passed: int
    counted: int  # runs that were not skipped
    duration_ms: float | None = None  # mean over the counted runs that have one
    tokens: float | None = None  # mean total tokens per counted run
    cost: float | None = None  # mean cost per counted run, when known
    output: str | None = None  # the output as text, when the case ran once
    tool_calls: tuple[ToolCall, ...] = ()  # when the case ran once
    reason: str = ""  # why its last failing run failed, on one line

    @property
    def failed(self) -> int:
        """Counted runs that did not pass (failed, error, timeout)."""
        return self.counted - self.passed

    @property
    def rate(self) -> float:
        """Passed / counted runs (0 when none counted)."""
        return self.passed / self.counted if self.counted else 0.0

    @property
    def single(self) -> bool:
        """The case ran once here (no repeats)."""
        return len(self.statuses) == 1

    def passes(self, min_pass_rate: float) -> bool:
        """Whether the case passed: its counted runs reach ``min_pass_rate`` (%)."""
        return self.counted > 0 and self.rate * 100 >= min_pass_rate

    def status_text(self) -> str:
        """``passed`` for one run, ``3/5 passed`` for repeats."""
        if self.single:
            return self.statuses[0]
        return f"{self.passed}/{self.counted} passed"


@dataclass(frozen=True, slots=True)
class Significance:
    """The test of a case's repeat counts: its name, p-value and the level it is held to."""

    test: str
    p_value: float
    alpha: float

    @property
    def significant(self) -> bool:
        """p < alpha."""
        return self.p_value < self.alpha


@dataclass(frozen=True, slots=True)
class ToolCallChange:
    """A tool call added, removed, or called with other arguments (paired by name)."""

    kind: ToolChangeKind
    tool: str
    server: str = ""
    before: Any = None  # the base call's arguments (removed, changed)
    after: Any = None  # the new call's arguments (added, changed)

    @property
    def name(self) -> str:
        """``tool`` or ``tool (server)``."""
        return f"{self.tool} ({self.server})" if self.server else self.tool


@dataclass(frozen=True, slots=True)
class MetricChange:
    """A duration (ms), token or cost figure that moved past its threshold."""

    metric: Metric
    before: float
    after: float

    @property
    def delta(self) -> float:
        """After minus before."""
        return self.after - self.before

    @property
    def ratio(self) -> float | None:
        """After / before (``None`` from zero)."""
        return self.after / self.before if self.before else None


@dataclass(frozen=True, slots=True)
class Threshold:
    """A change counts when it is at least ``absolute`` and at least ``relative`` of the
    base value: run-to-run jitter of a few ms or tokens is not news."""

    relative: float
    absolute: float

    def exceeded(self, before: float, after: float) -> bool:
        """Whether ``before -> after`` is a change worth reporting."""
        change = abs(after - before)
        if change < self.absolute:
            return False
        return before == 0 or change / abs(before) >= self.relative


@dataclass(frozen=True, slots=True)
class Thresholds:
    """The noise floor of each metric (documented in docs/eval.md, "Comparing runs")."""

    duration_ms: Threshold = Threshold(relative=0.5, absolute=500.0)
    tokens: Threshold = Threshold(relative=0.2, absolute=50.0)
    cost: Threshold = Threshold(relative=0.2, absolute=0.001)

    def of(self, metric: Metric) -> Threshold:
        """The threshold of ``metric``."""
        threshold: Threshold = getattr(self, metric)
        return threshold


@dataclass(slots=True)
class CaseChange:
    """What became of one case between the base run and the new one."""

    id: str
    kind: ChangeKind
    base: CaseSide | None = None  # None: not in the base run (added)
    new: CaseSide | None = None  # None: not in the new run (removed)
    significance: Significance | None = None  # repeats only: the test of the counts
    output_diff: list[str] = field(default_factory=list)  # unified diff lines; [] = same
    tool_changes: list[ToolCallChange] = field(default_factory=list)
    metric_changes: list[MetricChange] = field(default_factory=list)

    @property
    def has_details(self) -> bool:
        """Its output, tool calls or metrics changed."""
        return bool(self.output_diff or self.tool_changes or self.metric_changes)


@dataclass(slots=True)
class RunDiff:
    """Two runs compared case by case; ``cases`` in the new run's order, then the removed."""

    base: RunSource
    new: RunSource
    cases: list[CaseChange]
    alpha: float = 0.05
    thresholds: Thresholds = field(default_factory=Thresholds)
    notes: list[str] = field(default_factory=list)  # what was left out, and why

    def of_kind(self, kind: ChangeKind) -> list[CaseChange]:
        """The cases of one kind, in order."""
        return [case for case in self.cases if case.kind == kind]

    def counts(self) -> dict[ChangeKind, int]:
        """How many cases of each kind (every kind, zero included)."""
        counts = dict.fromkeys(CHANGE_KINDS, 0)
        for case in self.cases:
            counts[case.kind] += 1
        return counts

    @property
    def regressions(self) -> list[CaseChange]:
        """The regressions: what ``agent diff``'s exit code and ``--gate regressions`` see."""
        return self.of_kind("regression")

    @property
    def repeats(self) -> bool:
        """Some case ran more than once on a side (``--runs``): counts were tested."""
        return any(
            side is not None and not side.single
            for case in self.cases
            for side in (case.base, case.new)
        )

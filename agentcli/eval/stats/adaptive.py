"""``--runs auto``: how many times to repeat a case before its pass rate is decided.

Each case is a sequence of Bernoulli trials tested with Wald's sequential probability ratio
test (A. Wald, "Sequential Tests of Statistical Hypotheses", Ann. Math. Statist. 16(2),
1945; see NIST/SEMATECH e-Handbook §7.2.4.1 or Wikipedia "Sequential probability ratio
test" for the Bernoulli form used here). For a bar ``θ`` (``--min-pass-rate``) it weighs

- H0: the case passes at ``p0 = θ − 0.20`` (clearly below the bar) against
- H1: the case passes at ``p1 = θ + 0.15`` (clearly above it),

both kept within [0.01, 0.99]. After n runs with c passes the log-likelihood ratio is
``c·ln(p1/p0) + (n−c)·ln((1−p1)/(1−p0))``; the case is decided once it reaches
``ln((1−β)/α)`` (passes) or falls to ``ln(β/(1−α))`` (fails), with α = β = 0.05: a case that
truly passes at p0 is let through, or one at p1 held back, at most 5% of the time.

No case is decided before ``min_runs``: the fewest runs in which all-passing runs reach the
upper bound (7 at θ = 80%), so a case that always passes is decided in exactly that many
and every case gets at least that sample. A case still undecided at ``max_runs`` stops
there. Either way the verdict is what ``--runs N`` gives: the exact pass rate of the runs
made against ``θ`` (with ``max_runs`` ≤ 12 at θ = 80% the test never stops a case on the
other side of the bar from that rate). A Wilson interval would not do: with every run
passing it excludes 80% only from 16 runs on, past the default budget of 10.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from agentcli.eval.results.model import CaseResult

__all__ = ["DEFAULT_AUTO_PASS_RATE", "DEFAULT_MAX_RUNS", "FLOOR_RUNS", "SequentialTest"]

DEFAULT_MAX_RUNS = 10
DEFAULT_AUTO_PASS_RATE = 80.0  # percent: --min-pass-rate under --runs auto when not given
FLOOR_RUNS = 3  # never decide from fewer runs, whatever the bar
ALPHA = BETA = 0.05
BELOW, ABOVE = 0.20, 0.15  # how far from the bar H0 and H1 lie

Decision = Literal["pass", "fail"]


def _clamp(p: float) -> float:
    return min(max(p, 0.01), 0.99)


@dataclass(frozen=True, slots=True)
class SequentialTest:
    """The stopping rule of ``--runs auto`` for a bar of ``min_pass_rate`` percent."""

    min_pass_rate: float = DEFAULT_AUTO_PASS_RATE
    max_runs: int = DEFAULT_MAX_RUNS

    @property
    def p0(self) -> float:
        """The pass rate of H0, a case clearly below the bar."""
        return _clamp(self.min_pass_rate / 100 - BELOW)

    @property
    def p1(self) -> float:
        """The pass rate of H1, a case clearly above the bar."""
        return _clamp(self.min_pass_rate / 100 + ABOVE)

    @property
    def upper(self) -> float:
        """The log-likelihood ratio at which a case passes."""
        return math.log((1 - BETA) / ALPHA)

    @property
    def lower(self) -> float:
        """The log-likelihood ratio at which a case fails."""
        return math.log(BETA / (1 - ALPHA))

    @property
    def min_runs(self) -> int:
        """Runs before any decision: the fewest in which passing runs alone decide a pass
        (at least ``FLOOR_RUNS``, at most ``max_runs``)."""
        needed = math.ceil(self.upper / math.log(self.p1 / self.p0) - 1e-9)
        return min(max(needed, FLOOR_RUNS), self.max_runs)

    def ratio(self, passed: int, runs: int) -> float:
        """The log-likelihood ratio of H1 over H0 after ``passed`` of ``runs``."""
        p0, p1 = self.p0, self.p1
        return passed * math.log(p1 / p0) + (runs - passed) * math.log((1 - p1) / (1 - p0))

    def decide(self, passed: int, runs: int) -> Decision | None:
        """``pass`` or ``fail`` once ``runs`` are enough to tell, else None (run again).
        At ``max_runs`` the exact rate decides."""
        if runs >= self.max_runs:
            return "pass" if passed * 100 >= self.min_pass_rate * runs else "fail"
        if runs < self.min_runs:
            return None
        ratio = self.ratio(passed, runs)
        if ratio >= self.upper:
            return "pass"
        if ratio <= self.lower:
            return "fail"
        return None

    def done(self, results: Sequence[CaseResult]) -> bool:
        """Whether a case with these runs (in order) needs no more: decided, or skipped
        (a skipped run stays skipped; it says nothing about the pass rate)."""
        if not results:
            return False
        if results[-1].status == "skipped":
            return True
        counted = [result for result in results if result.status != "skipped"]
        passed = sum(1 for result in counted if result.status == "passed")
        return self.decide(passed, len(counted)) is not None

    def next_run(self, kept: Sequence[CaseResult]) -> int | None:
        """The run a case continues from under ``--resume``, given the runs it kept (in
        run order): the one after them, or None when they already decided it. Sound for
        this test: its decision after n runs depends on those n runs alone, so a case
        that kept k undecided runs goes on exactly as it would have without the stop."""
        if self.done(kept):
            return None
        return max((result.run or 1 for result in kept), default=0) + 1

    def saving(self, cases: int, runs_used: int) -> dict[str, float | int]:
        """The figures of the summary's ``adaptive``: the bar and bounds, the runs made,
        what ``--runs max_runs`` would have made, and the difference."""
        fixed = cases * self.max_runs
        saved = fixed - runs_used
        return {
            "min_pass_rate": self.min_pass_rate,
            "min_runs": self.min_runs,
            "max_runs": self.max_runs,
            "runs_used": runs_used,
            "fixed_runs": fixed,
            "saved_runs": saved,
            "saved_pct": round(saved / fixed * 100, 2) if fixed else 0.0,
        }

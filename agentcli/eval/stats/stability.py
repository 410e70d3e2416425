"""Statistics of stability runs (``--runs N``): per-case figures, the summary, a live tracker.

Conventions (the report writers in ``reports/_view.py`` read these shapes):

- ``pass_rate``, ``ci_low``, ``ci_high`` and the summary rates are **percentages**, rounded
  to 2 decimals like ``summarize``'s ``pass_rate``; ``pass_hat_k`` and ``pass_at_k`` are
  ``{"k": probability}`` maps (0-1, 4 decimals) for k = 1..runs, keyed by strings so a
  report reads back equal to what was written.
- A run counts when its status is not ``skipped``: skipped runs are reported (``skipped``)
  but left out of ``runs`` and every rate, as ``summarize`` leaves skipped cases out of its
  pass rate. A case whose every run was skipped has no rate and the label ``skipped``.
- The class comes from the exact rate (``passed / runs``), not the rounded one, so 99.999%
  is ``mostly_stable`` although it is shown as 100.0; ``--min-pass-rate`` compares exactly.
- Durations are milliseconds over the counted runs: min/max as measured, avg/p50/p95/std
  rounded to 0.1 ms; std is the **population** standard deviation (divides by n), as Yao's
  ``std_deviation_ms``, because the runs are the whole population being described.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from agentcli.eval.results.codec import usage_dict
from agentcli.eval.results.model import CaseResult, Usage, cell_label

__all__ = [
    "CLASSES",
    "SKIPPED",
    "CaseStability",
    "StabilityTracker",
    "classify",
    "duration_stats",
    "pass_at_k",
    "pass_hat_k",
    "percentile",
    "stability_for_case",
    "stability_summary",
    "wilson_interval",
]

CLASSES = ("stable", "mostly_stable", "unstable", "highly_unstable")
SKIPPED = "skipped"  # the label of a case none of whose runs counted

# -- estimators -----------------------------------------------------------------------------


def wilson_interval(passed: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of ``passed / n`` as fractions; ``(0.0, 1.0)`` when n = 0."""
    if not 0 <= passed <= n:
        raise ValueError(f"need 0 <= passed <= n, got passed={passed}, n={n}")
    if n == 0:
        return 0.0, 1.0
    p = passed / n
    z2 = z * z
    denominator = 1 + z2 / n
    center = (p + z2 / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denominator
    # At 0/n and n/n the bound is exactly 0 or 1; floating point would leave 0.9999999.
    low = 0.0 if passed == 0 else max(0.0, center - half)
    high = 1.0 if passed == n else min(1.0, center + half)
    return low, high


def _check_counts(n: int, c: int, k: int) -> None:
    """Reject counts the estimators are not defined for."""
    if not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n, got c={c}, n={n}")
    if not 1 <= k <= n:
        raise ValueError(f"need 1 <= k <= n, got k={k}, n={n}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """P(at least one of k runs passes), unbiased from n runs with c passes (Chen et al. 2021)."""
    _check_counts(n, c, k)
    # math.comb is 0 when k > n - c: every k-subset then holds a pass and this gives 1.
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """P(all of k runs pass), unbiased from n runs with c passes (tau-bench's pass^k)."""
    _check_counts(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def percentile(values: Sequence[float], p: float) -> float:
    """The p-th percentile (0-100) by linear interpolation between order statistics.

    This is numpy's default (``method="linear"``): rank h = (n - 1) * p / 100, result
    x[floor(h)] + (h - floor(h)) * (x[floor(h) + 1] - x[floor(h)]) over the sorted values.
    ``statistics.quantiles(method="inclusive")`` interpolates the same way but computes
    (x[j] * (n - d) + x[j + 1] * d) / n, which differs in the last bit for about one input
    in five (and gives no 0th or 100th percentile, nor any of one value before 3.13), so
    the figures in results files stay this formula's.
    """
    if not values:
        raise ValueError("percentile of no values")
    if not 0 <= p <= 100:
        raise ValueError(f"percentile must be within 0..100, got {p}")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * p / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (rank - low) * (ordered[high] - ordered[low])


# Decimals of every duration figure: a result's ``duration_ms`` has as many (µs), so min and
# max stay as their results wrote them. One precision for all keeps their order: rounding
# is monotonic, so min <= avg, p50 <= p95 <= max hold after it as before.
_DURATION_DECIMALS = 3


def duration_stats(values: Sequence[float]) -> dict[str, float | None]:
    """``{min, avg, p50, p95, max, std}`` in ms (population std), each rounded to
    ``_DURATION_DECIMALS``; all ``None`` for no values."""
    if not values:
        return dict.fromkeys(("min", "avg", "p50", "p95", "max", "std"))
    mean = math.fsum(values) / len(values)
    variance = math.fsum((value - mean) ** 2 for value in values) / len(values)
    figures = {
        "min": min(values),
        "avg": mean,
        "p50": percentile(values, 50),
        "p95": percentile(values, 95),
        "max": max(values),
        "std": math.sqrt(variance),
    }
    return {key: round(value, _DURATION_DECIMALS) for key, value in figures.items()}


def classify(pass_rate_percent: float) -> str:
    """``stable`` at 100%, ``mostly_stable`` >= 80, ``unstable`` >= 50, else ``highly_unstable``."""
    if pass_rate_percent >= 100:
        return "stable"
    if pass_rate_percent >= 80:
        return "mostly_stable"
    return "unstable" if pass_rate_percent >= 50 else "highly_unstable"


# -- one case -------------------------------------------------------------------------------


def _total_usage(usages: Iterable[Usage]) -> Usage:
    """The summed usage of runs; cost ``None`` if never known."""
    total = Usage()
    costs: list[float] = []
    reported = 0
    for usage in usages:
        total.input_tokens += usage.input_tokens
        total.output_tokens += usage.output_tokens
        reported += usage.total_tokens
        if usage.cost is not None:
            costs.append(usage.cost)
    if reported != total.total_tokens:
        total.total = reported
    # 8 decimals: sub-cent prices summed in floating point would otherwise show 0.0012000000001.
    total.cost = round(math.fsum(costs), 8) if costs else None
    return total


def _usage(result: CaseResult) -> Usage:
    """A run's usage (none without a trace)."""
    return result.trace.usage if result.trace is not None else Usage()


@dataclass(slots=True)
class CaseStability:
    """The figures of one case's runs; rates in percent, pass^k / pass@k as ``{k: p}``."""

    id: str
    runs: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    timeouts: int = 0
    skipped: int = 0
    pass_rate: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    pass_hat_k: dict[int, float] = field(default_factory=dict)
    pass_at_k: dict[int, float] = field(default_factory=dict)
    stability: str = SKIPPED
    duration: dict[str, float | None] = field(default_factory=lambda: duration_stats([]))
    usage: Usage = field(default_factory=Usage)
    faults: str | None = None  # the fault plan its runs ran under: pass^k is robustness
    connector: str | None = None  # the matrix column of these runs (None outside a matrix)

    @property
    def exact_rate(self) -> float | None:
        """The unrounded pass rate in percent (``None`` when no run counted)."""
        return self.passed / self.runs * 100 if self.runs else None

    def meets(self, min_pass_rate: float) -> bool:
        """True when the case's exact rate is at least ``min_pass_rate`` (or nothing counted)."""
        return self.runs == 0 or self.passed * 100 >= min_pass_rate * self.runs

    def to_dict(self) -> dict[str, Any]:
        """JSON form: the writers' ``id .. duration`` keys first, then counts and usage
        (and ``faults`` when the runs ran under them, the matrix column in a matrix)."""
        data: dict[str, Any] = {
            "id": self.id,
            "runs": self.runs,
            "passed": self.passed,
            "pass_rate": self.pass_rate,
            "pass_hat_k": {str(k): v for k, v in self.pass_hat_k.items()},
            "pass_at_k": {str(k): v for k, v in self.pass_at_k.items()},
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "stability": self.stability,
            "duration": dict(self.duration),
            "failed": self.failed,
            "errors": self.errors,
            "timeouts": self.timeouts,
            "skipped": self.skipped,
            "usage": usage_dict(self.usage),
        }
        if self.faults is not None:
            data["faults"] = self.faults
        if self.connector is not None:
            data["connector"] = self.connector
        return data


def stability_for_case(
    case_id: str,
    runs: Iterable[CaseResult],
    connector: str | None = None,
    *,
    faults: str | None = None,
) -> CaseStability:
    """The stability figures of one case (of one matrix column) from its run results
    (``faults``: the plan they ran under)."""
    # Every figure is order-free (counts, sorted durations, fsum of costs), so runs that
    # finished in any order give the same result.
    results = list(runs)
    statuses = [result.status for result in results]
    counted = [r.duration_ms or 0 for r in results if r.status != "skipped"]
    n, passed = len(counted), statuses.count("passed")
    stats = CaseStability(
        id=case_id,
        runs=n,
        passed=passed,
        failed=statuses.count("failed"),
        errors=statuses.count("error"),
        timeouts=statuses.count("timeout"),
        skipped=statuses.count("skipped"),
        duration=duration_stats(counted),
        usage=_total_usage(_usage(result) for result in results),
        faults=faults,
        connector=connector,
    )
    if n:
        low, high = wilson_interval(passed, n)
        stats.pass_rate = round(passed / n * 100, 2)
        stats.ci_low, stats.ci_high = round(low * 100, 2), round(high * 100, 2)
        stats.pass_hat_k = {k: round(pass_hat_k(n, passed, k), 4) for k in range(1, n + 1)}
        stats.pass_at_k = {k: round(pass_at_k(n, passed, k), 4) for k in range(1, n + 1)}
        stats.stability = classify(passed / n * 100)
    return stats


def stability_summary(
    case_stats: Iterable[CaseStability], *, min_pass_rate: float = 100.0
) -> dict[str, Any]:
    """Summary fields of a stability run, merged into the report ``summary``.

    ``total_runs`` and ``overall_pass_rate`` (passed runs / runs) count the runs that ran;
    ``mean_pass_rate`` averages the per-case rates; cases with no counted run appear only in
    ``cases`` and ``skipped_cases``.
    """
    stats = list(case_stats)
    rated = [s for s in stats if s.runs]
    total_runs = sum(s.runs for s in rated)
    passed_runs = sum(s.passed for s in rated)
    counts = {label: sum(1 for s in rated if s.stability == label) for label in CLASSES}
    mean = math.fsum(s.passed / s.runs * 100 for s in rated) / len(rated) if rated else 0.0
    return {
        "cases": len(stats),
        "total_runs": total_runs,
        "passed_runs": passed_runs,
        **counts,
        "skipped_cases": len(stats) - len(rated),
        "overall_pass_rate": round(passed_runs / total_runs * 100, 2) if total_runs else 0.0,
        "mean_pass_rate": round(mean, 2),
        "min_pass_rate": min_pass_rate,
        "cases_below_threshold": [
            cell_label(s.id, s.connector) for s in rated if not s.meets(min_pass_rate)
        ],
    }


# -- live tracking --------------------------------------------------------------------------


class StopRule(Protocol):
    """When a case's runs are enough (``--runs auto``: ``adaptive.SequentialTest``)."""

    def done(self, results: Sequence[CaseResult]) -> bool:
        """Whether a case with these runs, in run order, needs no more."""
        ...


class StabilityTracker:
    """Collects runs as they finish (any order) and reports per-case figures deterministically.

    ``results()`` lists the declared case ids in declaration order, then any undeclared ids
    sorted, so parallel runs finishing in any order give the same report. In a matrix a
    case of each column is tracked on its own: the ``connector`` arguments name the column.
    """

    def __init__(
        self,
        case_ids: Iterable[str] = (),
        *,
        runs: int = 1,
        faults: dict[str, str] | None = None,
        stop: StopRule | None = None,
    ) -> None:
        if runs < 1:
            raise ValueError(f"runs must be at least 1, got {runs}")
        self.runs = runs
        self.faults = faults or {}  # case id -> the fault plan its runs ran under
        self.stop = stop  # --runs auto: a case is done when this says so (runs: at most)
        self._order: dict[_Cell, int] = {}
        self._runs: dict[_Cell, dict[int, CaseResult]] = {}
        for case_id in case_ids:
            self.declare(case_id)

    def declare(self, case_id: str, connector: str | None = None) -> None:
        """Fix the report position of ``case_id`` (a case generated during the run, say)."""
        self._order.setdefault((case_id, connector), len(self._order))

    def add(self, result: CaseResult) -> CaseStability | None:
        """Record one finished run; returns the case's figures when that was its last run."""
        cell, run = result.cell, result.run
        runs = self._runs.setdefault(cell, {})
        index = run if run is not None else len(runs) + 1
        if index in runs:
            raise ValueError(f"run {index} of case {cell_label(*cell)!r} was recorded twice")
        runs[index] = result
        return self.stats(*cell) if self.done(*cell) else None

    def done(self, case_id: str, connector: str | None = None) -> bool:
        """True when every one of the case's ``runs`` runs has been recorded (under
        ``--runs auto``: when its stopping rule says so)."""
        runs = self._runs.get((case_id, connector), {})
        if len(runs) >= self.runs:
            return True
        return self.stop is not None and self.stop.done([runs[i] for i in sorted(runs)])

    def stats(self, case_id: str, connector: str | None = None) -> CaseStability:
        """The case's figures over the runs recorded so far."""
        runs = self._runs.get((case_id, connector), {}).values()
        return stability_for_case(case_id, runs, connector, faults=self.faults.get(case_id))

    def can_still_reach(
        self,
        case_id: str,
        runs_total: int | None = None,
        min_pass_rate: float = 100.0,
        connector: str | None = None,
    ) -> bool:
        """False when the case can no longer reach ``min_pass_rate`` even if every run left passes."""
        recorded = list(self._runs.get((case_id, connector), {}).values())
        statuses = [result.status for result in recorded]
        remaining = max(0, (runs_total or self.runs) - len(recorded))
        counted = len(statuses) - statuses.count("skipped") + remaining
        best_passed = statuses.count("passed") + remaining
        return counted == 0 or best_passed * 100 >= min_pass_rate * counted

    def _cells(self) -> list[_Cell]:
        """Cases with runs: declared ones in order, then the others sorted."""
        declared = sorted((c for c in self._runs if c in self._order), key=self._order.__getitem__)
        others = sorted((c for c in self._runs if c not in self._order), key=_sort_key)
        return declared + others

    def results(self) -> list[CaseStability]:
        """Figures of every case with at least one run, in a deterministic order."""
        return [self.stats(*cell) for cell in self._cells()]

    def ordered_runs(self) -> list[CaseResult]:
        """Every recorded run, case by case (as ``results()``), each case by run index."""
        return [
            self._runs[cell][index] for cell in self._cells() for index in sorted(self._runs[cell])
        ]


_Cell = tuple[str, str | None]  # a case id and its matrix column (None outside a matrix)


def _sort_key(cell: _Cell) -> tuple[str, str]:
    """Undeclared cells sort by id, then column."""
    return cell[0], cell[1] or ""

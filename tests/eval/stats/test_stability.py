"""Stability statistics against hand-computed and published values; the live tracker."""

from __future__ import annotations

import math
import random
import statistics
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentcli.eval.results.codec import usage_dict
from agentcli.eval.results.model import CaseResult, Trace, Usage
from agentcli.eval.stats.stability import (
    CLASSES,
    SKIPPED,
    CaseStability,
    StabilityTracker,
    classify,
    duration_stats,
    pass_at_k,
    pass_hat_k,
    percentile,
    stability_for_case,
    stability_summary,
    wilson_interval,
)


def _wilson_by_hand(c: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The closed form written out independently: (p + z²/2n ± z√(p(1-p)/n + z²/4n²)) / (1 + z²/n)."""
    p = c / n
    a = p + z**2 / (2 * n)
    b = z * math.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))
    d = 1 + z**2 / n
    return (a - b) / d, (a + b) / d


def run_dict(case_id: str, index: int, status: str, duration: int = 100, **extra: Any) -> dict:
    return {
        "id": case_id,
        "status": status,
        "input": "hi",
        "output": "ok",
        "duration_ms": duration,
        "assertions": [],
        "run": index,
        **extra,
    }


def run(case_id: str, index: int, status: str, duration: int = 100, **extra: Any) -> CaseResult:
    """One run's result, as the reader reads it."""
    return CaseResult.from_dict(run_dict(case_id, index, status, duration, **extra))


# -- Wilson ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("c", "n"), [(0, 10), (5, 10), (10, 10), (7, 9), (1, 1), (2, 3)])
def test_wilson_matches_the_closed_form(c: int, n: int) -> None:
    low, high = wilson_interval(c, n)
    want_low, want_high = _wilson_by_hand(c, n)
    assert low == pytest.approx(max(0.0, want_low), abs=1e-12)
    assert high == pytest.approx(min(1.0, want_high), abs=1e-12)


@pytest.mark.parametrize(
    ("c", "n", "low", "high"),
    [
        # Rounded figures from tables of the Wilson score interval at 95%.
        (0, 10, 0.0, 0.2775),
        (5, 10, 0.2366, 0.7634),
        (10, 10, 0.7225, 1.0),
        (7, 9, 0.4526, 0.9368),
        # Newcombe (1998), "Two-sided confidence intervals for the single proportion",
        # Table I, method 3 (score interval without continuity correction).
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ],
)
def test_wilson_matches_published_values(c: int, n: int, low: float, high: float) -> None:
    got = wilson_interval(c, n)
    assert round(got[0], 4) == low
    assert round(got[1], 4) == high


def test_wilson_edges_are_exact_and_symmetric() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)
    assert wilson_interval(0, 7)[0] == 0.0
    assert wilson_interval(7, 7)[1] == 1.0
    low, high = wilson_interval(3, 10)
    mirror = wilson_interval(7, 10)
    assert low == pytest.approx(1 - mirror[1]) and high == pytest.approx(1 - mirror[0])
    # A wider z gives a wider interval.
    assert wilson_interval(5, 10, z=2.576)[0] < wilson_interval(5, 10)[0]
    for bad in ((-1, 5), (6, 5), (0, -1)):
        with pytest.raises(ValueError):
            wilson_interval(*bad)


@given(st.integers(1, 200).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_contains_the_point_estimate(counts: tuple[int, int]) -> None:
    c, n = counts
    low, high = wilson_interval(c, n)
    assert 0.0 <= low <= c / n <= high <= 1.0


# -- pass@k and pass^k -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "c", "k", "at", "hat"),
    [
        # pass@k = 1 - C(n-c,k)/C(n,k); pass^k = C(c,k)/C(n,k), fractions worked by hand.
        (5, 2, 2, Fraction(7, 10), Fraction(1, 10)),  # 1 - C(3,2)/C(5,2) = 1 - 3/10
        (10, 3, 5, Fraction(11, 12), Fraction(0)),  # 1 - C(7,5)/C(10,5) = 1 - 21/252
        (10, 7, 3, Fraction(119, 120), Fraction(7, 24)),  # 1 - 1/120; 35/120
        (4, 3, 1, Fraction(3, 4), Fraction(3, 4)),  # k = 1: both are c/n
        (3, 2, 3, Fraction(1), Fraction(0)),  # k = n: any pass / all pass
        (3, 3, 3, Fraction(1), Fraction(1)),  # c = n
        (6, 0, 2, Fraction(0), Fraction(0)),  # c = 0
        (6, 0, 6, Fraction(0), Fraction(0)),  # c = 0, k = n
        (6, 6, 1, Fraction(1), Fraction(1)),
        (1, 1, 1, Fraction(1), Fraction(1)),
        (1, 0, 1, Fraction(0), Fraction(0)),
    ],
)
def test_pass_at_k_and_pass_hat_k(n: int, c: int, k: int, at: Fraction, hat: Fraction) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(float(at), abs=1e-12)
    assert pass_hat_k(n, c, k) == pytest.approx(float(hat), abs=1e-12)


def test_pass_k_with_large_n_stays_finite() -> None:
    # C(1000, 500) is far beyond a float; the exact integers keep the ratio right.
    assert pass_hat_k(1000, 999, 500) == pytest.approx(0.5)
    assert pass_at_k(1000, 1, 500) == pytest.approx(0.5)


@pytest.mark.parametrize(("n", "c", "k"), [(3, 4, 1), (3, -1, 1), (3, 1, 0), (3, 1, 4), (0, 0, 1)])
def test_pass_k_rejects_undefined_counts(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)
    with pytest.raises(ValueError):
        pass_hat_k(n, c, k)


@given(st.integers(1, 30).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))))
def test_pass_k_monotone_in_k(counts: tuple[int, int]) -> None:
    n, c = counts
    ats = [pass_at_k(n, c, k) for k in range(1, n + 1)]
    hats = [pass_hat_k(n, c, k) for k in range(1, n + 1)]
    assert ats == sorted(ats) and hats == sorted(hats, reverse=True)
    assert ats[0] == pytest.approx(c / n) and hats[0] == pytest.approx(c / n)


# -- percentiles and durations --------------------------------------------------------------


def test_percentile_is_linear_interpolation_like_numpy() -> None:
    values = [1000, 100, 400, 200, 300]  # sorted: 100 200 300 400 1000
    assert percentile(values, 50) == 300  # rank 2
    # rank (5-1)*0.95 = 3.8 -> 400 + 0.8 * (1000 - 400) = 880 (numpy.percentile gives 880.0)
    assert percentile(values, 95) == pytest.approx(880)
    # rank 3*0.95 = 2.85 over 1 2 3 10 -> 3 + 0.85 * 7 = 8.95
    assert percentile([3, 1, 2, 10], 95) == pytest.approx(8.95)
    assert percentile([1, 2], 95) == pytest.approx(1.95)
    assert percentile([5], 95) == 5
    assert percentile(values, 0) == 100 and percentile(values, 100) == 1000
    for bad in (-1, 101):
        with pytest.raises(ValueError):
            percentile(values, bad)
    with pytest.raises(ValueError):
        percentile([], 50)


def test_percentile_is_not_statistics_quantiles() -> None:
    """Why percentile is not ``statistics.quantiles``: the same interpolation, rounded
    differently, so switching would change figures in results files."""
    values = [1.0, 1.0, 231423.08442849663, 231423.08442849663]
    ours = percentile(values, 95)  # rank 2.85 between two equal values: exact
    theirs = statistics.quantiles(values, n=20, method="inclusive")[18]
    assert ours == 231423.08442849663
    assert theirs == pytest.approx(ours) and theirs != ours


def test_duration_stats_by_hand() -> None:
    stats = duration_stats([100, 200, 300])
    # population std: sqrt(((-100)² + 0 + 100²) / 3) = sqrt(6666.67) = 81.65
    assert stats == {"min": 100, "avg": 200.0, "p50": 200.0, "p95": 290.0, "max": 300, "std": 81.65}
    assert list(stats) == ["min", "avg", "p50", "p95", "max", "std"]
    assert duration_stats([7]) == {
        "min": 7,
        "avg": 7.0,
        "p50": 7.0,
        "p95": 7.0,
        "max": 7,
        "std": 0.0,
    }
    assert duration_stats([]) == dict.fromkeys(["min", "avg", "p50", "p95", "max", "std"])


def test_duration_figures_share_one_precision_so_they_keep_their_order() -> None:
    # Sub-millisecond offline runs, as a --runs 5 run of a scripted assistant measured them:
    # avg and p50 rounded to 0.1 ms beside min and max as written gave avg 0.3 < min 0.317.
    runs = [0.317, 0.342, 0.32, 0.335, 0.336]
    stats = duration_stats(runs)
    assert stats == {
        "min": 0.317, "avg": 0.33, "p50": 0.335, "p95": 0.341, "max": 0.342, "std": 0.01,
    }  # fmt: skip
    assert stats["min"] <= stats["avg"] <= stats["max"]
    assert stats["min"] <= stats["p50"] <= stats["p95"] <= stats["max"]
    # Finer durations than a result writes are rounded with the others (min and max too).
    equal = duration_stats([0.31749] * 3)
    assert equal["min"] == equal["avg"] == equal["p50"] == equal["max"] == 0.317


# -- classes --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rate", "label"),
    [
        (100, "stable"),
        (100.0, "stable"),
        (99.99, "mostly_stable"),
        (80, "mostly_stable"),
        (79.99, "unstable"),
        (50, "unstable"),
        (49.99, "highly_unstable"),
        (0, "highly_unstable"),
    ],
)
def test_classification_boundaries(rate: float, label: str) -> None:
    assert classify(rate) == label


# -- one case -------------------------------------------------------------------------------


def test_stability_for_case_figures() -> None:
    usage = {"input_tokens": 10, "output_tokens": 5, "cost": 0.0004}
    runs = [
        run("c", 1, "passed", 100, trace={"usage": usage}),
        run("c", 2, "failed", 200, trace={"usage": usage}),
        run("c", 3, "passed", 300, trace={"usage": usage}),
        run("c", 4, "skipped", 0),
        run("c", 5, "error", 400),
        run("c", 6, "timeout", 500),
    ]
    stats = stability_for_case("c", runs)
    assert (stats.runs, stats.passed, stats.failed, stats.errors, stats.timeouts, stats.skipped) == (
        5, 2, 1, 1, 1, 1,
    )  # fmt: skip
    assert stats.pass_rate == 40.0
    low, high = _wilson_by_hand(2, 5)
    assert stats.ci_low == round(low * 100, 2) and stats.ci_high == round(high * 100, 2)
    assert stats.pass_hat_k == {1: 0.4, 2: 0.1, 3: 0.0, 4: 0.0, 5: 0.0}  # C(2,2)/C(5,2) = 1/10
    assert stats.pass_at_k == {1: 0.4, 2: 0.7, 3: 0.9, 4: 1.0, 5: 1.0}  # 1 - C(3,3)/C(5,3) = 0.9
    assert stats.stability == "highly_unstable"
    assert stats.duration["min"] == 100 and stats.duration["max"] == 500  # skipped run left out
    assert stats.duration["avg"] == 300.0
    assert usage_dict(stats.usage) == {
        "input_tokens": 30,
        "output_tokens": 15,
        "total_tokens": 45,
        "cost": 0.0012,  # rounded, not 0.0012000000000000001
    }


def test_to_dict_has_the_writers_keys_first_and_string_k() -> None:
    data = stability_for_case("c", [run("c", 1, "passed"), run("c", 2, "failed")]).to_dict()
    assert list(data)[:10] == [
        "id", "runs", "passed", "pass_rate", "pass_hat_k", "pass_at_k",
        "ci_low", "ci_high", "stability", "duration",
    ]  # fmt: skip
    assert data["pass_hat_k"] == {"1": 0.5, "2": 0.0}
    assert data["pass_at_k"] == {"1": 0.5, "2": 1.0}
    assert data["pass_rate"] == 50.0 and 0 <= data["ci_low"] <= 50 <= data["ci_high"] <= 100
    assert data["usage"]["cost"] is None


def test_results_built_and_read_back_give_the_same_figures() -> None:
    built = [
        CaseResult(id="c", status=s, duration_ms=10 * i, run=i, trace=Trace(usage=Usage(i)))
        for i, s in enumerate(["passed", "failed", "passed"], 1)
    ]
    read = [
        run("c", i, s, 10 * i, trace={"usage": {"input_tokens": i}})
        for i, s in enumerate(["passed", "failed", "passed"], 1)
    ]
    assert isinstance(read[0].trace, Trace)
    assert stability_for_case("c", built) == stability_for_case("c", read)


def test_rounded_rate_does_not_change_the_class() -> None:
    runs = [run("c", i, "passed") for i in range(1, 2000)] + [run("c", 2000, "failed")]
    stats = stability_for_case("c", runs)
    # A rate that rounds to 100.0 must still be mostly_stable and fail a 100% threshold.
    assert stats.pass_rate == 99.95 and stats.stability == "mostly_stable"
    shown_as_100 = CaseStability(id="c", runs=100_000, passed=99_999, pass_rate=100.0)
    assert shown_as_100.exact_rate == pytest.approx(99.999)
    assert not shown_as_100.meets(100.0) and shown_as_100.meets(99.99)
    assert classify(shown_as_100.exact_rate) == "mostly_stable"


def test_all_skipped_case_has_no_rate() -> None:
    stats = stability_for_case("s", [run("s", 1, "skipped"), run("s", 2, "skipped")])
    assert stats.runs == 0 and stats.skipped == 2
    assert stats.pass_rate is None and stats.ci_low is None and stats.ci_high is None
    assert stats.pass_hat_k == {} and stats.pass_at_k == {}
    assert stats.stability == SKIPPED
    assert stats.meets(100.0)


def test_meets_compares_exactly() -> None:
    stats = _case("c", "ppf")
    assert stats.pass_rate == 66.67
    assert stats.meets(66.66) and not stats.meets(66.67)  # exact rate is 66.666…
    assert stats.meets(0.0) and not stats.meets(100.0)


# -- summary --------------------------------------------------------------------------------


def _case(case_id: str, statuses: str) -> CaseStability:
    names = {"p": "passed", "f": "failed", "e": "error", "s": "skipped"}
    return stability_for_case(
        case_id, [run(case_id, i, names[s]) for i, s in enumerate(statuses, 1)]
    )


def test_stability_summary() -> None:
    stats = [
        _case("a", "ppppp"),  # 100  stable
        _case("b", "ppppf"),  # 80   mostly_stable
        _case("c", "ppfff"),  # 40   highly_unstable
        _case("d", "pf"),  # 50   unstable
        _case("e", "ss"),  # nothing counted
    ]
    summary = stability_summary(stats, min_pass_rate=80)
    assert summary == {
        "cases": 5,
        "total_runs": 17,
        "passed_runs": 12,
        "stable": 1,
        "mostly_stable": 1,
        "unstable": 1,
        "highly_unstable": 1,
        "skipped_cases": 1,
        "overall_pass_rate": 70.59,  # passed runs / runs = 12 / 17
        "mean_pass_rate": 67.5,  # (100 + 80 + 40 + 50) / 4
        "min_pass_rate": 80,
        "cases_below_threshold": ["c", "d"],
    }
    assert stability_summary(stats)["cases_below_threshold"] == ["b", "c", "d"]
    empty = stability_summary([])
    assert empty["cases"] == 0 and empty["overall_pass_rate"] == 0.0
    assert set(CLASSES) <= set(empty)


# -- tracker --------------------------------------------------------------------------------


def _all_runs() -> list[dict]:
    plan = {"alpha": "pfpp", "beta": "pppp", "gamma": "ffpf"}
    names = {"p": "passed", "f": "failed"}
    return [
        run(
            case_id, i, names[s], duration=17 * i + len(case_id), trace={"usage": {"cost": 0.1 * i}}
        )
        for case_id, statuses in plan.items()
        for i, s in enumerate(statuses, 1)
    ]


def test_tracker_is_deterministic_whatever_the_finish_order() -> None:
    reference = None
    for seed in range(20):
        shuffled = _all_runs()
        random.Random(seed).shuffle(shuffled)
        tracker = StabilityTracker(["gamma", "alpha", "beta"], runs=4)
        for result in shuffled:
            tracker.add(result)
        figures = [s.to_dict() for s in tracker.results()]
        order = [(r.id, r.run) for r in tracker.ordered_runs()]
        if reference is None:
            reference = (figures, order)
        assert (figures, order) == reference
    assert [f["id"] for f in reference[0]] == ["gamma", "alpha", "beta"]
    assert reference[1][:4] == [("gamma", 1), ("gamma", 2), ("gamma", 3), ("gamma", 4)]
    assert [f["pass_rate"] for f in reference[0]] == [25.0, 75.0, 100.0]


def test_tracker_add_reports_a_case_when_its_last_run_lands() -> None:
    tracker = StabilityTracker(["a"], runs=3)
    assert tracker.add(run("a", 3, "passed")) is None
    assert not tracker.done("a")
    assert tracker.add(run("a", 1, "failed")) is None
    finished = tracker.add(run("a", 2, "passed"))
    assert finished is not None and finished.runs == 3 and finished.passed == 2
    assert tracker.done("a") and not tracker.done("never-seen")
    with pytest.raises(ValueError, match="twice"):
        tracker.add(run("a", 2, "passed"))


def test_tracker_orders_undeclared_cases_after_declared_sorted() -> None:
    tracker = StabilityTracker(["z"], runs=1)
    for case_id in ("m", "z", "b"):
        tracker.add(run(case_id, 1, "passed"))
    tracker.declare("declared-but-never-run")
    assert [s.id for s in tracker.results()] == ["z", "b", "m"]


def test_tracker_accepts_case_results() -> None:
    tracker = StabilityTracker(["x"], runs=2)
    tracker.add(CaseResult(id="x", status="passed", run=2, duration_ms=5))
    done = tracker.add(CaseResult(id="x", status="failed", run=1, duration_ms=7))
    assert done is not None and done.pass_rate == 50.0 and done.duration["max"] == 7


def test_can_still_reach() -> None:
    tracker = StabilityTracker(["c"], runs=5)
    assert tracker.can_still_reach("c", 5, 100.0)  # nothing ran yet
    tracker.add(run("c", 1, "failed"))
    assert not tracker.can_still_reach("c", 5, 100.0)  # best is 4/5
    assert tracker.can_still_reach("c", 5, 80.0)  # 4/5 still possible
    tracker.add(run("c", 2, "error"))
    assert not tracker.can_still_reach("c", 5, 80.0)  # best 3/5 = 60
    assert tracker.can_still_reach("c", 5, 60.0)
    assert tracker.can_still_reach("c", None, 60.0)  # runs_total defaults to the tracker's
    tracker.add(run("c", 3, "skipped"))
    # skipped leaves the denominator: best is 2 more passes of 4 counted = 50%
    assert tracker.can_still_reach("c", 5, 50.0) and not tracker.can_still_reach("c", 5, 50.01)
    tracker.add(run("c", 4, "passed"))
    tracker.add(run("c", 5, "passed"))
    final = tracker.stats("c")
    assert final.pass_rate == 50.0
    assert tracker.can_still_reach("c", 5, 50.0) == final.meets(50.0)
    assert tracker.can_still_reach("other", 5, 100.0)


def test_tracker_rejects_zero_runs() -> None:
    with pytest.raises(ValueError):
        StabilityTracker(runs=0)

"""--runs auto's stopping rule: Wald's SPRT against the bar, a minimum, a maximum, and the
verdict of fixed runs."""

from __future__ import annotations

import math

import pytest

from agentcli.eval.results.model import CaseResult
from agentcli.eval.stats.adaptive import SequentialTest


def runs(*statuses: str) -> list[CaseResult]:
    return [CaseResult(id="c", status=s, run=i) for i, s in enumerate(statuses, 1)]  # type: ignore[arg-type]


def test_the_hypotheses_lie_either_side_of_the_bar_within_bounds():
    test = SequentialTest(80.0)
    assert (round(test.p0, 2), round(test.p1, 2)) == (0.6, 0.95)
    assert round(test.upper, 4) == round(math.log(19), 4) == -round(test.lower, 4)
    low, high = SequentialTest(5.0), SequentialTest(100.0)
    assert (low.p0, round(high.p1, 2)) == (0.01, 0.99)


@pytest.mark.parametrize(("bar", "minimum"), [(50, 4), (60, 5), (80, 7), (90, 9), (100, 10)])
def test_the_minimum_is_the_fewest_runs_that_can_decide_a_pass(bar, minimum):
    test = SequentialTest(float(bar))
    assert test.min_runs == minimum
    if minimum < test.max_runs:
        assert test.decide(minimum, minimum) == "pass"
        assert test.decide(minimum - 1, minimum - 1) is None


def test_a_case_always_passing_is_decided_in_the_minimum():
    test = SequentialTest(80.0)
    assert not test.done(runs(*["passed"] * 6))
    assert test.done(runs(*["passed"] * 7))


def test_a_case_clearly_failing_stops_at_the_minimum_and_a_borderline_one_runs_on():
    test = SequentialTest(80.0)
    assert test.decide(4, 7) == "fail"
    assert test.decide(5, 7) is None and test.decide(6, 8) is None
    assert test.decide(8, 10) == "pass" and test.decide(7, 10) == "fail"  # the max: exact rate


@pytest.mark.parametrize("bar", [50.0, 60.0, 70.0, 80.0])
def test_within_the_default_budget_no_decision_contradicts_the_exact_rate(bar):
    test = SequentialTest(bar)
    for n in range(1, test.max_runs + 1):
        for passed in range(n + 1):
            decision = test.decide(passed, n)
            if decision is not None:
                meets = passed * 100 >= bar * n
                assert decision == ("pass" if meets else "fail"), (bar, passed, n)


def test_a_skipped_case_is_done_at_once_and_skips_do_not_count():
    test = SequentialTest(80.0)
    assert test.done(runs("skipped"))
    assert not test.done([])
    assert not test.done(runs("skipped", *["passed"] * 6))  # six counted runs
    assert test.done(runs("skipped", *["passed"] * 7))


def test_the_saving_against_fixed_runs():
    assert SequentialTest(80.0).saving(cases=10, runs_used=74) == {
        "min_pass_rate": 80.0,
        "min_runs": 7,
        "max_runs": 10,
        "runs_used": 74,
        "fixed_runs": 100,
        "saved_runs": 26,
        "saved_pct": 26.0,
    }


def test_a_resumed_case_goes_on_after_its_kept_runs_unless_they_decided_it():
    test = SequentialTest(80.0)
    assert test.next_run([]) == 1  # nothing kept: from the first run
    assert test.next_run(runs(*["passed"] * 7)) is None  # decided: kept as it is
    assert test.next_run(runs("passed", "failed")) == 3  # too few to decide: run 3 next
    borderline = runs(*["passed"] * 6, "failed")
    assert not test.done(borderline) and test.next_run(borderline) == 8
    # it then decides exactly as the uninterrupted sequence does, run by run
    whole = runs(*["passed"] * 6, "failed", "passed", "passed", "passed")
    assert [test.done(whole[:n]) for n in range(7, 11)] == [False, False, False, True]
    assert test.next_run(runs("passed", "skipped")) is None  # a skipped run stays skipped
    gap = [CaseResult(id="c", status="passed", run=n) for n in (1, 2, 5)]
    assert test.next_run(gap) == 6  # never a run number the file already holds

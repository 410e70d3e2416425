"""The end-of-run recap at 80 columns, exact text."""

from __future__ import annotations

from agentcli.cli.views.recap import FailureRecap
from agentcli.eval.results.model import AssertionResult, CaseResult
from agentcli.eval.run.recap import Failure, Recap, RecapLists, reason_of, recap_of
from agentcli.eval.stats.stability import CaseStability
from tests.cli.views.blocks import rendered

RULE1 = "─" * 63


def test_the_recap_lists_each_failure_with_its_class_and_reason_within_80_columns():
    recap = FailureRecap(
        RecapLists(
            [
                Failure("wrong", "failed", 'expected output to contain "sum=6"', "agent"),
                Failure("hiccup", "error", "[provider_error] upstream hiccup", "infra", [2, 5]),
                Failure("slow", "timeout", "timed out after 300ms", "infra", [1]),
                Failure("long", "failed", "the judge said: " + "word " * 40, "judge"),
                Failure("bare", "error", "before script failed"),
            ]
        )
    )
    assert rendered(recap).splitlines() == [
        "",
        RULE1,
        "  Short Summary: 5 failing cases (1 agent, 1 judge, 2 infra)",
        RULE1,
        '  FAILED  [wrong] agent: expected output to contain "sum=6"',
        "  ERROR   [hiccup] (runs 2, 5) infra: [provider_error] upstream hiccup",
        "  TIMEOUT [slow] (run 1) infra: timed out after 300ms",
        "  FAILED  [long] judge: the judge said: word word word word word word word wo...",
        "  ERROR   [bare]: before script failed",
    ]
    assert all(len(line) <= 80 for line in rendered(recap).splitlines())


def test_the_recap_groups_the_runs_of_a_case_by_status_and_counts_results_per_class():
    recap = Recap()
    for run, status in enumerate(["passed", "failed", "error", "failed", "skipped"], 1):
        result = CaseResult("c", status, run=run, error=f"run {run}\nmore")  # type: ignore[arg-type]
        result.attribution = {"failed": "agent", "error": "infra"}.get(status)  # type: ignore[assignment]
        recap.add(result)
    assert [f.to_dict() for f in recap.lists().failing] == [
        {"id": "c", "status": "failed", "reason": "run 2", "attribution": "agent", "runs": [2, 4]},
        {"id": "c", "status": "error", "reason": "run 3", "attribution": "infra", "runs": [3]},
    ]
    assert recap.counts() == {"agent": 2, "infra": 1}


def test_a_reason_is_the_error_else_the_first_failed_assertion_else_the_status():
    assert reason_of(CaseResult("a", "error", error="  \n boom \n trace")) == "boom"
    failed = CaseResult("a", "failed", assertions=[AssertionResult("contains", False, "no x")])
    assert reason_of(failed) == "no x"
    assert reason_of(CaseResult("a", "timeout")) == "timeout"


def test_in_a_matrix_each_failing_cell_is_named_with_its_connector():
    # greeting passed on scripted and failed on echo: the recap says which
    recap = Recap()
    for connector, status in (("scripted", "passed"), ("echo", "failed"), ("other", "failed")):
        result = CaseResult("greeting", status, connector=connector, error="wrong")  # type: ignore[arg-type]
        result.attribution = "agent" if status == "failed" else None
        recap.add(result)
    assert [f.to_dict()["connector"] for f in recap.lists().failing] == ["echo", "other"]
    lines = rendered(FailureRecap(recap.lists())).splitlines()
    assert lines[-2:] == [
        "  FAILED  [greeting @ echo] agent: wrong",
        "  FAILED  [greeting @ other] agent: wrong",
    ]


def runs_of(case_id: str, statuses: str, connector: str | None = None) -> list[CaseResult]:
    """One result per letter of ``statuses`` (p passed, f failed, e error), runs 1..n."""
    named = {"p": "passed", "f": "failed", "e": "error"}
    results = []
    for run, letter in enumerate(statuses, 1):
        result = CaseResult(case_id, named[letter], run=run, connector=connector, error="bad")  # type: ignore[arg-type]
        result.attribution = None if letter == "p" else "agent"
        results.append(result)
    return results


def test_under_runs_a_case_that_met_the_bar_is_flaky_and_one_below_it_failing():
    # half passed 3/5, fifth 4/5: at a bar of 80 only half fails (as the exit code says)
    results = runs_of("half", "pfpfp") + runs_of("fifth", "ppppe") + runs_of("steady", "ppp")
    lists = recap_of(results, 80)
    assert [f.id for f in lists.failing] == ["half"]
    assert [(f.id, f.status, f.runs) for f in lists.flaky] == [("fifth", "error", [5])]
    assert [f.id for f in recap_of(results, 60).flaky] == ["half", "fifth"]
    assert not recap_of(results, 60).failing
    assert [f.id for f in recap_of(results).failing] == ["half", "fifth"]  # the default: 100
    assert not recap_of(runs_of("steady", "ppp"), 80)  # nothing failed: no recap at all


def test_without_figures_every_failure_is_failing_and_a_matrix_cell_is_judged_alone():
    recap = Recap()
    for result in runs_of("c", "pf", "echo") + runs_of("c", "ff", "other"):
        recap.add(result)
    stability = [CaseStability("c", runs=2, passed=1, connector="echo"),
                 CaseStability("c", runs=2, passed=0, connector="other")]  # fmt: skip
    assert [f.connector for f in recap.lists().failing] == ["echo", "other"]
    lists = recap.lists(stability, 50)
    assert [f.connector for f in lists.failing] == ["other"]
    assert [f.connector for f in lists.flaky] == ["echo"]


def test_flaky_cases_follow_the_failing_ones_within_80_columns_and_count_in_the_limit():
    recap = RecapLists(
        [Failure("half", "failed", 'expected output to contain "good"', "agent", [2, 4])],
        [
            Failure("fifth", "failed", 'expected output to contain "good"', "agent", [5]),
            Failure("net", "error", "[provider_error] upstream hiccup " * 5, "infra", [1, 3]),
            Failure("slow", "timeout", "timed out after 300ms", "infra", [2]),
        ],
        min_pass_rate=66.5,
    )
    text = rendered(FailureRecap(recap)).splitlines()
    assert text == [
        "",
        RULE1,
        "  Short Summary: 1 failing case (1 agent), 3 flaky (met --min-pass-rate 66.5%)",
        RULE1,
        '  FAILED  [half] (runs 2, 4) agent: expected output to contain "good"',
        '  FLAKY   [fifth] (run 5 failed) agent: expected output to contain "good"',
        "  FLAKY   [net] (runs 1, 3 errored) infra: [provider_error] upstream hiccup [...",
        "  FLAKY   [slow] (run 2 timed out) infra: timed out after 300ms",
    ]
    assert all(len(line) <= 80 for line in text)
    assert rendered(FailureRecap(recap, limit=2)).splitlines()[-3:] == [
        '  FAILED  [half] (runs 2, 4) agent: expected output to contain "good"',
        '  FLAKY   [fifth] (run 5 failed) agent: expected output to contain "good"',
        "  … and 2 more",
    ]

"""The end-of-run recap at 80 columns, exact text."""

from __future__ import annotations

from agentcli.cli.views.recap import FailureRecap
from agentcli.eval.results.model import AssertionResult, CaseResult
from agentcli.eval.run.recap import Failure, Recap, reason_of
from tests.cli.views.blocks import rendered

RULE1 = "─" * 63


def test_the_recap_lists_each_failure_with_its_class_and_reason_within_80_columns():
    recap = FailureRecap(
        [
            Failure("wrong", "failed", 'expected output to contain "sum=6"', "agent"),
            Failure("hiccup", "error", "[provider_error] upstream hiccup", "infra", [2, 5]),
            Failure("slow", "timeout", "timed out after 300ms", "infra", [1]),
            Failure("long", "failed", "the judge said: " + "word " * 40, "judge"),
            Failure("bare", "error", "before script failed"),
        ]
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
    assert [f.to_dict() for f in recap.failures()] == [
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
    assert [f.to_dict()["connector"] for f in recap.failures()] == ["echo", "other"]
    lines = rendered(FailureRecap(recap.failures())).splitlines()
    assert lines[-2:] == [
        "  FAILED  [greeting @ echo] agent: wrong",
        "  FAILED  [greeting @ other] agent: wrong",
    ]

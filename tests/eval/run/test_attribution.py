"""Who a failure is on: the classes executors tag, and what ``attribute`` fills in."""

from __future__ import annotations

import pytest

from agentcli.errors import HookError, ProviderError, RateLimited, ReplayMiss
from agentcli.eval.results.model import AssertionResult, CaseResult
from agentcli.eval.run.attribution import RETRIED, attribute, of_assertions, of_exception, of_kind


@pytest.mark.parametrize(
    ("kind", "who"),
    [
        ("provider_error", "infra"),
        ("rate_limit", "infra"),
        ("timeout", "infra"),
        ("auth", "infra"),
        ("replay_miss", "harness"),
        ("tool_choice", "agent"),
        ("HookError", "harness"),
        (None, "harness"),
    ],
)
def test_a_failed_turn_is_classed_by_its_error_kind(kind, who):
    assert of_kind(kind) == who


def test_a_raised_error_is_infra_only_when_a_model_call_failed_on_the_provider():
    assert of_exception(ProviderError("down")) == "infra"
    assert of_exception(RateLimited("slow down")) == "infra"
    assert of_exception(HookError("Create failed")) == "harness"
    assert of_exception(ValueError("oops")) == "harness"


def test_a_call_the_cassette_does_not_hold_is_the_harness():
    assert of_exception(ReplayMiss("no recording of this call")) == "harness"


def test_failed_assertions_are_the_agent_unless_every_one_failed_for_another():
    judge = AssertionResult("agent", False, attribution="judge")
    script = AssertionResult("script", False, attribution="harness")
    plain = AssertionResult("contains", False)
    ok = AssertionResult("contains", True)
    assert of_assertions([judge, plain]) == "agent"
    assert of_assertions([ok, judge, script]) == "judge"
    assert of_assertions([script]) == "harness"
    assert of_assertions([]) == "agent"  # a max_steps failure has no failed assertion


def test_attribute_fills_in_only_what_is_missing():
    assert attribute(CaseResult("a", "passed")).attribution is None
    assert attribute(CaseResult("a", "skipped")).attribution is None
    assert attribute(CaseResult("a", "timeout")).attribution == "infra"
    assert attribute(CaseResult("a", "error")).attribution == "infra"
    assert attribute(CaseResult("a", "error", attribution="harness")).attribution == "harness"
    failed = CaseResult("a", "failed", assertions=[AssertionResult("contains", False)])
    assert attribute(failed).attribution == "agent"


def test_retries_are_for_what_a_second_try_can_mend():
    assert {"infra", "judge"} == RETRIED

"""Who a failed, errored or timed-out case is on (docs/eval.md, "Failure attribution"):
``agent`` (an assertion on its output failed, or it used up its steps), ``simulator`` (it
errored, broke its JSON contract, or declared success with required checkpoints pending),
``judge`` (it errored, or its samples disagreed and the majority failed), ``infra``
(provider, network, timeout) or ``harness`` (a hook or a script of the package raised).

Executors tag what only they can tell (which call raised); ``attribute`` fills in the rest
from the result once it is finished, so every non-passing result carries one class.
"""

from __future__ import annotations

from collections.abc import Iterable

from agentcli.choices import Attribution
from agentcli.errors import ModelError
from agentcli.eval.results.model import AssertionResult, CaseResult

__all__ = ["INFRA_KINDS", "RETRIED", "attribute", "of_assertions", "of_exception", "of_kind"]

# The error kinds of a model call that are the provider's or the network's, not the package's
# (``replay_miss`` is the harness's: the cassette does not hold the call).
INFRA_KINDS = frozenset(("provider_error", "rate_limit", "timeout", "auth", "bad_request"))
# What ``--retries`` re-runs: a second try can only help when the cause was outside the
# agent and the package.
RETRIED: frozenset[Attribution] = frozenset(("infra", "judge"))


def of_kind(kind: str | None) -> Attribution:
    """The class of a turn that failed with ``error_kind`` ``kind`` (a model that ignored
    an enforced tool choice is the agent's failure)."""
    if kind == "tool_choice":
        return "agent"
    return "infra" if kind in INFRA_KINDS else "harness"


def of_exception(error: BaseException) -> Attribution:
    """The class of an error a call raised: a model call's is infra, anything else (a hook,
    a tool definition, a cassette miss) the harness's."""
    if isinstance(error, ModelError):
        return of_kind(error.kind)
    return "harness"


def of_assertions(assertions: Iterable[AssertionResult]) -> Attribution:
    """The class of failed assertions: ``agent`` when any failed on the agent's output
    alone, else the class of the first that failed for another reason (judge, harness)."""
    others: list[Attribution] = []
    for assertion in assertions:
        if assertion.passed:
            continue
        if assertion.attribution is None:
            return "agent"
        others.append(assertion.attribution)
    return others[0] if others else "agent"


def attribute(result: CaseResult) -> CaseResult:
    """``result`` with its class set when it did not pass and has none yet: a timeout is
    infra, a failure is its assertions', an error nobody tagged is infra (the executors tag
    the package's own failures where they happen)."""
    if result.attribution is not None or result.status in ("passed", "skipped"):
        return result
    if result.status == "failed":
        result.attribution = of_assertions(result.assertions)
    else:  # timeout, or an error from outside what the executors see
        result.attribution = "infra"
    return result

"""The step decision as a table: what a finished step left behind -> what the turn does."""

from __future__ import annotations

import pytest

from agentcli.runtime.decide import STEP_DECISIONS, StepOutcome, decide_step

# (what the step left behind, the decision)
TABLE = [
    # no tool calls, nothing queued: the answer is final
    (dict(), "stop"),
    # tool calls go on to the next step; terminate only when every result agrees
    (dict(tool_calls=True), "continue"),
    (dict(tool_calls=True, all_terminate=True), "terminate"),
    # ... but a pending reason to go on beats terminate
    (dict(tool_calls=True, all_terminate=True, steering=True), "steer"),
    (dict(tool_calls=True, all_terminate=True, joined_trigger=True), "continue"),
    (dict(tool_calls=True, all_terminate=True, verdict=True), "continue"),
    # steering is delivered before the next step
    (dict(steering=True), "steer"),
    (dict(tool_calls=True, steering=True), "steer"),
    # input joined with a trigger asks for another step
    (dict(joined_trigger=True), "continue"),
    # on_step_finish: False ends the turn even with tool calls, True asks for a step
    (dict(tool_calls=True, verdict=False), "stop"),
    (dict(verdict=True), "continue"),
    # finish_turn "end" wins over everything, plugins' verdicts included
    (dict(finish="end", tool_calls=True, steering=True, verdict=True), "end"),
    # finish_turn "continue": met by what already asks for a step, else by a follow-up,
    # else by one context-only request
    (dict(finish="continue"), "continue"),
    (dict(finish="continue", follow_up=True), "follow_up"),
    (dict(finish="continue", tool_calls=True), "continue"),
    (dict(finish="continue", verdict=False), "stop"),
    # a queued follow-up alone does not keep the turn: it opens the next turn
    (dict(follow_up=True), "stop"),
    # the step limit stops a turn that would go on
    (dict(tool_calls=True, step=3), "max_steps"),
    (dict(steering=True, step=3), "max_steps"),
    (dict(finish="continue", step=3), "max_steps"),
    (dict(step=3), "stop"),
    (dict(tool_calls=True, all_terminate=True, step=3), "terminate"),
]


@pytest.mark.parametrize(("fields", "expected"), TABLE)
def test_the_step_decision_table(fields: dict, expected: str) -> None:
    outcome = StepOutcome(**{"step": 1, "max_steps": 3, **fields})
    assert decide_step(outcome) == expected


def test_the_table_covers_every_decision() -> None:
    assert {expected for _, expected in TABLE} == set(STEP_DECISIONS)

"""Whether a turn goes on after a step: a pure function of what the step left behind.

The rules, first match wins:

1. ``finish_turn`` said ``end``                        -> ``end`` (queues are not polled)
2. a plugin's ``on_step_finish`` said ``continue=False`` -> ``stop``
3. something asks for another step -- a plugin said ``continue=True``, input joined with a
   trigger, steering is queued, or tool calls were made and not every result terminates --
   -> ``steer`` when steering is queued (it joins first), else ``continue``; past
   ``max_steps`` -> ``max_steps``
4. ``finish_turn`` said ``continue``: a queued follow-up makes that request -> ``follow_up``,
   else one context-only request -> ``continue`` (or ``max_steps``)
5. tool calls were made and every result terminates     -> ``terminate``
6. otherwise                                            -> ``stop``
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

__all__ = ["STEP_DECISIONS", "StepDecision", "StepOutcome", "decide_step"]

StepDecision = Literal["continue", "steer", "stop", "end", "terminate", "follow_up", "max_steps"]
STEP_DECISIONS: tuple[StepDecision, ...] = get_args(StepDecision)


@dataclass(slots=True, frozen=True)
class StepOutcome:
    """What one finished step left behind."""

    step: int
    max_steps: int
    finish: Literal["end", "continue"] | None = None  # the finish_turn hook's answer
    verdict: bool | None = None  # the plugins' on_step_finish decision
    tool_calls: bool = False  # the response made tool calls
    all_terminate: bool = False  # ... and every result of the batch carries terminate
    joined_trigger: bool = False  # input joined this step asking for another one
    steering: bool = False  # steering messages are queued
    follow_up: bool = False  # follow-up messages are queued


def decide_step(outcome: StepOutcome) -> StepDecision:
    """What the turn does next (see the module doc)."""
    if outcome.finish == "end":
        return "end"
    if outcome.verdict is False:
        return "stop"
    more = (
        outcome.verdict is True
        or outcome.joined_trigger
        or outcome.steering
        or (outcome.tool_calls and not outcome.all_terminate)
    )
    if not more and outcome.finish == "continue":
        if outcome.follow_up:
            return "follow_up"
        more = True
    if not more:
        return "terminate" if outcome.tool_calls else "stop"
    if outcome.step >= outcome.max_steps:
        return "max_steps"
    return "steer" if outcome.steering else "continue"

"""Our events in both seeds' vocabularies, so code written against either ports mechanically.

* ``seed_000_name(event)``: the ``@yesimagent/core`` name of an event (``turn.start``,
  ``turn.done`` / ``turn.failed`` / ``turn.aborted`` by the turn's reason, ``tool.done``,
  ...), or None for events that seed has no name for (``SEED_000_NAMES``).
* ``per_model_call(listener)``: a listener adapter for ``pi-agent-core`` code, whose
  ``turn_start`` / ``turn_end`` frame one model call and its tools, not a whole answer. Our
  ``step_end`` becomes its ``turn_end`` (with the step's message and tool results), the next
  step opens with a ``turn_start``, and our own ``turn_end`` is kept only when no step
  closed the turn (a failure before the first step ended). Every other event passes as is:
  the pi names are ours (``SEED_004_NAMES``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentcli.runtime.channel import Listener
from agentcli.runtime.events import (
    AgentEnd,
    ErrorEvent,
    Event,
    StepEnd,
    TurnEnd,
    TurnStart,
)
from agentcli.runtime.tools import maybe_await

__all__ = ["SEED_000_NAMES", "SEED_004_NAMES", "per_model_call", "seed_000_name"]

# our event type -> @yesimagent/core's (turn_end is split by reason in seed_000_name)
SEED_000_NAMES: dict[str, str] = {
    "turn_queued": "turn.queued",
    "turn_start": "turn.start",
    "step_end": "turn.step",
    "turn_end": "turn.done",
    "tool_execution_start": "tool.start",
    "tool_execution_end": "tool.done",
    "tool_failed": "tool.failed",
    "tool_blocked": "tool.blocked",
}
_TURN_END_000 = {"done": "turn.done", "max_steps": "turn.done", "failed": "turn.failed"}

# our event type -> pi-agent-core's (the same names; turn_* per model call via per_model_call)
SEED_004_NAMES: dict[str, str] = {
    name: name
    for name in (
        "agent_start",
        "agent_end",
        "turn_start",
        "turn_end",
        "message_start",
        "message_update",
        "message_end",
        "tool_execution_start",
        "tool_execution_update",
        "tool_execution_end",
    )
}


def seed_000_name(event: Event) -> str | None:
    """The ``@yesimagent/core`` name of ``event`` (None: that seed has no such event)."""
    if isinstance(event, TurnEnd):
        return _TURN_END_000.get(event.reason, "turn.aborted")
    return SEED_000_NAMES.get(event.type)


def per_model_call(listener: Listener) -> Callable[[Event], Any]:
    """``listener`` seeing ``turn_start`` / ``turn_end`` per model call (see the module doc);
    subscribe the result: ``agent.subscribe(per_model_call(listener))``."""
    closed: set[str] = set()  # turns whose last step ended: the next event reopens them

    async def adapted(event: Event) -> None:
        turn = event.turn_id
        if isinstance(event, StepEnd):
            if turn is not None:
                closed.add(turn)
            await maybe_await(
                listener(
                    TurnEnd(
                        turn_id=turn,
                        message=event.message,
                        tool_results=list(event.tool_results),
                        usage=event.usage,
                        steps=event.step,
                    )
                )
            )
            return
        if isinstance(event, TurnEnd):
            if turn in closed:
                closed.discard(turn)
                return  # the last step's turn_end already closed it
            await maybe_await(listener(event))
            return
        if turn in closed and not isinstance(event, ErrorEvent | AgentEnd):
            closed.discard(turn)
            await maybe_await(listener(TurnStart(turn_id=turn)))
        await maybe_await(listener(event))

    return adapted

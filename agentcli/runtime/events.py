"""Agent events, in the order a run emits them::

    agent_start
      turn_start                       one per user message (or follow-up) the agent answers
        message_start/end              the user message
        message_start                  the assistant response ...
          message_update               ... text / thinking / tool-call deltas
        message_end
        tool_execution_start           per tool call, in the model's order
        tool_execution_update          progress a tool reports
        tool_failed / tool_blocked     a call that failed / that a hook blocked, just
                                       before its tool_execution_end
        tool_execution_end             as each tool finishes
        message_start/end              the tool results, in the model's order
        step_end                       one model call and its tools are done
        ...                            more steps while tool calls remain
      turn_end                         reason: done | aborted | failed | max_steps
    agent_end

plus ``turn_queued`` (a message deferred behind a running turn), ``error``, and
``tool_result_repaired`` (a stored tool call had no result; one was filled in on load).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any, ClassVar, Literal

from agentcli.models.base import StreamPart, Usage
from agentcli.runtime.messages import Message
from agentcli.runtime.tools import ToolCall, ToolResult

__all__ = [
    "AgentEnd",
    "AgentStart",
    "ErrorEvent",
    "Event",
    "MessageEnd",
    "MessageStart",
    "MessageUpdate",
    "StepEnd",
    "ToolExecutionEnd",
    "ToolExecutionStart",
    "ToolExecutionUpdate",
    "ToolBlocked",
    "ToolFailed",
    "ToolResultRepaired",
    "TurnError",
    "TurnEnd",
    "TurnQueued",
    "TurnReason",
    "TurnStart",
    "EventType",
    "turn_events",
]

EventType = Literal[
    "event",
    "agent_start",
    "agent_end",
    "turn_queued",
    "turn_start",
    "turn_end",
    "step_end",
    "message_start",
    "message_update",
    "message_end",
    "tool_execution_start",
    "tool_execution_update",
    "tool_execution_end",
    "tool_failed",
    "tool_blocked",
    "error",
    "tool_result_repaired",
]
# why a turn (and so the agent's pass over its queue) ended
TurnReason = Literal["done", "aborted", "failed", "max_steps"]


@dataclass(slots=True)
class TurnError:
    """Why a turn failed, as seed 000 reports it: ``{name, message, cause}``."""

    name: str  # the error's class, e.g. "ProviderError"
    message: str
    cause: TurnError | None = None  # the error it came from, if any

    @classmethod
    def from_exception(cls, error: BaseException) -> TurnError:
        """The error and the chain of its causes (an error re-raised from itself -- a
        cycle in the chain -- ends it)."""
        chain: list[BaseException] = []
        current: BaseException | None = error
        while current is not None and all(current is not seen for seen in chain):
            chain.append(current)
            explicit = current.__cause__
            current = explicit or (None if current.__suppress_context__ else current.__context__)
        made: TurnError | None = None
        for item in reversed(chain):
            made = cls(type(item).__name__, str(item) or type(item).__name__, made)
        assert made is not None
        return made

    def to_dict(self) -> dict[str, Any]:
        """JSON form (``cause`` only when there is one)."""
        data: dict[str, Any] = {"name": self.name, "message": self.message}
        if self.cause is not None:
            data["cause"] = self.cause.to_dict()
        return data


@dataclass(slots=True)
class Event:
    """Base of every event; ``type`` names it on the wire."""

    type: ClassVar[EventType] = "event"
    turn_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form (messages and results in their JSON form)."""
        data: dict[str, Any] = {"type": self.type}
        for item in fields(self):
            data[item.name] = _jsonable(getattr(self, item.name))
        return data


def _jsonable(value: Any) -> Any:
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, BaseException):
        return {"name": type(value).__name__, "message": str(value)}
    if is_dataclass(value):
        return {item.name: _jsonable(getattr(value, item.name)) for item in fields(value)}
    return value


@dataclass(slots=True)
class AgentStart(Event):
    """The agent left idle."""

    type: ClassVar[EventType] = "agent_start"


@dataclass(slots=True)
class AgentEnd(Event):
    """The agent is idle again; no more loop events until the next send."""

    type: ClassVar[EventType] = "agent_end"
    reason: TurnReason = "done"


@dataclass(slots=True)
class TurnQueued(Event):
    """A message was deferred behind the running turn."""

    type: ClassVar[EventType] = "turn_queued"


@dataclass(slots=True)
class TurnStart(Event):
    """A turn begins."""

    type: ClassVar[EventType] = "turn_start"


@dataclass(slots=True)
class TurnEnd(Event):
    """A turn finished: ``reason`` is done, aborted, failed or max_steps."""

    type: ClassVar[EventType] = "turn_end"
    reason: TurnReason = "done"
    message: Message | None = None
    tool_results: list[ToolResult] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    steps: int = 0
    error: str | None = None
    abort_reason: str | None = None
    error_info: TurnError | None = None


@dataclass(slots=True)
class StepEnd(Event):
    """One model call and its tool batch finished."""

    type: ClassVar[EventType] = "step_end"
    step: int = 0
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None
    message: Message | None = None  # the step's response
    tool_results: list[ToolResult] = field(default_factory=list)


@dataclass(slots=True)
class MessageStart(Event):
    """A message begins (user, assistant, tool)."""

    type: ClassVar[EventType] = "message_start"
    message: Message | None = None


@dataclass(slots=True)
class MessageUpdate(Event):
    """A streamed delta of the assistant message (whose ``content`` is set at its end)."""

    type: ClassVar[EventType] = "message_update"
    message: Message | None = None
    delta: StreamPart | None = None


@dataclass(slots=True)
class MessageEnd(Event):
    """A message is complete."""

    type: ClassVar[EventType] = "message_end"
    message: Message | None = None


@dataclass(slots=True)
class ToolExecutionStart(Event):
    """A tool call begins (after it was read, before validation and hooks)."""

    type: ClassVar[EventType] = "tool_execution_start"
    call: ToolCall | None = None


@dataclass(slots=True)
class ToolExecutionUpdate(Event):
    """Progress a running tool reported."""

    type: ClassVar[EventType] = "tool_execution_update"
    call: ToolCall | None = None
    data: Any = None  # whatever the tool reported (JSON)


@dataclass(slots=True)
class ToolExecutionEnd(Event):
    """A tool call is finalized (after ``after_tool_call``)."""

    type: ClassVar[EventType] = "tool_execution_end"
    call: ToolCall | None = None
    result: ToolResult | None = None
    duration_ms: float = 0.0


@dataclass(slots=True)
class ErrorEvent(Event):
    """Something failed; the turn that saw it ends as failed."""

    type: ClassVar[EventType] = "error"
    error: str = ""
    kind: str = ""
    error_info: TurnError | None = None


@dataclass(slots=True)
class ToolFailed(Event):
    """A tool call ended in an error: the tool raised, or the call was unknown, invalid or
    not allowed (seed 000's ``tool.failed``); its ``tool_execution_end`` follows."""

    type: ClassVar[EventType] = "tool_failed"
    call: ToolCall | None = None
    result: ToolResult | None = None


@dataclass(slots=True)
class ToolBlocked(Event):
    """A ``before_tool_call`` hook blocked the call (seed 000's ``tool.blocked``); the
    result carries the reason, and its ``tool_execution_end`` follows."""

    type: ClassVar[EventType] = "tool_blocked"
    call: ToolCall | None = None
    result: ToolResult | None = None


@dataclass(slots=True)
class ToolResultRepaired(Event):
    """A stored tool call had no result; an error result was filled in when loading."""

    type: ClassVar[EventType] = "tool_result_repaired"
    call: ToolCall | None = None


async def turn_events(
    queue: asyncio.Queue[Event], turn_id: str, *, started: bool = False
) -> AsyncIterator[Event]:
    """From every event put on ``queue``, those of turn ``turn_id``: its ``turn_start``
    (with the ``agent_start`` just before it) to its ``turn_end`` (with the ``agent_end``
    right after it); ``started`` when the turn already runs (a join)."""
    ended, held = False, None
    while True:
        event = await queue.get()
        if ended:  # after our turn_end comes agent_end or the next turn's events
            if isinstance(event, AgentEnd):
                yield event
            return
        if not started:
            if isinstance(event, AgentStart):
                held = event
            elif isinstance(event, TurnStart) and event.turn_id == turn_id:
                started = True
                if held is not None:
                    yield held
                yield event
            elif not isinstance(event, TurnQueued):
                held = None
            continue
        if event.turn_id == turn_id:
            yield event
        ended = isinstance(event, TurnEnd) and event.turn_id == turn_id

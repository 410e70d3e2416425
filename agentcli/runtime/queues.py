"""What waits for the agent: steering and follow-up queues, queued turns, the pending wake.

* steering messages join the running turn after its current tool batch;
* follow-up messages start a turn when the agent would otherwise stop;
* a queued turn is a deferred ``send``;
* the pending wake is one slot, not a queue: every ``continue_`` made while the agent is busy
  merges into it (prompts joined with "; "), and it fires once everything else has drained.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, get_args

from agentcli.choices import one_of

if TYPE_CHECKING:
    from agentcli.runtime.messages import Message
    from agentcli.runtime.turns import TurnResult

__all__ = ["QUEUE_MODES", "MessageQueue", "PendingTurn", "QueueMode", "Wake", "check_mode"]

QueueMode = Literal["one-at-a-time", "all"]
QUEUE_MODES: tuple[QueueMode, ...] = get_args(QueueMode)


def check_mode(mode: object) -> QueueMode:
    """``mode`` if it is a queue mode, else a ``ValueError`` naming the choices."""
    checked = one_of(mode, QUEUE_MODES)
    if checked is None:
        raise ValueError(f"queue mode must be 'one-at-a-time' or 'all', not {mode!r}")
    return checked


class MessageQueue:
    """Messages delivered one at a time or all at once, depending on ``mode``."""

    __slots__ = ("_items", "_mode")

    def __init__(self, mode: QueueMode = "one-at-a-time") -> None:
        self._items: deque[Message] = deque()
        self._mode = check_mode(mode)

    @property
    def mode(self) -> QueueMode:
        """``one-at-a-time`` or ``all``."""
        return self._mode

    @mode.setter
    def mode(self, mode: QueueMode) -> None:
        self._mode = check_mode(mode)

    def push(self, messages: Iterable[Message]) -> None:
        """Queue ``messages`` at the end."""
        self._items.extend(messages)

    def take(self) -> list[Message]:
        """Remove and return the next batch (empty when nothing is queued)."""
        if not self._items:
            return []
        if self._mode == "all":
            batch = list(self._items)
            self._items.clear()
            return batch
        return [self._items.popleft()]

    def peek(self) -> list[Message]:
        """The next batch, without removing it."""
        if not self._items:
            return []
        return list(self._items) if self._mode == "all" else [self._items[0]]

    def clear(self) -> None:
        """Drop every queued message."""
        self._items.clear()

    def __len__(self) -> int:
        return len(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)


@dataclass(slots=True)
class PendingTurn:
    """A turn waiting to run (``future`` is None for turns nobody awaits)."""

    turn_id: str
    messages: list[Message]
    future: asyncio.Future[TurnResult] | None = None
    joined: bool = False  # the messages joined the running turn instead


@dataclass(slots=True)
class Wake:
    """The single pending ``continue_`` request."""

    prompts: list[str] = field(default_factory=list)

    def text(self) -> str:
        """Every prompt merged into one message."""
        return "; ".join(self.prompts)

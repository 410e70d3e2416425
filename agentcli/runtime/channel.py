"""A tiny pub-sub for observing or talking to an agent outside the turn loop.

The agent publishes on two channels: ``agent`` (every event, in order) and ``stream`` (every
model stream part of every step, as it arrives). Hosts may use any other name for their own
traffic. Nothing is replayed: subscribe before the turn starts. A listener may be sync or
async; its errors are swallowed so that a UI bug can never break the loop.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final

__all__ = ["AGENT", "STATE", "STREAM", "Channel", "Listener", "deliver"]

AGENT: Final = "agent"
STREAM: Final = "stream"
STATE: Final = "state"

Listener = Callable[[Any], Any]

log = logging.getLogger("agentcli.runtime")


class Channel:
    """Named channels of listeners; ``emit`` calls them in subscription order."""

    __slots__ = ("_listeners", "_tasks")

    def __init__(self) -> None:
        # tuples, replaced on (un)subscribe, so emitting never copies the listener list
        self._listeners: dict[str, tuple[Listener, ...]] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def subscribe(self, channel: str, listener: Listener) -> Callable[[], None]:
        """Call ``listener(value)`` for everything emitted on ``channel``; returns unsubscribe."""
        self._listeners[channel] = (*self._listeners.get(channel, ()), listener)

        def unsubscribe() -> None:
            current = self._listeners.get(channel, ())
            if listener in current:
                index = current.index(listener)
                self._listeners[channel] = current[:index] + current[index + 1 :]

        return unsubscribe

    def has(self, channel: str) -> bool:
        """Whether anyone listens on ``channel`` (lets publishers skip building values)."""
        return bool(self._listeners.get(channel))

    def listeners(self, channel: str) -> tuple[Listener, ...]:
        """The listeners of ``channel``, in subscription order."""
        return self._listeners.get(channel, ())

    async def emit(self, channel: str, value: Any) -> None:
        """Deliver ``value`` to every listener of ``channel``, awaiting async ones in order."""
        await deliver(self._listeners.get(channel, ()), value, channel)

    def emit_nowait(self, channel: str, value: Any) -> None:
        """Deliver ``value`` from sync code: sync listeners run now, async ones as tasks."""
        for listener in self._listeners.get(channel, ()):
            try:
                outcome = listener(value)
            except Exception:
                log.debug("listener on %r failed", channel, exc_info=True)
                continue
            if not inspect.isawaitable(outcome):
                continue
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # no loop to run it on (sync host code): drop it quietly
                if inspect.iscoroutine(outcome):
                    outcome.close()
                continue
            task = loop.create_task(_quietly(channel, outcome))
            self._tasks.add(task)  # keep a reference until it is done
            task.add_done_callback(self._tasks.discard)


async def deliver(listeners: tuple[Listener, ...], value: Any, channel: str) -> None:
    """Call each listener with ``value`` (awaiting async ones), swallowing their errors."""
    for listener in listeners:
        try:
            outcome = listener(value)
            if inspect.isawaitable(outcome):
                await outcome
        except Exception:  # a failing listener must never affect the publisher
            log.debug("listener on %r failed", channel, exc_info=True)


async def _quietly(channel: str, outcome: Awaitable[Any]) -> None:
    try:
        await outcome
    except Exception:
        log.debug("listener on %r failed", channel, exc_info=True)

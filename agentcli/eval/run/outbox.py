"""What finished cases hand on (view events, results for the results file), batched.

Under ``--parallel`` the answers of many cases arrive together, and each case's next
request waits until every case of the bunch has been handled: printing a result line and
writing a result there puts the bookkeeping of the whole bunch on the network path (W2,
``bench/latency.py``). The outbox keeps them, in the order they came, and hands them on a
moment later (``BATCH_DELAY``), once the next requests are out. A run without parallelism
hands everything on at once. Whatever is held is handed on by ``drain``, which the run
calls when it ends, is stopped or is interrupted, so nothing finished is lost.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Any

__all__ = ["BATCH_DELAY", "Outbox"]

# Long enough for a bunch of answers to be handled and the next requests sent, short
# enough that no person sees a result line late: a twentieth of a second.
BATCH_DELAY = 0.01


class Outbox:
    """Calls ``deliver(*args)`` in the order they were put, at most ``delay`` seconds
    later (0: at once). A delivery that raises from the timer is kept as ``failure`` and
    reported to ``on_failure`` (the run stops and raises it); the rest still go out."""

    def __init__(
        self, delay: float, on_failure: Callable[[BaseException], object] = lambda error: None
    ) -> None:
        self.delay = delay
        self.failure: BaseException | None = None
        self.on_failure = on_failure
        self._held: deque[tuple[Callable[..., object], tuple[Any, ...]]] = deque()
        self._timer: asyncio.TimerHandle | None = None

    def put(self, deliver: Callable[..., object], *args: Any) -> None:
        """Hand ``deliver(*args)`` on, now or with the next batch."""
        if self.delay <= 0 and not self._held:
            deliver(*args)
            return
        self._held.append((deliver, args))
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self.delay, self._on_timer)

    def drain(self) -> None:
        """Hand on everything held now; the first delivery that raises is raised once the
        rest went out."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        first: BaseException | None = None
        held = self._held
        while held:
            deliver, args = held.popleft()
            try:
                deliver(*args)
            except Exception as error:  # the others still reach the file and the view
                first = first or error
        if first is not None:
            raise first

    def _on_timer(self) -> None:
        self._timer = None
        try:
            self.drain()
        except Exception as error:
            if self.failure is None:
                self.failure = error
                self.on_failure(error)

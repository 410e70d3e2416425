"""An adaptive concurrency limit per connector: halve on a rate limit, grow back by one after
a window of successes, never above the ceiling (``--parallel``). A rate-limited run slows
down instead of failing."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Protocol

__all__ = ["AdaptiveLimiter", "Limiter"]


class Limiter(Protocol):
    """What a model call holds and tells: a place for the call, and how the call went
    (``AdaptiveLimiter`` in one process; a cluster's shared budget under ``--executor ray``)."""

    ceiling: int

    def slot(self) -> AbstractAsyncContextManager[None]:
        """Hold one place for the duration of a call."""
        ...

    def rate_limited(self) -> None:
        """The call was rate limited (a 429)."""
        ...

    async def succeeded(self) -> None:
        """The call went through."""
        ...


class AdaptiveLimiter:
    """AIMD limit on concurrent model calls."""

    def __init__(self, ceiling: int, *, cooldown: float = 1.0) -> None:
        self.ceiling = max(1, ceiling)
        self.limit = self.ceiling
        self.active = 0
        self.cooldown = cooldown  # one burst of 429s halves the limit once, not N times
        self._successes = 0
        self._last_cut = float("-inf")
        self._changed = asyncio.Condition()

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one of the ``limit`` places for the duration of a call."""
        await self.acquire()
        try:
            yield
        finally:
            await self.release()

    async def acquire(self) -> None:
        """Take a place once one of the ``limit`` is free (``slot`` is the usual way)."""
        async with self._changed:
            await self._changed.wait_for(lambda: self.active < self.limit)
            self.active += 1

    async def release(self) -> None:
        """Give a place back."""
        async with self._changed:
            self.active -= 1
            self._changed.notify_all()

    def rate_limited(self) -> None:
        """A 429: halve the limit (at most once per cooldown)."""
        now = time.monotonic()
        if now - self._last_cut >= self.cooldown:
            self.limit = max(1, self.limit // 2)
            self._last_cut = now
        self._successes = 0

    async def succeeded(self) -> None:
        """A call went through: after ``limit`` successes in a row, allow one more."""
        if self.limit >= self.ceiling:
            return
        self._successes += 1
        if self._successes >= self.limit:
            self._successes = 0
            async with self._changed:
                self.limit += 1
                self._changed.notify_all()

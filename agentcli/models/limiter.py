"""An adaptive concurrency limit per connector: halve on a rate limit, grow back by one after
a window of successes, never above the ceiling (``--parallel``). A rate-limited run slows
down instead of failing."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

__all__ = ["AdaptiveLimiter"]


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
        async with self._changed:
            await self._changed.wait_for(lambda: self.active < self.limit)
            self.active += 1
        try:
            yield
        finally:
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

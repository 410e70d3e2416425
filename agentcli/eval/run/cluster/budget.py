"""The cluster's shared budget of model calls: one Ray actor holding an adaptive limit per
connector (the ``AdaptiveLimiter`` of a local run), which every worker's calls to that
connector take a place of. A worker that dies holding a place does not keep it: a place
is a lease that ends after ``lease_s`` seconds (the case timeout, give or take)."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from agentcli.models.limiter import AdaptiveLimiter

__all__ = ["Budget", "ClusterLimiter"]

_SWEEP_EVERY = 1.0  # seconds between looks for leases their holder never gave back


class Budget:
    """The actor's state (``ray.remote`` makes it an async actor): a limit per connector,
    the places lent out, and the peak of places held at once (what tests check)."""

    def __init__(self, ceiling: int) -> None:
        self.ceiling = max(1, ceiling)
        self.limiters: dict[str, AdaptiveLimiter] = {}
        self.leases: dict[str, tuple[str, float]] = {}  # token -> (connector, deadline)
        self.given_up: set[str] = set()  # tokens released before they were granted
        self.peaks: dict[str, int] = {}
        self._sweeper: asyncio.Task[None] | None = None

    def _limiter(self, key: str) -> AdaptiveLimiter:
        limiter = self.limiters.get(key)
        if limiter is None:
            limiter = self.limiters[key] = AdaptiveLimiter(self.ceiling)
        return limiter

    async def acquire(self, key: str, token: str, lease_s: float) -> None:
        """Wait for a place of ``key``'s limit, lent to ``token`` for ``lease_s`` seconds
        (unless its holder gave it up while it waited: then it goes back at once)."""
        if self._sweeper is None:
            self._sweeper = asyncio.create_task(self._sweep())
        limiter = self._limiter(key)
        await limiter.acquire()
        if token in self.given_up:
            self.given_up.discard(token)
            await limiter.release()
            return
        self.leases[token] = (key, time.monotonic() + lease_s)
        self.peaks[key] = max(self.peaks.get(key, 0), limiter.active)

    async def release(self, token: str) -> None:
        """Give ``token``'s place back (before it was granted: it is given back at once)."""
        lease = self.leases.pop(token, None)
        if lease is None:
            self.given_up.add(token)
            return
        await self._limiter(lease[0]).release()

    def rate_limited(self, key: str) -> None:
        """A 429 from ``key``: every worker's calls to it slow down."""
        self._limiter(key).rate_limited()

    async def succeeded(self, key: str) -> None:
        """A call to ``key`` went through."""
        await self._limiter(key).succeeded()

    def stats(self) -> dict[str, Any]:
        """Per connector: its limit now, places held now, and the most held at once."""
        return {
            key: {"limit": limiter.limit, "active": limiter.active, "peak": self.peaks.get(key, 0)}
            for key, limiter in self.limiters.items()
        }

    async def _sweep(self) -> None:
        """End the leases whose holders are gone (a killed worker never releases)."""
        while True:
            await asyncio.sleep(_SWEEP_EVERY)
            now = time.monotonic()
            for token, (key, deadline) in list(self.leases.items()):
                if deadline <= now and self.leases.pop(token, None) is not None:
                    await self._limiter(key).release()


class ClusterLimiter:
    """A worker's view of one connector's place in the shared budget (the ``Limiter`` a
    network model holds)."""

    def __init__(self, actor: Any, key: str, ceiling: int, lease_s: float) -> None:
        self.actor, self.key, self.lease_s = actor, key, lease_s
        self.ceiling = max(1, ceiling)  # the model's connection pool: never more at once

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold a place of the cluster's limit for the duration of a call."""
        token = uuid.uuid4().hex
        try:
            await _awaited(self.actor.acquire.remote(self.key, token, self.lease_s))
        except BaseException:  # cancelled while waiting: the place must not stay lent
            self.actor.release.remote(token)
            raise
        try:
            yield
        finally:
            self.actor.release.remote(token)  # not awaited: a call's end is not held up

    def rate_limited(self) -> None:
        """Tell the budget about a 429 (not awaited)."""
        self.actor.rate_limited.remote(self.key)

    async def succeeded(self) -> None:
        """Tell the budget a call went through (not awaited)."""
        self.actor.succeeded.remote(self.key)


async def _awaited(ref: Any) -> Any:
    """The value of a Ray object ref, awaited on the running loop (whichever thread)."""
    return await asyncio.wrap_future(ref.future())

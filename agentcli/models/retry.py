"""The retry policy shared by every network model: exponential backoff with jitter.

Only ``ModelError``s whose ``retryable`` is true are retried, and only while nothing has
been yielded to the caller: once a delta is out, a retry would duplicate it, so the error
goes up as it is. A provider's ``Retry-After`` wins over the backoff, capped at
``max_delay``. The error finally raised carries ``attempts``.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, aclosing, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

from agentcli.errors import ConfigError, ModelError, RateLimited
from agentcli.models.limiter import AdaptiveLimiter

__all__ = ["RETRY_LOG", "OnRetry", "RetryPolicy", "parse_retry_after", "retry_stream"]

RETRY_LOG: ContextVar[list[dict[str, Any]] | None] = ContextVar("agentcli_retry_log", default=None)
"""Where retries of the current task's model calls are recorded (the eval runner sets one
per case, so each result counts its own retries)."""

T = TypeVar("T")

OnRetry = Callable[[ModelError, int, float], None]
"""Called before each retry with the error, the attempt that failed (1-based) and the delay."""


@dataclass(slots=True, frozen=True)
class RetryPolicy:
    """How often and how patiently to retry a failed model call."""

    max_attempts: int = 4
    base_delay: float = 0.5
    max_delay: float = 20.0
    jitter: float = 0.25

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ConfigError(f"retry max_attempts must be at least 1, got {self.max_attempts}")
        if self.base_delay < 0 or self.max_delay < 0 or not 0 <= self.jitter <= 1:
            raise ConfigError(
                "retry delays must be >= 0 and jitter between 0 and 1 "
                f"(got base_delay={self.base_delay}, max_delay={self.max_delay}, jitter={self.jitter})"
            )

    def delay(
        self,
        attempt: int,
        retry_after: float | None = None,
        *,
        rand: Callable[[], float] = random.random,
    ) -> float:
        """Seconds to wait after failed ``attempt`` (1-based); ``retry_after`` wins, capped."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_delay)
        backoff = self.base_delay * 2 ** (attempt - 1)
        # Jitter spreads the retries of many concurrent calls so they do not stampede.
        spread = 1 + self.jitter * (2 * rand() - 1)
        return min(backoff * spread, self.max_delay)


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds from a ``Retry-After`` header: a number of seconds or an HTTP-date."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        return max(float(text), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    current = time.time() if now is None else now
    return max(when.timestamp() - current, 0.0)


async def retry_stream(
    attempt: Callable[[], AsyncGenerator[T, None]],
    policy: RetryPolicy,
    *,
    on_retry: OnRetry | None = None,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    limiter: AdaptiveLimiter | None = None,
) -> AsyncIterator[T]:
    """Yield the parts of ``attempt()``, retrying retryable failures before the first part.

    Each attempt holds a place of ``limiter`` (when given), which learns from rate limits;
    every retry is also recorded in ``RETRY_LOG`` when the caller set one (per eval case).
    """
    number = 0
    while True:
        number += 1
        yielded = False
        try:
            async with _slot(limiter), aclosing(attempt()) as parts:
                async for part in parts:
                    yielded = True
                    yield part
            if limiter is not None:
                await limiter.succeeded()
            return
        except ModelError as error:
            error.attempts = number
            if limiter is not None and isinstance(error, RateLimited):
                limiter.rate_limited()
            if yielded or not error.retryable or number >= policy.max_attempts:
                raise
            wait = policy.delay(number, error.retry_after)
            log = RETRY_LOG.get()
            if log is not None:
                log.append(
                    {
                        "attempt": number,
                        "kind": error.kind,
                        "delay_s": round(wait, 3),
                        "error": str(error),
                    }
                )
            if on_retry is not None:
                on_retry(error, number, wait)
            await sleep(wait)


def _slot(limiter: AdaptiveLimiter | None) -> AbstractAsyncContextManager[None]:
    return limiter.slot() if limiter is not None else nullcontext()

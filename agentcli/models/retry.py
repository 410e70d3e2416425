"""The retry policy shared by every network model: exponential backoff with jitter.

Only ``ModelError``s whose ``retryable`` is true are retried, and only while nothing has
been yielded to the caller: once a delta is out, a retry would duplicate it, so the error
goes up as it is. A provider's ``Retry-After`` wins over the backoff, capped at
``max_delay``. The error finally raised carries ``attempts``.

Every delay read from outside (a header, a config file) goes through ``seconds``: NaN and
infinities are no number of seconds (``min(nan, cap)`` is NaN, and sleeping NaN seconds
never wakes), so a wait can never escape its cap.
"""

from __future__ import annotations

import asyncio
import email.utils
import math
import random
import re
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, aclosing, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

from agentcli.errors import ConfigError, ModelError, RateLimited
from agentcli.models.limiter import Limiter

__all__ = [
    "RETRY_LOG",
    "OnRetry",
    "RetryPolicy",
    "parse_retry_after",
    "retry_stream",
    "seconds",
]

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
        attempts = self.max_attempts
        if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
            raise ConfigError(f"retry max_attempts must be a whole number >= 1, got {attempts!r}")
        delays = (self.base_delay, self.max_delay, self.jitter)
        finite = all(seconds(value) == value for value in delays)  # NaN, inf, < 0 and text fail
        if not finite or not 0 <= self.jitter <= 1:
            raise ConfigError(
                "retry delays must be finite numbers >= 0 and jitter between 0 and 1 "
                f"(got base_delay={self.base_delay!r}, max_delay={self.max_delay!r}, "
                f"jitter={self.jitter!r})"
            )

    def delay(
        self,
        attempt: int,
        retry_after: float | None = None,
        *,
        rand: Callable[[], float] = random.random,
    ) -> float:
        """Seconds to wait after failed ``attempt`` (1-based); ``retry_after`` wins, capped."""
        told = seconds(retry_after)
        if told is not None:
            return min(told, self.max_delay)
        if retry_after is not None and retry_after > 0:  # +inf: as long as we ever wait
            return self.max_delay
        backoff: float = self.base_delay * 2 ** (attempt - 1)
        # Jitter spreads the retries of many concurrent calls so they do not stampede.
        spread = 1 + self.jitter * (2 * rand() - 1)
        return min(backoff * spread, self.max_delay)


def seconds(value: object) -> float | None:
    """A number of seconds (a number or its text) as a finite float >= 0 (negative ones
    are 0); None for anything else, NaN and the infinities included."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value.strip() if isinstance(value, str) else value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return None
    return max(number, 0.0) if math.isfinite(number) else None


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds from a ``Retry-After`` header: a number of seconds or an HTTP-date; None
    when it is neither (``nan``, ``inf``, ``1e999`` included), so the backoff applies."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    if _NUMBER.fullmatch(text):
        return seconds(text)
    try:
        when = email.utils.parsedate_to_datetime(text)
        current = time.time() if now is None else now
        return seconds(when.timestamp() - current)
    except (TypeError, ValueError, OverflowError, IndexError):
        return None


# What RFC 9110 allows (delay-seconds), plus a fraction and a sign as servers send them;
# float() alone would also take "nan", "infinity" and "1_000".
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


async def retry_stream(
    attempt: Callable[[], AsyncGenerator[T, None]],
    policy: RetryPolicy,
    *,
    on_retry: OnRetry | None = None,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    limiter: Limiter | None = None,
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


def _slot(limiter: Limiter | None) -> AbstractAsyncContextManager[None]:
    return limiter.slot() if limiter is not None else nullcontext()

"""The shared retry policy: backoff, Retry-After, and never retrying after output."""

from __future__ import annotations

import email.utils
import math

import pytest

from agentcli.errors import (
    AuthenticationError,
    ConfigError,
    ModelTimeout,
    ProviderError,
    RateLimited,
)
from agentcli.models.retry import RetryPolicy, parse_retry_after, retry_stream
from agentcli.models.streaming import call_timeout


class Script:
    """An attempt factory: each attempt yields its parts, then raises its error (if any)."""

    def __init__(self, *attempts: tuple[list[str], Exception | None]) -> None:
        self.attempts = list(attempts)
        self.started = 0
        self.closed = 0

    def __call__(self):
        parts, error = self.attempts[self.started]
        self.started += 1
        return self._run(parts, error)

    async def _run(self, parts, error):
        try:
            for part in parts:
                yield part
            if error is not None:
                raise error
        finally:
            self.closed += 1


class Sleeper:
    """A sleep that records delays instead of waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


async def run(script, policy, **kwargs):
    return [part async for part in retry_stream(script, policy, **kwargs)]


def test_backoff_doubles_and_is_capped():
    policy = RetryPolicy(base_delay=0.5, max_delay=3.0, jitter=0.0)
    assert [policy.delay(n) for n in range(1, 6)] == [0.5, 1.0, 2.0, 3.0, 3.0]


def test_jitter_spreads_within_bounds():
    policy = RetryPolicy(base_delay=1.0, max_delay=100.0, jitter=0.25)
    assert policy.delay(1, rand=lambda: 0.0) == 0.75
    assert policy.delay(1, rand=lambda: 1.0) == 1.25
    assert policy.delay(3, rand=lambda: 0.5) == 4.0
    assert all(0.75 <= policy.delay(1) <= 1.25 for _ in range(200))


def test_retry_after_wins_and_is_capped():
    policy = RetryPolicy(base_delay=0.5, max_delay=10.0)
    assert policy.delay(1, retry_after=7.0) == 7.0
    assert policy.delay(1, retry_after=60.0) == 10.0
    assert policy.delay(3, retry_after=0.0) == 0.0


@pytest.mark.parametrize(
    "kwargs",
    [{"max_attempts": 0}, {"base_delay": -1}, {"max_delay": -1}, {"jitter": 1.5}],
)
def test_invalid_policy_is_a_config_error(kwargs):
    with pytest.raises(ConfigError):
        RetryPolicy(**kwargs)


def test_parse_retry_after():
    now = 1_700_000_000.0
    assert parse_retry_after("2") == 2.0
    assert parse_retry_after(" 1.5 ") == 1.5
    assert parse_retry_after("-3") == 0.0
    assert parse_retry_after(email.utils.formatdate(now + 30, usegmt=True), now=now) == 30.0
    assert parse_retry_after(email.utils.formatdate(now - 30, usegmt=True), now=now) == 0.0
    assert parse_retry_after("soon") is None
    assert parse_retry_after("") is None
    assert parse_retry_after(None) is None


@pytest.mark.parametrize(
    "value", ["nan", "NaN", "inf", "-inf", "Infinity", "1e999", "1_000", "0x10", "9" * 400]
)
def test_non_finite_or_odd_retry_after_is_ignored(value):
    assert parse_retry_after(value) is None


def test_far_future_retry_after_is_finite_and_capped():
    far = parse_retry_after("Fri, 31 Dec 9999 23:59:59 GMT")
    assert far is not None and math.isfinite(far)
    assert RetryPolicy(max_delay=3.0).delay(1, far) == 3.0


@pytest.mark.parametrize("told", [math.nan, math.inf, -math.inf, 1e308, -1.0])
def test_delay_is_always_finite_and_capped(told):
    policy = RetryPolicy(base_delay=0.5, max_delay=3.0, jitter=0.0)
    wait = policy.delay(1, told)
    assert math.isfinite(wait) and 0 <= wait <= 3.0


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_delay": math.inf},
        {"max_delay": math.nan},
        {"base_delay": math.nan},
        {"jitter": math.nan},
        {"base_delay": "1"},
        {"max_attempts": 2.5},
    ],
)
def test_non_finite_policy_is_a_config_error(kwargs):
    with pytest.raises(ConfigError):
        RetryPolicy(**kwargs)


@pytest.mark.parametrize("value", [math.nan, math.inf, -1, 0, "soon", True])
def test_call_timeout_option_must_be_finite_and_positive(value):
    with pytest.raises(ConfigError, match="timeout option"):
        call_timeout(value, 30.0)
    assert call_timeout(None, 30.0) == 30.0 and call_timeout(5, 30.0) == 5.0


async def test_retryable_errors_are_retried_until_success():
    script = Script(
        ([], RateLimited("429", retry_after=2.0)),
        ([], ProviderError("500")),
        ([], ModelTimeout("slow")),
        (["a", "b"], None),
    )
    sleeper = Sleeper()
    seen = []
    policy = RetryPolicy(max_attempts=4, base_delay=0.1, max_delay=5.0, jitter=0.0)
    parts = await run(
        script, policy, sleep=sleeper, on_retry=lambda e, n, d: seen.append((type(e), n, d))
    )
    assert parts == ["a", "b"]
    assert sleeper.delays == [2.0, 0.2, 0.4]
    assert seen == [(RateLimited, 1, 2.0), (ProviderError, 2, 0.2), (ModelTimeout, 3, 0.4)]
    assert script.closed == 4


async def test_exhausted_retries_raise_the_last_error_with_attempts():
    errors = [ProviderError(f"500 #{n}") for n in range(3)]
    script = Script(*[([], e) for e in errors])
    with pytest.raises(ProviderError) as caught:
        await run(script, RetryPolicy(max_attempts=3), sleep=Sleeper())
    assert caught.value is errors[-1]
    assert caught.value.attempts == 3
    assert script.started == 3


@pytest.mark.parametrize(
    "error",
    [AuthenticationError("401"), ProviderError("bad response", retryable=False)],
    ids=["auth", "not-retryable"],
)
async def test_non_retryable_errors_fail_at_once(error):
    script = Script(([], error), (["unused"], None))
    with pytest.raises(type(error)) as caught:
        await run(script, RetryPolicy(), sleep=Sleeper())
    assert caught.value.attempts == 1
    assert script.started == 1


async def test_no_retry_once_a_part_was_yielded():
    script = Script((["partial"], ProviderError("reset")), (["duplicate"], None))
    got = []
    with pytest.raises(ProviderError) as caught:
        async for part in retry_stream(script, RetryPolicy(), sleep=Sleeper()):
            got.append(part)
    assert got == ["partial"]
    assert caught.value.attempts == 1
    assert script.started == 1


async def test_other_exceptions_pass_through_unretried():
    script = Script(([], KeyError("bug")), (["unused"], None))
    with pytest.raises(KeyError):
        await run(script, RetryPolicy(), sleep=Sleeper())
    assert script.started == 1


async def test_stopping_early_closes_the_attempt():
    script = Script((["a", "b", "c"], None))
    stream = retry_stream(script, RetryPolicy(), sleep=Sleeper())
    assert await anext(stream) == "a"
    await stream.aclose()
    assert script.closed == 1


async def test_real_sleep_is_used_by_default():
    script = Script(([], ProviderError("500")), (["ok"], None))
    policy = RetryPolicy(base_delay=0.01, jitter=0.0)
    assert await run(script, policy) == ["ok"]

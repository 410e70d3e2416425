"""The adaptive concurrency limit: halve on 429, grow back slowly, never above the ceiling."""

from __future__ import annotations

import asyncio

from agentcli.models.limiter import AdaptiveLimiter


async def test_slots_bound_concurrency():
    limiter = AdaptiveLimiter(3)
    active = {"now": 0, "max": 0}

    async def call():
        async with limiter.slot():
            active["now"] += 1
            active["max"] = max(active["max"], active["now"])
            await asyncio.sleep(0.01)
            active["now"] -= 1

    await asyncio.gather(*(call() for _ in range(12)))
    assert active["max"] == 3


async def test_rate_limits_halve_once_per_burst_and_successes_grow_back():
    limiter = AdaptiveLimiter(8, cooldown=60)
    limiter.rate_limited()
    limiter.rate_limited()  # same burst: no second cut
    assert limiter.limit == 4
    for _ in range(4):
        await limiter.succeeded()
    assert limiter.limit == 5
    for _ in range(100):
        await limiter.succeeded()
    assert limiter.limit == 8  # the ceiling


async def test_the_limit_never_drops_below_one():
    limiter = AdaptiveLimiter(2, cooldown=0)
    for _ in range(5):
        limiter.rate_limited()
    assert limiter.limit == 1


async def test_a_network_model_slows_down_under_429s(openai_server):
    """A burst of 429s with Retry-After 0: every call still succeeds and the limit shrank."""
    from agentcli.models.base import ModelSettings, collect
    from agentcli.models.openai_model import OpenAICompatModel
    from agentcli.models.retry import RetryPolicy
    from fixtures.openai_server import Reply

    for _ in range(6):
        openai_server.enqueue(Reply.failure(429, "slow down", headers={"Retry-After": "0"}))
    model = OpenAICompatModel(
        "echo",
        api_base=openai_server.base_url,
        api_key="none",
        retry=RetryPolicy(max_attempts=6, base_delay=0.01, max_delay=0.05),
    )
    model.limiter = AdaptiveLimiter(8)
    messages = [{"role": "user", "content": "hi"}]
    responses = await asyncio.gather(
        *(collect(model, messages, [], ModelSettings()) for _ in range(8))
    )
    assert [r.content for r in responses] == ["hi"] * 8
    assert model.limiter.limit < 8
    await model.aclose()

"""The cluster's shared budget (the Budget actor's state, run here on one event loop): a
place per call up to the limit, AIMD on 429s, places given up while waiting, leases of
holders that died."""

from __future__ import annotations

import asyncio

import pytest

from agentcli.eval.run.cluster import budget as budget_module
from agentcli.eval.run.cluster.budget import Budget


async def _call(budget: Budget, key: str, token: str, seconds: float) -> None:
    await budget.acquire(key, token, lease_s=60)
    await asyncio.sleep(seconds)
    await budget.release(token)


async def test_places_bound_calls_per_connector():
    budget = Budget(ceiling=2)
    calls = [_call(budget, "a", f"t{i}", 0.02) for i in range(6)]
    calls += [_call(budget, "b", f"u{i}", 0.02) for i in range(3)]
    await asyncio.gather(*calls)
    stats = budget.stats()
    assert stats["a"] == {"limit": 2, "active": 0, "peak": 2}
    assert stats["b"]["peak"] == 2  # each connector has a limit of its own


async def test_a_429_halves_the_limit_for_every_holder():
    budget = Budget(ceiling=4)
    budget.rate_limited("a")
    assert budget.stats()["a"]["limit"] == 2
    await asyncio.gather(*[_call(budget, "a", f"t{i}", 0.02) for i in range(6)])
    assert budget.stats()["a"]["peak"] == 2
    for _ in range(2):
        await budget.succeeded("a")
    assert budget.stats()["a"]["limit"] == 3  # grows back by one after `limit` successes


async def test_a_place_given_up_while_waiting_goes_back():
    budget = Budget(ceiling=1)
    await budget.acquire("a", "holder", lease_s=60)
    waiter = asyncio.create_task(budget.acquire("a", "waiter", lease_s=60))
    await asyncio.sleep(0.01)
    await budget.release("waiter")  # its caller was cancelled before it got the place
    await budget.release("holder")
    await waiter
    assert budget.stats()["a"]["active"] == 0
    await asyncio.wait_for(budget.acquire("a", "next", lease_s=60), timeout=1)


async def test_the_lease_of_a_holder_that_died_ends(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(budget_module, "_SWEEP_EVERY", 0.01)
    budget = Budget(ceiling=1)
    await budget.acquire("a", "dead", lease_s=0.05)  # never released: its worker was killed
    await asyncio.wait_for(budget.acquire("a", "alive", lease_s=60), timeout=2)
    assert budget.stats()["a"]["active"] == 1

"""The outbox: what finished cases hand on, in order, at once or a moment later."""

from __future__ import annotations

import asyncio

import pytest

from agentcli.eval.run.outbox import Outbox


def test_without_delay_everything_is_handed_on_at_once():
    seen: list[int] = []
    outbox = Outbox(0, on_failure=lambda error: None)
    outbox.put(seen.append, 1)
    outbox.put(seen.append, 2)
    assert seen == [1, 2]


def test_with_a_delay_deliveries_wait_for_the_batch_in_order():
    async def main() -> list[list[int]]:
        seen: list[int] = []
        snapshots = []
        outbox = Outbox(0.05, on_failure=lambda error: None)
        for item in (1, 2, 3):
            outbox.put(seen.append, item)
        snapshots.append(list(seen))  # nothing yet: the batch goes out later
        await asyncio.sleep(0.1)
        snapshots.append(list(seen))
        outbox.put(seen.append, 4)  # a new batch, a new timer
        await asyncio.sleep(0.1)
        snapshots.append(list(seen))
        return snapshots

    assert asyncio.run(main()) == [[], [1, 2, 3], [1, 2, 3, 4]]


def test_drain_hands_on_what_is_held_now():
    async def main() -> list[int]:
        seen: list[int] = []
        outbox = Outbox(60, on_failure=lambda error: None)  # the timer would be far off
        outbox.put(seen.append, 1)
        outbox.put(seen.append, 2)
        outbox.drain()
        return seen

    assert asyncio.run(main()) == [1, 2]


def test_a_delivery_held_back_behind_others_keeps_its_place_when_the_delay_drops():
    async def main() -> list[int]:
        seen: list[int] = []
        outbox = Outbox(60, on_failure=lambda error: None)
        outbox.put(seen.append, 1)
        outbox.delay = 0
        outbox.put(seen.append, 2)  # held: 1 has not gone out yet
        held = list(seen)
        outbox.drain()
        return [*held, -1, *seen]

    assert asyncio.run(main()) == [-1, 1, 2]


def test_drain_delivers_the_rest_and_then_raises_the_first_failure():
    async def main() -> tuple[list[int], str]:
        seen: list[int] = []

        def broken(item: int) -> None:
            raise OSError(f"broken {item}")

        outbox = Outbox(60, on_failure=lambda error: None)
        outbox.put(broken, 1)
        outbox.put(seen.append, 2)
        outbox.put(broken, 3)
        with pytest.raises(OSError) as raised:
            outbox.drain()
        return seen, str(raised.value)

    assert asyncio.run(main()) == ([2], "broken 1")


def test_a_failure_on_the_timer_is_kept_and_reported():
    async def main() -> tuple[list[int], list[str], str]:
        seen: list[int] = []
        reported: list[str] = []

        def broken(item: int) -> None:
            raise OSError("disk gone")

        outbox = Outbox(0.01, on_failure=lambda error: reported.append(str(error)))
        outbox.put(broken, 1)
        outbox.put(seen.append, 2)
        await asyncio.sleep(0.05)
        return seen, reported, str(outbox.failure)

    assert asyncio.run(main()) == ([2], ["disk gone"], "disk gone")

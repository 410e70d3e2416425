"""Random ids (messages, turns, agents, tool calls, chats), and ``seeded``: within it, the
ids of the current task come from a generator seeded by the caller, so a run with ``--seed``
names everything the same way every time (cases running at once each get their own
generator, so their scheduling does not matter)."""

from __future__ import annotations

import contextlib
import os
import random
from collections.abc import Iterator
from contextvars import ContextVar

__all__ = ["new_id", "seeded", "seeded_scope"]

_SEEDED: ContextVar[random.Random | None] = ContextVar("agentcli_seeded_ids", default=None)


def new_id() -> str:
    """A short random id: 16 hex digits (64 bits from the OS, or from the seeded generator
    of the current task)."""
    generator = _SEEDED.get()
    if generator is not None:
        return f"{generator.getrandbits(64):016x}"
    return os.urandom(8).hex()


def seeded_scope() -> object | None:
    """The seeded scope of the current task (one per case under ``--seed``), or None: what
    per-case state that must not depend on scheduling (the scripted model's reply cycling)
    is kept by."""
    return _SEEDED.get()


@contextlib.contextmanager
def seeded(seed: str | None) -> Iterator[None]:
    """The ids made by this task (and the tasks it starts) come from ``seed`` (None: the
    OS, as outside)."""
    token = _SEEDED.set(random.Random(seed) if seed is not None else None)
    try:
        yield
    finally:
        _SEEDED.reset(token)

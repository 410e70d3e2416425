"""``--shard i/N``: split the cases of one eval into N stable, disjoint parts for a CI matrix.

A case belongs to shard ``sha256(id) mod N + 1``. The hash is of the id alone, so a case
stays in its shard whatever other cases are added, removed or reordered, on every machine
and Python version (Python's own ``hash()`` of a str is salted per process), and all runs of
a case (``--runs``) land in the same shard, where its statistics are computed.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from agentcli.errors import ConfigError

__all__ = ["in_shard", "parse_shard", "select_shard", "shard_of"]

T = TypeVar("T")

_SHARD = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


def parse_shard(text: str) -> tuple[int, int]:
    """``"i/N"`` as ``(i, N)`` with 1 <= i <= N; anything else is a ConfigError."""
    match = _SHARD.fullmatch(text)
    if match is None:
        raise ConfigError(
            f"invalid --shard {text!r}: expected i/N with whole numbers",
            hint="e.g. --shard 1/4 runs the first of four shards",
        )
    index, count = int(match.group(1)), int(match.group(2))
    if count < 1:
        raise ConfigError(
            f"invalid --shard {text!r}: the number of shards must be at least 1",
            hint="e.g. --shard 1/4 runs the first of four shards",
        )
    if not 1 <= index <= count:
        raise ConfigError(
            f"invalid --shard {text!r}: the shard index must be between 1 and {count}",
            hint=f"shards are numbered 1/{count} .. {count}/{count}",
        )
    return index, count


def shard_of(case_id: str, count: int) -> int:
    """The 1-based shard of ``case_id`` among ``count`` shards."""
    if count < 1:
        raise ValueError(f"the number of shards must be at least 1, got {count}")
    digest = hashlib.sha256(case_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def in_shard(case_id: str, index: int, count: int) -> bool:
    """True when ``case_id`` belongs to shard ``index`` of ``count``."""
    return shard_of(case_id, count) == index


def _case_id(case: Any) -> str:
    """The id of a case object (``.id``) or of a case dict (``["id"]``)."""
    return str(case["id"] if isinstance(case, dict) else case.id)


def select_shard(
    cases: Iterable[T], index: int, count: int, *, key: Callable[[T], str] = _case_id
) -> list[T]:
    """The cases of shard ``index`` of ``count``, in their original order."""
    return [case for case in cases if in_shard(key(case), index, count)]

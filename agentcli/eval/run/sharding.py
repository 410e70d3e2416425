"""``--shard i/N``: split the cases of one eval into N stable, disjoint parts for a CI matrix.

A case belongs to shard ``sha256(id) mod N + 1``. The hash is of the id alone, so a case
stays in its shard whatever other cases are added, removed or reordered, on every machine
and Python version (Python's own ``hash()`` of a str is salted per process), and all runs of
a case (``--runs``) land in the same shard, where its statistics are computed.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from agentcli.errors import ConfigError

__all__ = [
    "CI_SHARD_VARIABLES",
    "Shard",
    "in_shard",
    "parse_shard",
    "resolve_shard",
    "select_shard",
    "shard_of",
]

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


@dataclass(frozen=True, slots=True)
class Shard:
    """Shard ``index`` of ``count`` (1-based), and where the figures came from."""

    index: int
    count: int
    source: str | None = None  # e.g. "GitLab CI: CI_NODE_INDEX=2, CI_NODE_TOTAL=4"

    def describe(self) -> str:
        """``2/4`` or ``2/4 (from GitLab CI: ...)`` for the console."""
        where = f" (from {self.source})" if self.source else ""
        return f"{self.index}/{self.count}{where}"


# (system, index variable, count variable, whether the index counts from 0). Kubernetes
# Indexed Jobs set JOB_COMPLETION_INDEX but not the completion count: the Job manifest
# passes it (docs/eval.md shows `JOB_COMPLETIONS` from the spec), or AGENTCLI_SHARD_COUNT.
CI_SHARD_VARIABLES: tuple[tuple[str, str, tuple[str, ...], bool], ...] = (
    ("agentcli", "AGENTCLI_SHARD_INDEX", ("AGENTCLI_SHARD_COUNT",), False),
    (
        "Kubernetes Indexed Job",
        "JOB_COMPLETION_INDEX",
        ("JOB_COMPLETIONS", "AGENTCLI_SHARD_COUNT"),
        True,
    ),
    ("GitLab CI", "CI_NODE_INDEX", ("CI_NODE_TOTAL",), False),
    ("Buildkite", "BUILDKITE_PARALLEL_JOB", ("BUILDKITE_PARALLEL_JOB_COUNT",), True),
    ("CircleCI", "CIRCLE_NODE_INDEX", ("CIRCLE_NODE_TOTAL",), True),
)


def resolve_shard(text: str, env: Mapping[str, str] | None = None) -> Shard:
    """``--shard i/N`` as given, or ``--shard auto`` from the CI system's variables."""
    if text.strip().lower() != "auto":
        index, count = parse_shard(text)
        return Shard(index, count)
    environ = os.environ if env is None else env
    for system, index_var, count_vars, zero_based in CI_SHARD_VARIABLES:
        raw_index = environ.get(index_var, "").strip()
        if not raw_index:
            continue
        count_var = next((name for name in count_vars if environ.get(name, "").strip()), None)
        if count_var is None:
            raise ConfigError(
                f"--shard auto: {index_var} is set ({system}) but not {' or '.join(count_vars)}",
                hint=f"set {count_vars[0]} to the number of shards, or give --shard i/N",
            )
        raw_count = environ[count_var].strip()
        if not (raw_index.isdigit() and raw_count.isdigit()):
            raise ConfigError(
                f"--shard auto: {index_var}={raw_index!r} and {count_var}={raw_count!r} "
                "must be whole numbers",
                hint="give --shard i/N instead",
            )
        index = int(raw_index) + (1 if zero_based else 0)
        index, count = parse_shard(f"{index}/{raw_count}")
        return Shard(index, count, f"{system}: {index_var}={raw_index}, {count_var}={raw_count}")
    looked = ", ".join(f"{index_var} ({system})" for system, index_var, _, _ in CI_SHARD_VARIABLES)
    raise ConfigError(
        "--shard auto: no CI shard variables are set",
        hint=f"looked for {looked}; give --shard i/N outside CI",
    )


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

"""What a worker needs to run the cases of one run: the shipped package's place in the
working directory, the run's settings, the budget actor. Plain values, pickled once per
run into Ray's object store."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["WorkerSpec"]


@dataclass(frozen=True, slots=True)
class WorkerSpec:
    """One run as a worker rebuilds it (paths relative to the shipped folder, which Ray
    unpacks as the worker's working directory)."""

    run_id: str
    package: str  # the assistant package folder
    root: str | None  # the assistants root (None: the package has none in the shipped folder)
    cwd: str  # where the run was started, when inside the shipped folder (else ".")
    state: str  # --state: fresh (one per worker process), persistent, or a folder
    settings: dict[str, Any] = field(default_factory=dict)  # EvalConfig's plain fields
    scripts: str | None = None  # --scripts MODULE: the cases are its Test* functions
    cache: bool = False  # --cache (each node's own cache)
    uncached: frozenset[str] = frozenset()
    budget: Any = None  # the Budget actor's handle (None: limits per worker process)
    lease_s: float = 600.0  # how long a place of the budget is lent at most

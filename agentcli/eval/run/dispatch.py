"""Where one case runs: the ``CaseDispatcher`` seam of the runner.

The runner schedules, orders, retries and records; a dispatcher only runs one case to its
result somewhere. ``LocalDispatcher`` runs it in this process through the case's
``CaseExecutor``; ``agentcli.eval.run.ray`` sends it to a worker of a Ray cluster, which
runs the same executor there and sends back the typed result.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from agentcli.eval.cases.model import Case
    from agentcli.eval.results.model import CaseResult
    from agentcli.eval.run.executor import CaseExecutor
    from agentcli.eval.run.runner import EvalConfig

__all__ = ["CaseDispatcher", "ClusterDispatcher", "LocalDispatcher"]


class CaseDispatcher(Protocol):
    """Runs one run of a case into its result, here or elsewhere (hooks are the caller's)."""

    async def dispatch(
        self, case: Case, run: int | None, *, started: float, timeout: float
    ) -> CaseResult:
        """The result of ``case`` (``run`` of ``--runs``), timed from ``started``
        (``time.perf_counter``), the agent's part bounded by ``timeout`` seconds."""
        ...


class ClusterDispatcher(CaseDispatcher, Protocol):
    """A dispatcher that can also run one matrix column: the same place, its config."""

    def for_config(self, config: EvalConfig) -> CaseDispatcher:
        """The dispatcher of the column whose config is ``config``."""
        ...


class LocalDispatcher:
    """Runs a case in this process, through the executor ``executor_for`` picks for it."""

    def __init__(self, executor_for: Callable[[Case], CaseExecutor]) -> None:
        self.executor_for = executor_for

    async def dispatch(
        self, case: Case, run: int | None, *, started: float, timeout: float
    ) -> CaseResult:
        """The case's executor's result."""
        executor = self.executor_for(case)
        return await executor.execute(case, run, started=started, timeout=timeout)

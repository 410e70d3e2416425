"""The worker's side of ``--executor ray``: the task that runs one case.

A Ray worker process runs many tasks of a run, so it builds the run's registry, assistant
and executors once (``WorkerSession``) and keeps them, with one event loop in a thread of
its own (model clients and tool servers are bound to it), for every task after. What the
case's code prints is captured here and sent back with the result, so the driver can give
it to the case as a local run would.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.capture import OutputSink, capturing, routed_output
from agentcli.ids import seeded

if TYPE_CHECKING:
    from agentcli.assistant.session import AssistantRegistry
    from agentcli.assistant.state import StateDir
    from agentcli.eval.cases.model import Case
    from agentcli.eval.run.cluster.spec import WorkerSpec
    from agentcli.eval.run.executor import CaseExecutor

__all__ = ["TaskResult", "run_case"]

TaskResult = tuple[dict[str, Any], list[dict[str, str]]]  # (the result's dict, printed lines)
_CLOSE_WAIT = 10.0  # seconds a worker process's clean-up may take as it exits


def run_case(spec: WorkerSpec, case: Case, run: int | None, elapsed: float) -> TaskResult:
    """The Ray task: ``case`` run by this worker's session of the run, ``elapsed`` seconds
    after the driver started timing it (its Before hook), as the result's dict."""
    return _runtime().run(spec, case, run, elapsed)


class WorkerSession:
    """One run in one worker process: its registry and the executor of each case."""

    def __init__(
        self,
        registry: AssistantRegistry,
        state: StateDir,
        executor_for: Callable[[Case], CaseExecutor],
    ) -> None:
        self.registry, self.state, self.executor_for = registry, state, executor_for

    @classmethod
    def build(cls, spec: WorkerSpec) -> WorkerSession:
        """Load the shipped package and its registry as the driver has them."""
        from agentcli.assistant.package import resolve_assistant
        from agentcli.assistant.session import AssistantRegistry
        from agentcli.assistant.state import StateDir
        from agentcli.eval.run.runner import EvalConfig, _case_file_executors
        from agentcli.eval.run.services import HookRunner

        base = Path.cwd()  # Ray's working directory: the shipped folder, unpacked
        root = base / spec.root if spec.root is not None else None
        cwd = base / spec.cwd
        state = StateDir.parse(spec.state, cwd=cwd)
        registry = AssistantRegistry(
            root, cwd=cwd, state=state, max_concurrency=spec.settings.get("parallel")
        )
        registry.seed = spec.settings.get("seed")
        if spec.budget is not None:
            registry.new_limiter = _budget_limiter(spec)
        if spec.cache:
            from agentcli.assistant.response_cache import ResponseCache

            registry.cache = ResponseCache()
            registry.uncached = spec.uncached
        package = resolve_assistant(str(base / spec.package), root=root, cwd=cwd)
        config = EvalConfig(assistant=registry.get(package), registry=registry, **spec.settings)
        if spec.scripts is not None:
            from agentcli.eval.run.scripts import ScriptExecutor, load_suite

            scripts = ScriptExecutor(config, load_suite(package, spec.scripts))
            return cls(registry, state, lambda case: scripts)
        return cls(registry, state, _case_file_executors(config, HookRunner(package)))

    async def run(
        self, spec: WorkerSpec, case: Case, run: int | None, elapsed: float
    ) -> TaskResult:
        """The case's result and what its code printed."""
        seed = spec.settings.get("seed")
        timeout = case.timeout or spec.settings["timeout"]  # as the runner decides it
        sink = OutputSink()
        with capturing(sink), seeded(None if seed is None else f"{seed}:{case.id}:{run or 1}"):
            started = time.perf_counter() - elapsed
            executor = self.executor_for(case)
            result = await executor.execute(case, run, started=started, timeout=timeout)
        return result.to_dict(), sink.close()

    async def aclose(self) -> None:
        """Stop its tool servers, close its clients and stores, remove a fresh state folder."""
        try:
            await self.registry.aclose()
        finally:
            self.state.remove()


def _budget_limiter(spec: WorkerSpec) -> Callable[[str, int], Any]:
    """Limiters that take their places from the run's budget actor."""
    from agentcli.eval.run.cluster.budget import ClusterLimiter

    def new_limiter(connector: str, ceiling: int) -> ClusterLimiter:
        return ClusterLimiter(spec.budget, connector, ceiling, spec.lease_s)

    return new_limiter


class WorkerRuntime:
    """This worker process's event loop (in a thread of its own) and sessions by run."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.sessions: dict[str, WorkerSession] = {}
        self._routing = contextlib.ExitStack()
        self._routing.enter_context(routed_output())  # prints go to the case's sink
        thread = threading.Thread(target=self.loop.run_forever, name="agentcli-worker")
        thread.daemon = True
        thread.start()
        atexit.register(self.close)

    def run(self, spec: WorkerSpec, case: Case, run: int | None, elapsed: float) -> TaskResult:
        """Run the case on the loop and wait for it; a cancelled task cancels the case."""
        future = asyncio.run_coroutine_threadsafe(self._run(spec, case, run, elapsed), self.loop)
        try:
            return future.result()
        except BaseException:  # ray.cancel interrupts this thread: stop the case too
            future.cancel()
            raise

    async def _run(
        self, spec: WorkerSpec, case: Case, run: int | None, elapsed: float
    ) -> TaskResult:
        session = self.sessions.get(spec.run_id)
        if session is None:
            session = self.sessions[spec.run_id] = WorkerSession.build(spec)
        return await session.run(spec, case, run, elapsed)

    def close(self) -> None:
        """Close every session as the process exits (bounded: the exit is not held up)."""
        for session in list(self.sessions.values()):
            future = asyncio.run_coroutine_threadsafe(session.aclose(), self.loop)
            with contextlib.suppress(Exception):
                future.result(timeout=_CLOSE_WAIT)
        self.sessions.clear()
        self._routing.close()


_RUNTIME: WorkerRuntime | None = None
_RUNTIME_LOCK = threading.Lock()


def _runtime() -> WorkerRuntime:
    """This process's runtime, made by its first task."""
    global _RUNTIME
    with _RUNTIME_LOCK:
        if _RUNTIME is None:
            _RUNTIME = WorkerRuntime()
        return _RUNTIME

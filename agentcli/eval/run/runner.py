"""The eval runner: schedules cases on asyncio tasks (``--parallel`` workers), runs each
with its Before/After hooks, retries and timeout through a ``CaseExecutor`` (single-turn,
dynamic or script test: see ``executor``), and reports every result the moment it is known.

Results reach ``on_result`` in case order (a small reorder buffer waits for earlier cases),
so every report is deterministic under ``--parallel``; ``flush_finished`` hands over what is
buffered when a run is interrupted, so nothing finished is lost.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from agentcli import otel
from agentcli.assistant import cassette as tape
from agentcli.assistant.identity import Identity, resolve_identity
from agentcli.assistant.interception import use as intercepting
from agentcli.assistant.process import use_processes
from agentcli.assistant.session import Assistant, AssistantRegistry, RequestOptions
from agentcli.capture import OutputSink, capturing
from agentcli.errors import AgentCliError, HookError
from agentcli.eval.cases.model import Case
from agentcli.eval.results.model import CaseResult, cell_label
from agentcli.eval.run.attribution import RETRIED, attribute
from agentcli.eval.run.budget import CostBudget
from agentcli.eval.run.cassettes import Cassettes
from agentcli.eval.run.dispatch import CaseDispatcher, ClusterDispatcher, LocalDispatcher
from agentcli.eval.run.dynamic import DynamicExecutor
from agentcli.eval.run.executor import CaseExecutor, assertion_env, error_result
from agentcli.eval.run.options import DEFAULT_TIMEOUT
from agentcli.eval.run.services import EvalContext, HookRunner
from agentcli.eval.run.single_turn import SingleTurnExecutor
from agentcli.eval.run.spend import case_spend
from agentcli.eval.run.state_fixtures import seed_state
from agentcli.eval.run.tool_world import world_for
from agentcli.eval.run.view import LogLevel, RunEvent, Stream
from agentcli.eval.stats.adaptive import SequentialTest
from agentcli.faults import FaultPlan
from agentcli.ids import new_id, seeded
from agentcli.patterns import Pattern

__all__ = ["BeforeAllFailed", "EvalConfig", "EvalRunner", "RunEvent", "RunOutcome"]

# After an interrupt, hooks still running (a Before, an After, BeforeAll, AfterAll) get this
# long to finish their clean-up before the run leaves them behind; a second signal cuts it
# short.
DEFAULT_STOP_GRACE = 5.0


def stop_grace() -> float:
    """The grace period after an interrupt: ``AGENTCLI_STOP_GRACE`` seconds, else 5."""
    try:
        value = float(os.environ.get("AGENTCLI_STOP_GRACE", DEFAULT_STOP_GRACE))
    except ValueError:
        return DEFAULT_STOP_GRACE
    return min(max(value, 0.0), 3600.0) if value == value else DEFAULT_STOP_GRACE


class BeforeAllFailed(HookError):
    """BeforeAll raised: the run stops before any case (AfterAll still runs)."""

    exit_code = 2


@dataclass(slots=True)
class EvalConfig:
    """How to run a set of cases against one assistant."""

    assistant: Assistant
    registry: AssistantRegistry
    connector: str | None = None  # CLI -c (wins over a case's options.connector)
    user_id: str | None = None
    team_id: str | None = None
    locale: str | None = None
    context: EvalContext = field(default_factory=EvalContext)
    timeout: float = DEFAULT_TIMEOUT
    parallel: int = 1
    runs: int = 1  # under --runs auto: the most a case gets (--max-runs)
    adaptive: SequentialTest | None = None  # --runs auto: when a case's runs are enough
    fail_fast: bool = False
    run_filter: Pattern | None = None
    before_all: str | None = None
    after_all: str | None = None
    simulator: str | None = None
    max_steps: int | None = None  # --max-steps (wins over a case's options.max_steps)
    cassettes: Cassettes | None = None  # --record / --replay
    seed: int | None = None  # --seed: ids per case from it, and ``seed`` for providers
    faults: FaultPlan | None = None  # --faults (a case's tools.faults wins)
    retries: int = 0  # re-runs of a case that ended in error (not failed)
    keep_sandboxes: bool = False  # --keep-sandboxes: leave each case's workspace behind
    # (id, run) kept from --resume; in a matrix (id, run, connector)
    done: frozenset[tuple[str, int | None] | tuple[str, int | None, str]] = frozenset()
    # --resume under --runs auto: each (id, column)'s kept runs in run order, which its
    # stopping rule sees before the runs it still makes
    kept_runs: Mapping[tuple[str, str | None], Sequence[CaseResult]] = field(default_factory=dict)
    # A connector matrix: every case runs on each of these (empty: on ``connector``)
    connectors: tuple[str, ...] = ()

    def columns(self) -> dict[str | None, EvalConfig]:
        """The config each matrix column runs with: this one with the column's connector
        (and its own cassettes); outside a matrix, this one alone."""
        if not self.connectors:
            return {None: self}
        cassettes = self.cassettes
        return {
            name: replace(
                self,
                connector=name,
                connectors=(),
                cassettes=cassettes.column(name) if cassettes is not None else None,
            )
            for name in self.connectors
        }

    def identity(self, case: Case | None = None) -> tuple[str, str, str]:
        """Locale, user and team of a case (or of the run): the CLI's, else the case's, else
        the ``--ctx`` file's, else the defaults."""
        ctx = self.context
        return resolve_identity(
            Identity(self.locale, self.user_id, self.team_id),
            Identity(None, case.user, case.team) if case is not None else Identity(),
            Identity(ctx.locale, ctx.user_id, ctx.team_id),
            defaults=("en-us", "test-user", "test-team"),
        )

    def request_options(self, case: Case, run: int | None) -> RequestOptions:
        """Identity, connector and metadata of a case, by the documented priorities."""
        ctx = self.context
        metadata = {**ctx.metadata, **case.metadata, **(case.options.metadata or {})}
        chat_id = ctx.chat_id or f"test-{case.id}-{new_id()[:8]}"
        if ctx.chat_id and run and run > 1:
            chat_id = f"{ctx.chat_id}-run{run}"
        locale, user_id, team_id = self.identity(case)
        return RequestOptions(
            connector=self.connector or case.options.connector,
            locale=locale,
            user_id=user_id,
            team_id=team_id,
            chat_id=chat_id,
            metadata=metadata,
            authorized=dict(ctx.authorized),
            skip=dict(case.options.skip or {}),
            mode=case.options.mode,
            max_steps=self.max_steps or case.options.max_steps,
        )

    def hook_context(self, case: Case | None = None) -> EvalContext:
        """The ``ctx`` a case's Before and After hooks receive (without a case: BeforeAll's
        and AfterAll's, the run's identity), its ``memory`` in the run's store."""
        ctx = self.context
        locale, user_id, team_id = self.identity(case)
        return EvalContext(
            locale=locale,
            user_id=user_id,
            team_id=team_id,
            chat_id=ctx.chat_id,
            metadata={**ctx.metadata, **case.metadata} if case is not None else dict(ctx.metadata),
            authorized=dict(ctx.authorized),
            memory_store=self.registry.memory_store,
        )


@dataclass(slots=True)
class RunOutcome:
    """Counts and state at the end of a run (the results themselves were streamed)."""

    results: int = 0
    before_all_data: Any = None


class _Reorder:
    """Hands results over in case order as soon as every earlier one is known (a job's
    results: one run, or under ``--runs auto`` every run of a case)."""

    def __init__(self, emit: Callable[[CaseResult], None]) -> None:
        self.emit = emit
        self.next = 0
        self.waiting: dict[int, list[CaseResult]] = {}

    def add(self, index: int, results: list[CaseResult]) -> None:
        self.waiting[index] = results
        while self.next in self.waiting:
            for result in self.waiting.pop(self.next):
                self.emit(result)
            self.next += 1

    def flush(self) -> None:
        """Emit what is buffered, in order, regardless of gaps."""
        for index in sorted(self.waiting):
            for result in self.waiting.pop(index):
                self.emit(result)


class EvalRunner:
    """Runs cases; ``on_event`` sees starts, results and log lines, ``on_result`` each result
    in case order. ``executor`` plays every case (script tests); without it a case file's
    dynamic cases go to the simulator and the others are single-turn. ``dispatcher`` says
    where a case runs (default: here, through its executor; ``--executor ray``: a cluster)."""

    def __init__(
        self,
        config: EvalConfig,
        *,
        executor: CaseExecutor | None = None,
        executor_for: Callable[[EvalConfig], CaseExecutor] | None = None,
        on_event: Callable[[RunEvent], None] = lambda event: None,
        on_result: Callable[[CaseResult], None] = lambda result: None,
        stop_when: Callable[[CaseResult], bool] | None = None,
        budget: CostBudget | None = None,
        dispatcher: ClusterDispatcher | None = None,
    ) -> None:
        self.config = config
        self.stop_when = stop_when or failed
        self.budget = budget  # --max-cost
        self.on_event = on_event
        self._reorder = _Reorder(self._deliver)
        self._on_result = on_result
        self.hooks = HookRunner(config.assistant.package)
        # One config and executor per matrix column (one, outside a matrix): a column's
        # cases reach its connector through them, and nothing else changes per column.
        self._columns = config.columns()
        self._executors: dict[str | None, Callable[[Case], CaseExecutor]] = {}
        for name, column in self._columns.items():
            if executor_for is not None:
                self._executors[name] = _always(executor_for(column))
            elif executor is not None:
                self._executors[name] = _always(executor)
            else:
                self._executors[name] = _case_file_executors(column, self.hooks)
        # Where a column's cases run: here, through its executor, or (``--executor ray``) on
        # the cluster, a matrix column with its own settings.
        self._dispatchers: dict[str | None, CaseDispatcher] = {}
        for name, executors in self._executors.items():
            if dispatcher is None:
                self._dispatchers[name] = LocalDispatcher(executors)
            elif name is None:
                self._dispatchers[name] = dispatcher
            else:
                self._dispatchers[name] = dispatcher.for_config(self._columns[name])
        self._stop = asyncio.Event()
        self._give_up = asyncio.Event()  # set when hooks still running are left behind
        self._grace: asyncio.TimerHandle | None = None
        self._run_hooks: dict[str, asyncio.Future[Any]] = {}  # BeforeAll's, AfterAll's
        self.delivered = 0
        self._finished: list[dict[str, Any]] = []
        # The attempt each case run under --retries is on, so the result of one that runs
        # again is told as such (a view shows the case once, with its last attempt).
        self._attempts: dict[tuple[str, int | None, str | None], int] = {}

    def _deliver(self, result: CaseResult) -> None:
        self.delivered += 1
        if self.config.after_all:  # AfterAll sees a summary of every result, in case order
            self._finished.append(_hook_summary(result))
        self._on_result(result)

    def flush_finished(self) -> None:
        """Hand over every finished result still waiting for an earlier case."""
        self._reorder.flush()

    def log(self, message: str, level: LogLevel = "info") -> None:
        """A log line for the console / NDJSON stream."""
        self.on_event(RunEvent("log", level=level, message=message))

    def interrupt(self, grace: float) -> None:
        """Stop taking cases; hooks still running get ``grace`` more seconds (0: none)."""
        self._stop.set()
        if grace <= 0:
            self._give_up.set()
        elif self._grace is None:
            self._grace = asyncio.get_running_loop().call_later(grace, self._give_up.set)

    async def _settle(self, hook: asyncio.Future[Any], what: str) -> asyncio.Future[Any] | None:
        """Wait for a hook that cannot be stopped half-way (a sync one runs on in its thread)
        to end, but once the run is stopping no longer than its grace period: the finished
        hook, or None when it was left running."""
        cancelled = False
        while not hook.done() and not self._give_up.is_set():
            giving_up = asyncio.ensure_future(self._give_up.wait())
            try:
                await asyncio.wait((hook, giving_up), return_when=asyncio.FIRST_COMPLETED)
            except asyncio.CancelledError:
                # Cancelled by the stop itself (the signal cancels the run while BeforeAll
                # runs): the hook still gets the grace period. Cancelled again, or by
                # something other than a stop, it is left behind now.
                if cancelled or not self._stop.is_set():
                    self._leave_behind(hook, what)
                    raise
                cancelled = True
            finally:
                giving_up.cancel()
        if not hook.done():
            self._leave_behind(hook, what)
        if cancelled:
            raise asyncio.CancelledError
        return hook if hook.done() else None

    def _leave_behind(self, hook: asyncio.Future[Any], what: str) -> None:
        if not hook.done():
            hook.add_done_callback(_ignore_outcome)
            self.log(f"{what} was still running when the run stopped: left behind", "warning")

    def _printer(
        self, case: Case | None, run: int | None, column: str | None = None
    ) -> Callable[[str, str], None]:
        """Turns a line that code printed into an ``output`` event (or, outside a case, a log
        line), delivered on the loop's thread even when a hook's thread printed it."""
        loop = asyncio.get_running_loop()
        loop_thread = threading.get_ident()

        def on_line(stream: str, line: str) -> None:
            if case is None:
                event = RunEvent("log", level="info", message=line)
            else:
                where: Stream = "stderr" if stream == "stderr" else "stdout"
                event = RunEvent(
                    "output", case=case, run=run, message=line, stream=where, connector=column
                )
            if threading.get_ident() == loop_thread:
                self.on_event(event)
                return
            try:
                loop.call_soon_threadsafe(self.on_event, event)
            except RuntimeError:  # the run is over (a hook left behind still prints)
                pass

        return on_line

    async def _captured(
        self,
        case: Case,
        run: int | None,
        column: str | None,
        body: Callable[[], Awaitable[CaseResult]],
    ) -> CaseResult:
        """``body``'s result with what the case's code printed as its ``logs`` and what its
        helpers spent, between the ``test_start`` and ``test_result`` events."""
        self.on_event(RunEvent("test_start", case=case, run=run, connector=column))
        sink = OutputSink(self._printer(case, run, column))
        attributes = {
            "agentcli.case.id": case.id,
            "agentcli.case.run": run,
            "agentcli.connector": column,
        }
        with (
            otel.span(f"eval case {case.id}", attributes) as traced,
            capturing(sink),
            case_spend() as spent,
        ):
            try:
                result = await body()
            finally:
                logs = sink.close()
            result.otel = traced.ids()
            traced.set("agentcli.case.status", result.status)
            if result.status in ("failed", "error", "timeout"):
                traced.fail(result.error or result.status)
        result.logs = logs or None
        result.helper_usage = spent or None
        result.tags = list(case.tags)
        attribute(result)  # who a failure is on, before anyone is shown it
        attempt = self._attempts.get((case.id, run, column), self.config.retries + 1)
        retrying = result.attribution in RETRIED and attempt <= self.config.retries
        self.on_event(
            RunEvent(
                "test_result",
                case=case,
                run=run,
                result=result,
                connector=column,
                retrying=retrying,
            )
        )
        return result

    async def _call_run_hook(self, label: str, ref: str, *args: Any) -> Any:
        """BeforeAll or AfterAll: what it prints becomes log lines (``BeforeAll: ...``).
        Stopped while it runs, a hook that ends within the grace period gives its value
        all the same (BeforeAll's data is what AfterAll cleans up after)."""
        printer = self._printer(None, None)
        sink = OutputSink(lambda stream, line: printer(stream, f"{label}: {line}"))
        with capturing(sink):
            hook = asyncio.ensure_future(self.hooks.call(ref, *args))
        self._run_hooks[label] = hook
        try:
            finished = await self._settle(hook, label)
        except asyncio.CancelledError:
            if not hook.done() or not self._stop.is_set():
                raise
            finished = hook  # the stop cancelled the run; no case starts after this
        finally:
            sink.close()
        return None if finished is None else finished.result()

    # -- the run -----------------------------------------------------------------------

    async def run(self, cases: Iterable[Case]) -> RunOutcome:
        """Run ``cases`` on ``--parallel`` workers that pull jobs one at a time, so a run of
        100,000 cases holds only the cases in flight (``cases`` may be a lazy iterable)."""
        config = self.config
        outcome = RunOutcome()
        use_processes(config.assistant.processes)  # process() in the eval hooks
        selected: Iterable[Case] = (
            c for c in cases if config.run_filter is None or config.run_filter.search(c.id)
        )
        if config.before_all:
            selected = list(selected)  # BeforeAll sees every active case
            self.log(f"BeforeAll: {config.before_all}")
            active = [{"id": c.id, "input": c.input, "metadata": c.metadata} for c in selected]
            try:
                outcome.before_all_data = await self._call_run_hook(
                    "BeforeAll", config.before_all, config.hook_context(), active
                )
            except AgentCliError as error:
                raise BeforeAllFailed(str(error)) from error
        # A job is one run of a case on one column: the case's cells side by side, so a
        # case's results stay together in the file whatever --parallel does. Under --runs
        # auto a job is every run of a cell, one after the other until its stopping rule
        # decides (cells still run side by side).
        columns = list(self._columns)
        adaptive = config.adaptive
        jobs = enumerate(
            (case, column, run)
            for case in selected
            for column in columns
            for run in self._runs_to_start(case.id, column)
        )
        running: set[asyncio.Task[CaseResult]] = set()

        budget = self.budget

        async def worker(first: tuple[int, tuple[Case, str | None, int]]) -> None:
            # its first job, then the shared iterator's next ones: every job once
            for index, (case, column, run) in itertools.chain((first,), jobs):
                if self._stop.is_set():
                    return
                done: list[CaseResult] = []
                kept = list(config.kept_runs.get((case.id, column), ())) if adaptive else []
                try:
                    while True:
                        run_index = run if config.runs > 1 else None
                        result = await self._job(case, run_index, column, running)
                        done.append(result)
                        if adaptive is None or self._stop.is_set() or adaptive.done(kept + done):
                            break
                        if budget is not None and budget.cut and result.status == "skipped":
                            break  # past --max-cost: no more runs of this cell either
                        run += 1
                finally:  # an interrupted case's finished runs are not lost
                    if done:
                        self._reorder.add(index, done)
                for result in done:
                    self._stop_on(case, result, column, running)

        # A worker is started with a job in hand, so there are never more workers than jobs
        # (--parallel 100000000 on five cases is five tasks, not a hundred million).
        workers = []
        for _ in range(max(1, config.parallel)):
            first = next(jobs, None)
            if first is None:
                break
            workers.append(asyncio.create_task(worker(first)))
        try:
            await asyncio.gather(*workers)
        finally:
            for task in workers:
                if not task.cancelling():  # a second cancel would cut a case's After hook short
                    task.cancel()
            # An interrupted case runs its After hook on the way out: wait for every one, so
            # AfterAll comes after them and nothing is cut off when the process exits.
            await asyncio.gather(*running, return_exceptions=True)
            self._reorder.flush()
        outcome.results = self.delivered
        return outcome

    def _runs_to_start(self, case_id: str, column: str | None) -> Iterable[int]:
        """The jobs of a cell: each run ``--resume`` did not keep; under ``--runs auto``
        the run it starts from (its rule decides the rest), none when the kept runs
        already decided it."""
        config, adaptive = self.config, self.config.adaptive
        if adaptive is None:
            return (
                run
                for run in range(1, config.runs + 1)
                if _job_key(case_id, run if config.runs > 1 else None, column) not in config.done
            )
        start = adaptive.next_run(config.kept_runs.get((case_id, column), ()))
        return () if start is None else (start,)

    async def _job(
        self,
        case: Case,
        run: int | None,
        column: str | None,
        running: set[asyncio.Task[CaseResult]],
    ) -> CaseResult:
        """One run of a case on its own task (fail-fast cancels it: ``skipped``); past
        ``--max-cost`` it is ``skipped`` without running, saying why."""
        budget = self.budget
        refusal = budget.refusal(len(running)) if budget is not None else None
        if refusal is not None:
            result = CaseResult(
                id=case.id,
                status="skipped",
                input=case.input,
                tags=list(case.tags),
                error=refusal,
                run=run,
                connector=column,
            )
            self.on_event(RunEvent("test_start", case=case, run=run, connector=column))
            self.on_event(
                RunEvent("test_result", case=case, run=run, result=result, connector=column)
            )
            return result
        task = asyncio.create_task(self._run_with_retries(case, run, column))
        running.add(task)
        task.add_done_callback(running.discard)
        try:
            result = await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if not self._stop.is_set() or (current is not None and current.cancelling()):
                raise  # interrupted: the case did not finish
            result = CaseResult(
                id=case.id,
                status="skipped",
                input=case.input,
                tags=list(case.tags),
                error="cancelled by --fail-fast",
                run=run,
                connector=column,
            )
            self.on_event(
                RunEvent("test_result", case=case, run=run, result=result, connector=column)
            )
            return result
        if budget is not None:
            budget.add(result.cost)
        return result

    def _stop_on(
        self,
        case: Case,
        result: CaseResult,
        column: str | None,
        running: set[asyncio.Task[CaseResult]],
    ) -> None:
        """Under ``--fail-fast``: stop the run when ``result`` says so."""
        if self.stop_when(result) and self.config.fail_fast and not self._stop.is_set():
            failed_case = cell_label(case.id, column)
            self.log(f"Stopping due to --fail-fast (failed: {failed_case})", "warning")
            self._stop.set()
            for other in running:
                other.cancel()

    async def after_all(self, before_all_data: Any) -> None:
        """Run AfterAll (also after a failed run, for cleanup); its failure is a warning."""
        if not self.config.after_all:
            return
        before_all = self._run_hooks.get("BeforeAll")
        if before_all is not None and not before_all.done():
            # Left behind past the grace period: AfterAll would race the set-up it cleans up
            # after (not knowing its data), with no grace left to finish in.
            self.log(
                f"AfterAll ({self.config.after_all}) not run: BeforeAll is still running",
                "warning",
            )
            return
        self.log(f"AfterAll: {self.config.after_all}")
        try:
            await self._call_run_hook(
                "AfterAll",
                self.config.after_all,
                self.config.hook_context(),
                self._finished,
                before_all_data,
            )
        except AgentCliError as error:
            self.log(f"afterAll script failed: {error}", "warning")

    async def _run_with_retries(
        self, case: Case, run: int | None, column: str | None = None
    ) -> CaseResult:
        """``run_case``, re-run while ``--retries`` allow and its failure is one a second try
        can help: ``infra`` (provider, network, timeout) or ``judge``, never the agent's own
        nor the package's hooks and scripts (docs/eval.md, "Failure attribution")."""
        key = (case.id, run, column)
        attempts = self._attempts[key] = 1
        try:
            result = await self.run_case(case, run, column)
            while result.attribution in RETRIED and attempts <= self.config.retries:
                attempts = self._attempts[key] = attempts + 1
                self.log(
                    f"retrying [{cell_label(case.id, column)}] (attempt {attempts}/"
                    f"{self.config.retries + 1}): {result.error}",
                    "warning",
                )
                result = await self.run_case(case, run, column)
        finally:
            del self._attempts[key]
        if attempts > 1:
            result.attempts = attempts
        return result

    # -- one case ----------------------------------------------------------------------

    async def run_case(
        self, case: Case, run: int | None = None, column: str | None = None
    ) -> CaseResult:
        """Run one case (Before -> agent -> assertions -> After) into a result; in a
        matrix, on the connector of ``column``, which the result records."""
        if case.skip:
            self.on_event(RunEvent("test_start", case=case, run=run, connector=column))
            result = CaseResult(
                id=case.id,
                status="skipped",
                input=case.input,
                tags=list(case.tags),
                run=run,
                connector=column,
            )
            self.on_event(
                RunEvent("test_result", case=case, run=run, result=result, connector=column)
            )
            return result
        return await self._captured(case, run, column, lambda: self._in_world(case, run, column))

    async def _in_world(self, case: Case, run: int | None, column: str | None) -> CaseResult:
        """The case with its tool world active (its stubs and faults), when it has one."""
        world = world_for(case.tools, self.config.faults, case.id, run)
        if world is None:
            return await self._taped(case, run, column)
        with intercepting(world):
            return await self._taped(case, run, column)

    async def _taped(self, case: Case, run: int | None, column: str | None) -> CaseResult:
        """The case with its cassette active (``--record`` / ``--replay``), saved after a
        recording (a cassette that cannot be written is a warning, the result stands), and
        its ids seeded under ``--seed``."""
        cassettes, seed = self._columns[column].cassettes, self.config.seed
        # --seed: this case's ids (and its chat's) come from the seed, the case and the run
        given = None if seed is None else f"{seed}:{case.id}:{run or 1}"
        if cassettes is None:
            with seeded(given):
                return await self._run_with_hooks(case, run, column)
        cassette = cassettes.open(case.id, run)
        try:
            # Under a cassette the ids are always seeded, by a seed it keeps: a replay gives
            # the hooks the chat and message ids the recorded run had.
            with tape.use(cassette), seeded(tape.case_seed(given)):
                return await self._run_with_hooks(case, run, column)
        finally:
            if cassette.records:
                try:
                    cassette.save()
                except OSError as error:
                    self.log(f"cassette of {case.id} not written: {error.strerror}", "warning")

    async def _run_with_hooks(self, case: Case, run: int | None, column: str | None) -> CaseResult:
        """Before, the executor, After: an interrupted case still runs its After hook."""
        started = time.perf_counter()
        hook_ctx = self.config.hook_context(case)
        before_data: Any = None
        if case.state_before is not None:
            try:
                await seed_state(self.config.registry, self.config.assistant, case.state_before)
            except AgentCliError as error:
                return error_result(case, run, f"state.before failed: {error}", started)
        if case.before:
            before = asyncio.ensure_future(self.hooks.call(case.before, hook_ctx, case.to_dict()))
            try:
                before_data = await asyncio.shield(before)
            except asyncio.CancelledError:
                await self._after_cancelled_before(case, hook_ctx, before)
                raise
            except AgentCliError as error:
                failure = error_result(case, run, f"before script failed: {error}", started)
                failure.connector = column
                failure.attribution = "harness"
                return failure
        timeout = case.timeout or self.config.timeout
        try:
            result = await self._dispatchers[column].dispatch(
                case, run, started=started, timeout=timeout
            )
            result.connector = column
        except asyncio.CancelledError:
            if case.after:
                after = asyncio.ensure_future(self._after(case, hook_ctx, None, before_data))
                await self._settle(after, f"the After hook of {case.id}")
            raise
        if case.after:
            after = asyncio.ensure_future(self._after(case, hook_ctx, result, before_data))
            try:
                await asyncio.shield(after)
            except asyncio.CancelledError:
                # The case had finished: its result stands, and its After hook gets what the
                # grace period allows.
                await self._settle(after, f"the After hook of {case.id}")
                current = asyncio.current_task()
                if current is not None:
                    current.uncancel()
        return result

    async def _after_cancelled_before(
        self, case: Case, ctx: EvalContext, before: asyncio.Future[Any]
    ) -> None:
        """Cancelled while Before ran: a hook cannot be stopped half-way, so let it finish
        (within the grace period of a stopping run) and, if it succeeded, run After to clean
        up after it."""
        finished = await self._settle(before, f"the Before hook of {case.id}")
        if finished is None or finished.cancelled() or finished.exception() is not None:
            return
        if case.after:
            after = asyncio.ensure_future(self._after(case, ctx, None, finished.result()))
            await self._settle(after, f"the After hook of {case.id}")

    async def _after(
        self, case: Case, ctx: EvalContext, result: CaseResult | None, data: Any
    ) -> None:
        """The case's After hook, given the result (None: the case did not finish); its
        failure is a warning."""
        if case.after is None:
            return
        summary = None if result is None else _hook_summary(result)
        try:
            await self.hooks.call(case.after, ctx, case.to_dict(), summary, data)
        except AgentCliError as error:
            self.log(f"after script failed ({case.id}): {error}", "warning")


def _hook_summary(result: CaseResult) -> dict[str, Any]:
    """What After and AfterAll hooks see of a result."""
    summary = {
        "id": result.id,
        "status": result.status,
        "duration_ms": result.duration_ms,
        "output": result.output,
        "error": result.error,
    }
    if result.run is not None:
        summary["run"] = result.run
    if result.connector is not None:
        summary["connector"] = result.connector
    return summary


def _job_key(
    case_id: str, run: int | None, column: str | None
) -> tuple[str, int | None] | tuple[str, int | None, str]:
    """How ``EvalConfig.done`` names a job: ``(id, run)``, in a matrix ``(id, run, connector)``."""
    return (case_id, run) if column is None else (case_id, run, column)


def _always(executor: CaseExecutor) -> Callable[[Case], CaseExecutor]:
    """The executor of every case."""
    return lambda case: executor


def _ignore_outcome(future: asyncio.Future[Any]) -> None:
    """Retrieve the outcome of a hook left behind, so asyncio does not report it as lost."""
    if not future.cancelled():
        future.exception()


def failed(result: CaseResult) -> bool:
    """Whether a result counts against the run (failed, error or timeout)."""
    return result.status in ("failed", "error", "timeout")


def _case_file_executors(config: EvalConfig, hooks: HookRunner) -> Callable[[Case], CaseExecutor]:
    """Which executor plays a case of a case file: dynamic ones by the simulator, the
    others single-turn, both judging through one assertion environment."""
    env = assertion_env(
        config.registry, hooks, config.assistant.toolbox, assistant=config.assistant
    )
    single, dynamic = SingleTurnExecutor(config, env), DynamicExecutor(config, env)
    return lambda case: dynamic if case.is_dynamic else single

"""One ``agent eval`` invocation from parsed options to an exit code: find the assistant,
classify the input, load cases, stream results to the results file and the view, print
the summary, and tell the truth in the exit code (0 passed, 1 failed, 2 bad input,
130 interrupted)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli import __version__, collector, otel
from agentcli.assistant import cassette as tape
from agentcli.assistant.cassette import CassetteMode
from agentcli.assistant.package import (
    AssistantPackage,
    find_assistants_root,
    find_package_dir,
    resolve_assistant,
)
from agentcli.assistant.session import AssistantRegistry
from agentcli.assistant.state import open_state
from agentcli.errors import ConfigError, HookError, OutputClosed, OutputError, PackageError
from agentcli.eval.cases.generate import generate_cases
from agentcli.eval.cases.load import CaseInfo, CaseSet, open_cases
from agentcli.eval.cases.model import Case
from agentcli.eval.cases.parse import parse_case
from agentcli.eval.results.matrix import Matrix, MatrixPass
from agentcli.eval.results.merge import exit_code_for
from agentcli.eval.results.model import (
    CaseResult,
    CostTotals,
    RunHeader,
    RunSummary,
    summary_from_counts,
)
from agentcli.eval.run.budget import CostBudget
from agentcli.eval.run.cassettes import Cassettes
from agentcli.eval.run.columns import matrix_columns
from agentcli.eval.run.dynamic import check_simulators
from agentcli.eval.run.executor import trace_of
from agentcli.eval.run.options import EvalOptions, given_flags, header_options
from agentcli.eval.run.outbox import BATCH_DELAY, Outbox
from agentcli.eval.run.preflight import check_connectors, check_references, where
from agentcli.eval.run.project_defaults import project_cite
from agentcli.eval.run.recap import Recap
from agentcli.eval.run.request import (
    InputSpec,
    classify_input,
    load_context_file,
    refuse_case_options,
)
from agentcli.eval.run.rerun import Rerun
from agentcli.eval.run.resume import EarlierRun, earlier_run, kept_results
from agentcli.eval.run.runner import (
    BeforeAllFailed,
    EvalConfig,
    EvalRunner,
    RunOutcome,
    failed,
    stop_grace,
)
from agentcli.eval.run.runs import note_latest, results_folder_of
from agentcli.eval.run.scripts import ScriptExecutor, ScriptSuite, load_suite, resolve_script_ref
from agentcli.eval.run.selection import NothingSelected, Selection
from agentcli.eval.run.services import EvalContext, HookRunner, case_file_label
from agentcli.eval.run.sharding import in_shard, resolve_shard
from agentcli.eval.run.view import EvalView
from agentcli.eval.stats.adaptive import SequentialTest
from agentcli.eval.stats.stability import CaseStability, StabilityTracker, stability_summary
from agentcli.faults import FaultPlan
from agentcli.interrupts import note_interrupt
from agentcli.models.connectors import CONNECTORS_VARIABLE
from agentcli.models.pricing import format_usd, price_of
from agentcli.patterns import Pattern, compile_pattern
from agentcli.words import counted as _count

if TYPE_CHECKING:
    from agentcli.eval.compare.sources import LoadedRun
    from agentcli.eval.reports import LoadedReport, RedactingWriter
    from agentcli.eval.run.cluster.driver import RayDispatcher
    from agentcli.eval.run.dispatch import ClusterDispatcher

__all__ = ["EvalOptions", "run_eval"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def _target(options: EvalOptions, spec: InputSpec) -> AssistantPackage:
    root = find_assistants_root(options.cwd, options.root)
    if options.assistant:
        return resolve_assistant(options.assistant, root=root, cwd=options.cwd)
    start = spec.path.parent if spec.path is not None else options.cwd
    package_dir = find_package_dir(start)
    if package_dir is None and options.default_assistant:  # the project's assistant
        return _project_assistant(options, root)
    if package_dir is None:
        raise ConfigError(
            f"no assistant given and none found from {start}",
            hint="name it: agent eval <assistant> ... (or -n <assistant>)",
        )
    return resolve_assistant(str(package_dir), root=root, cwd=options.cwd)


def _project_assistant(options: EvalOptions, root: Path | None) -> AssistantPackage:
    """The project's ``assistant:``; a name that resolves to no package is an error at the
    line of agentcli.yml that gives it (a broken package.yao names its own file)."""
    assert options.default_assistant is not None
    try:
        return resolve_assistant(options.default_assistant, root=root, cwd=options.cwd)
    except PackageError as error:
        cite = project_cite(options, "assistant")
        if cite is None or error.path is not None:  # a file of the package is at fault
            raise
        raise ConfigError(f"{cite}: {error.detail}", hint=error.hint) from None


def project_root_for(path: Path, package: AssistantPackage) -> Path:
    """The folder ``file://`` inputs must stay inside: the project holding the assistants
    root when the case file is in it, else the case file's folder."""
    if package.root is not None:
        project = Path(package.root).resolve().parent
        if path.resolve().is_relative_to(project):
            return project
    return path.resolve().parent


async def run_eval(options: EvalOptions, view: EvalView) -> int:
    """Run the invocation described by ``options``, rendering through ``view`` (spans
    exported meanwhile under ``--otel``)."""
    if not otel.wanted(options.otel):
        return await _run_eval(options, view)
    if not otel.start(required=options.otel, version=__version__):
        view.warning(
            "OTEL_EXPORTER_OTLP_ENDPOINT is set but the OpenTelemetry SDK is not installed: "
            "no spans are exported (pip install 'agentcli[otel]')"
        )
        return await _run_eval(options, view)
    try:
        return await _run_eval(options, view)
    finally:
        otel.stop()


async def _run_eval(options: EvalOptions, view: EvalView) -> int:
    """``run_eval`` without the telemetry around it."""
    if not options.input and not options.scripts:
        raise ConfigError(
            "an input is required: a message, @cases.jsonl, or --scripts MODULE",
            hint="agent eval expense @assistants/expense/tests/inputs.jsonl   or   "
            "agent eval expense 'hello'",
        )
    if options.input and options.scripts:
        raise ConfigError("give either an input or --scripts MODULE, not both")
    spec = (
        classify_input(options.input, options.cwd)
        if options.input
        else InputSpec("script_tests", options.scripts or "")
    )
    if spec.kind == "message":
        refuse_case_options(options)
        if options.connectors:
            raise ConfigError(
                "-c given several times (a connector matrix) applies to a file of cases, "
                "not to one message",
                hint="give one -c for a message, or put it in a case file",
            )
    options.connectors = matrix_columns(options.connectors, options.matrix, cwd=options.cwd)
    if spec.kind == "script_tests" and spec.value.startswith("scripts."):
        assistants_root = find_assistants_root(options.cwd, options.root)
        folder, module = resolve_script_ref(spec.value, root=assistants_root, cwd=options.cwd)
        spec = InputSpec("script_tests", module)
        package = resolve_assistant(str(folder), root=assistants_root, cwd=options.cwd)
    else:
        package = _target(options, spec)
    root = find_assistants_root(options.cwd, options.root) or package.root
    # Before the run is configured: the header of the file it goes on from settles options.
    earlier = earlier_run(options, spec, package.id)
    context = load_context_file(options.ctx_file) if options.ctx_file else EvalContext()
    if options.record and options.replay:
        raise ConfigError("give --record or --replay, not both")
    if options.connector_all and not options.connector:
        raise ConfigError("--connector-all applies -c to every assistant: give -c too")
    if options.cassettes is not None and not (options.record or options.replay):
        raise ConfigError(
            f"--cassettes {options.cassettes} needs --record or --replay",
            hint="add --record to write the cassettes there, or --replay to answer from them",
        )
    cassettes = _cassettes(options, spec) if options.record or options.replay else None
    await _check_sandbox(package)
    _check_search(package, options)
    if cassettes is not None:  # the header records where the run's cassettes are
        options.cassettes = cassettes.folder
    # One state folder per run (not per case): BeforeAll, Before, the cases, their delegates
    # and AfterAll all see the same store; a fresh one goes when the run ends, however.
    with open_state(options.state, cwd=options.cwd) as state:
        registry = AssistantRegistry(
            root,
            cwd=options.cwd,
            env=_connectors_env(options),
            state=state,
            max_concurrency=options.parallel,
            cassettes=cassettes.mode if cassettes else None,
        )
        registry.seed = options.seed
        registry.judge_connector = options.judge_connector
        if options.connector_all:  # -c for every assistant the run reaches, not only its own
            registry.connector_all = options.connector
        if options.cache:
            from agentcli.assistant.response_cache import ResponseCache

            registry.cache = ResponseCache()
            if options.runs_per_case > 1:  # repeats of the agent under test must stay independent
                registry.uncached = frozenset({package.id})
        return await _run_input(registry, package, spec, context, options, view, cassettes, earlier)


def _connectors_env(options: EvalOptions) -> dict[str, str] | None:
    """The environment the run's connectors resolve in: the process's, naming the project's
    connectors file (``AGENT_CONNECTORS``) when it has one."""
    if options.connectors_file is None:
        return None
    return {**os.environ, CONNECTORS_VARIABLE: str(options.connectors_file)}


async def _check_sandbox(package: AssistantPackage) -> None:
    """A package whose sandbox backend cannot run here fails before the first case (a
    case that picks another backend itself finds out when it runs)."""
    if package.sandbox is not None and package.sandbox.backend == "bwrap":
        from agentcli.assistant.sandbox.bwrap import check_bwrap

        await check_bwrap()


def _check_search(package: AssistantPackage, options: EvalOptions) -> None:
    """A ``db.models`` name no data model has, or a ``kb.embedding`` no connector answers,
    is bad input before the first case (each case's search would fail on it)."""
    if package.search_config is None:  # the common case: nothing to read
        return
    from agentcli.assistant.catalog import search_problems

    problems = search_problems(package, cwd=options.cwd, env=_connectors_env(options))
    if problems:
        raise ConfigError("; ".join(problems), hint="agent list --check lists every problem")


async def _run_input(
    registry: AssistantRegistry,
    package: AssistantPackage,
    spec: InputSpec,
    context: EvalContext,
    options: EvalOptions,
    view: EvalView,
    cassettes: Cassettes | None,
    earlier: EarlierRun,
) -> int:
    """Run the message, case file, script tests or generated cases ``spec`` names; the
    registry is closed after (its tool servers stopped, its memory store closed)."""
    try:
        assistant = registry.get(package)
        config = EvalConfig(
            assistant=assistant,
            registry=registry,
            connector=options.connector,
            user_id=options.user,
            team_id=options.team,
            locale=options.locale,
            context=context,
            timeout=options.timeout,
            parallel=options.parallel,
            runs=options.runs_per_case,
            adaptive=_adaptive_test(options),
            fail_fast=options.fail_fast,
            run_filter=_compile_filter(options.run_filter),
            before_all=options.before_all,
            after_all=options.after_all,
            simulator=options.simulator,
            retries=options.retries,
            max_steps=options.max_steps,
            cassettes=cassettes,
            seed=options.seed,
            keep_sandboxes=options.keep_sandboxes,
            faults=options.faults,
            connectors=tuple(options.connectors),
        )
        from agentcli.assistant.hooks import unported_hooks

        for warning in unported_hooks(package.path):  # a Yao package not yet ported
            view.warning(warning)
        for near_miss in package.near_misses:  # `max_step`: kept, not used, so said
            view.warning(str(near_miss))
        if spec.kind == "message":
            return await _run_message(config, spec.value, options, view)
        if spec.kind == "file":
            assert spec.path is not None
            cases = open_cases(spec.path, project_root=project_root_for(spec.path, package))
            return await _run_cases(config, cases, options, view, spec, earlier)
        if spec.kind == "script_tests":
            suite = load_suite(package, spec.value)
            return await _run_cases(
                config, CaseSet.of(suite.cases()), options, view, spec, earlier, suite=suite
            )
        # The generator's calls have a cassette of their own (GENERATION), so a replayed run
        # replays the cases it was given too.
        generation = cassettes.open_generation() if cassettes else None
        with tape.use(generation):
            generated = await generate_cases(
                spec.value,
                assistant=assistant,
                registry=registry,
                project_root=options.cwd,
                timeout=config.timeout,
                warn=view.warning,
            )
        if generation is not None and generation.records:
            generation.save()
        return await _run_cases(config, CaseSet.of(generated), options, view, spec, earlier)
    finally:
        await registry.aclose()


def _cassettes(options: EvalOptions, spec: InputSpec) -> Cassettes:
    """Where the run's cassettes are, and whether it records or replays them."""
    folder = options.cassettes
    if folder is None:
        beside = spec.path.parent if spec.path is not None else options.cwd
        folder = beside / "cassettes"
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"--cassettes {folder}: not a folder")
    if options.replay and not folder.is_dir():
        raise ConfigError(
            f"no cassettes to replay: {folder} does not exist",
            hint="record them first with --record (or point --cassettes at them)",
        )
    modes: dict[str | None, CassetteMode] = {
        "all": "record",
        "missing": "record-missing",
        "strict": "replay",
        "live-tools": "replay-live-tools",
        "live-model": "replay-live-model",
    }
    return Cassettes(folder, modes[options.record or options.replay])


def _adaptive_test(options: EvalOptions) -> SequentialTest | None:
    """The stopping rule of ``--runs auto``; ``--max-runs`` without it is bad input."""
    if not options.adaptive:
        if options.max_runs != EvalOptions().max_runs:
            raise ConfigError(
                f"--max-runs {options.max_runs} needs --runs auto",
                hint="--runs N runs every case N times; --runs auto --max-runs N at most N",
            )
        return None
    return SequentialTest(min_pass_rate=options.pass_bar, max_runs=options.max_runs)


def _compile_filter(pattern: str | None) -> Pattern | None:
    """The ``--run`` pattern, searched on case ids within the time bound of user patterns."""
    if not pattern:
        return None
    try:
        return compile_pattern(pattern, label="--run pattern")
    except ValueError as error:
        raise ConfigError(f"invalid --run pattern {pattern!r}: {error}") from None


def _preflight_connector(
    config: EvalConfig, cases: Iterable[CaseInfo], *, need_price: bool = False
) -> tuple[str, ...]:
    """Resolve the connectors the cases will use before any runs, so a missing key or an
    unknown connector is a usage error (exit 2), not N case errors; under ``--max-cost``
    each must have a price. The run's connectors: the matrix columns, else the one
    connector (none when the agent's create hook or AGENT_CONNECTOR answers)."""
    package = config.assistant.package
    named: dict[str, CaseInfo | None] = {}  # each spec, and the first case that names it
    if config.connectors:  # a matrix: its columns win over every case's own connector
        for number, column in enumerate(config.connectors, 1):
            check_connectors(config.registry, package, [column], label=f"matrix column {number}")
            named[column] = None
    else:
        for case in cases:
            wanted = config.connector or case.connector or package.connector
            if wanted and wanted not in named:
                own = wanted == case.connector and not config.connector
                named[wanted] = case if own else None
        fallback = config.connector or package.connector
        if not named and fallback:  # no case (an empty shard): -c or the package's still checked
            named[fallback] = None
        if (
            not named
            and not os.environ.get("AGENT_CONNECTOR")
            and not config.assistant.hooks.create
        ):
            raise ConfigError(
                f"assistant {package.id!r} has no connector",
                hint='set "connector" in package.yao, pass -c, or set AGENT_CONNECTOR',
            )
    for spec in sorted(named):
        naming = named[spec]
        if naming is not None:  # a case's own connector: its file:line in the message
            check_connectors(config.registry, package, [spec], label=f"{where(naming)}: connector")
        model = config.registry.model(spec, package=package)  # -c's or the package's
        # The price is looked up now, not by the first answer: reading litellm's cost map
        # (~1 MB) then would hold up every case whose answer is arriving with it.
        price = price_of(model)
        if need_price and price is None:
            raise ConfigError(
                f"--max-cost needs the price of connector {spec!r} ({model.provider}/"
                f"{model.name}), which litellm's cost map does not know",
                hint="add `price: {input_per_mtok: ..., output_per_mtok: ...}` (US$ per "
                "million tokens) to the connector in connectors.yml",
            )
    if config.connectors:
        return config.connectors
    one = config.connector or package.connector or os.environ.get("AGENT_CONNECTOR")
    return (one,) if one else ()


async def _run_message(config: EvalConfig, text: str, options: EvalOptions, view: EvalView) -> int:
    case = parse_case(
        {"id": "T001", "input": text},
        source_file=options.cwd / "<message>",
        line=1,
        project_root=options.cwd,
    )
    _preflight_connector(config, [CaseInfo.of(case)])
    collector.resume()  # started: the agent's turn may make garbage of its own
    started = time.perf_counter()
    conversation = config.assistant.conversation(config.request_options(case, None))
    try:
        async with asyncio.timeout(config.timeout):
            reply = await conversation.send(case.build_messages())
    except TimeoutError:
        view.direct_error(f"timed out after {config.timeout:g}s")
        return EXIT_FAILED
    except HookError as error:
        view.direct_error(str(error))
        return EXIT_FAILED
    duration_ms = int((time.perf_counter() - started) * 1000)
    view.direct_output(reply.output, trace_of(reply), duration_ms, reply.error)
    return EXIT_FAILED if reply.status in ("failed", "aborted") else EXIT_OK


def _resolve_hooks(
    package: AssistantPackage, config: EvalConfig, cases: list[CaseInfo], source: str | None
) -> None:
    """Find every hook the run names: a typo (no such file or function) is bad input, found
    before anything runs rather than as an error in each case that names it."""
    hooks = HookRunner(package)
    for ref in (config.before_all, config.after_all):
        if ref:
            hooks.resolve(ref)
    checked: set[str] = set()
    for case in cases:
        for ref in case.hooks:
            if ref in checked or case.skip:
                continue
            try:
                hooks.check(ref)  # not imported here: that may need what BeforeAll sets up
            except PackageError as error:
                raise PackageError(
                    f"case {case.id}: hook {error.detail}",
                    path=str(case.source) if case.source is not None else source,
                    hint=error.hint,
                ) from None
            checked.add(ref)


def default_output_path(case_file: Path, folder: Path | None = None) -> Path:
    """``output-YYYYMMDDHHMMSS.jsonl`` beside the case file, or in ``folder`` (``-2``,
    ``-3``... when a run in the same second already wrote one: results are never
    overwritten)."""
    folder = case_file.parent if folder is None else folder
    stem = f"output-{datetime.now():%Y%m%d%H%M%S}"
    path = folder / f"{stem}.jsonl"
    number = 1
    while path.exists():
        number += 1
        path = folder / f"{stem}-{number}.jsonl"
    return path


def _default_output(options: EvalOptions, spec: InputSpec) -> Path:
    """Where a run without ``-o`` writes: in a project its runs folder (one subfolder per
    case file), unless it asks for ``output: beside-cases``; else beside the case file."""
    case_file = spec.path or options.cwd / "cases"
    folder = results_folder_of(options, case_file)
    if folder is not None:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise ConfigError(
                f"runs folder {folder}: cannot make it ({error.strerror or error})",
                hint="runs_folder in agentcli.yml must name a folder you can write, or -o FILE",
            ) from None
    return default_output_path(case_file, folder)


def selection_of(config: EvalConfig, options: EvalOptions) -> Selection:
    """The run's case selection: ``--run``, ``--tag``, ``--exclude-tag`` and the project's
    excluded tags."""
    return Selection.of(
        config.run_filter,
        options.run_filter,
        options.tags,
        options.exclude_tags,
        options.default_excluded,
    )


@dataclass(slots=True)
class RunPlan:
    """What a case run will do: which cases, against what, kept from where, written where."""

    cases: CaseSet  # the selected cases (shard and --run applied)
    total: int  # cases before --run (in the shard)
    selected: list[CaseInfo]
    connector: str
    input_label: str
    writer: RedactingWriter
    output_path: Path
    suite: ScriptSuite | None = None
    resumed: LoadedReport | None = None
    kept: list[CaseResult] = field(default_factory=list)
    baseline: LoadedRun | None = None  # --baseline: the results the run is compared with
    otel: dict[str, str] | None = None  # --otel: the run span's trace and span ids
    columns: tuple[str, ...] = ()  # a connector matrix: the connectors every case runs on
    rerun: Rerun | None = None  # --rerun / --last-failed: the run whose failures run again


async def _run_cases(
    config: EvalConfig,
    cases: CaseSet,
    options: EvalOptions,
    view: EvalView,
    spec: InputSpec,
    earlier: EarlierRun,
    *,
    suite: ScriptSuite | None = None,
) -> int:
    """Plan the run, run it, finish it: the exit code."""
    rerun = earlier.rerun
    if rerun is not None and not rerun.ids:
        view.info(f"No failed cases in {rerun.source}: nothing to re-run")
        return EXIT_OK
    cases, total = _selected_cases(config, cases, options, view, rerun)
    # Before anything else reads the cases: an empty selection is its own error (exit 2;
    # a run of suites skips the file), not "no connector" from a connector check of none.
    _check_selection(config, options, cases, total, _input_label(spec, suite))
    if options.dry_run:
        return _dry_run(cases, options, view, spec)
    if options.estimate:
        return _estimate(config, cases, view)
    plan = _plan(config, cases, total, options, spec, suite, earlier.resumed)
    if rerun is not None:  # the other cases' results are kept as that run wrote them
        plan.rerun, plan.kept = rerun, rerun.kept
    _announce(plan, config, options, view)
    package = config.assistant.package
    attributes = {"agentcli.agent.id": package.id, "agentcli.connector": plan.connector}
    dispatcher = _dispatcher(config, options, spec if suite is not None else None, view)
    try:
        with otel.span(f"agent eval {package.id}", attributes) as run_span:
            plan.otel = run_span.ids()
            _open_results(plan, config, options)
            note_latest(options, plan.writer.stream_path or plan.output_path)
            run = CaseRun(config, plan, options, view, dispatcher=dispatcher)
            with _signals_to(run.on_signal):
                try:
                    await run.run()
                    summary, stability = run.close_results()
                finally:
                    await run.runner.after_all(run.before_all_data)
            code = run.finish(summary, stability)
            run_span.update(_summary_attributes(summary))
            if code != EXIT_OK:
                run_span.fail(f"exit code {code}: {summary.failed} failed, {summary.errors} errors")
    finally:
        if dispatcher is not None:
            dispatcher.close()
    return code


def _summary_attributes(summary: RunSummary) -> dict[str, int | float]:
    """The run span's figures."""
    return {
        "agentcli.cases.total": summary.total,
        "agentcli.cases.passed": summary.passed,
        "agentcli.cases.failed": summary.failed,
        "agentcli.cases.errors": summary.errors,
        "agentcli.cases.timeouts": summary.timeouts,
        "agentcli.pass_rate": float(summary.pass_rate or 0.0),
    }


def _dispatcher(
    config: EvalConfig, options: EvalOptions, scripts: InputSpec | None, view: EvalView
) -> RayDispatcher | None:
    """Where the cases run: here (None), or as tasks on the Ray cluster of ``--executor
    ray`` (connected now, so a cluster that cannot be reached is exit 2, nothing run)."""
    if options.executor != "ray":
        given = given_flags(options, lambda spec: spec.label in ("--ray-address", "--ray-cpus"))
        if given:
            verb = "goes" if len(given) == 1 else "go"
            raise ConfigError(
                f"{', '.join(given)} {verb} with --executor ray", hint="add --executor ray"
            )
        return None
    from agentcli.eval.run.cluster.driver import connect

    dispatcher = connect(config, options, scripts=scripts.value if scripts else None)
    view.info(f"Executor: ray ({dispatcher.describe()})")
    return dispatcher


def _selected_cases(
    config: EvalConfig,
    cases: CaseSet,
    options: EvalOptions,
    view: EvalView,
    rerun: Rerun | None = None,
) -> tuple[CaseSet, int]:
    """The cases of this shard that ``--run`` (and ``--rerun``) select, and how many the
    shard holds."""
    if options.shard:
        shard = resolve_shard(options.shard)
        index, count = shard.index, shard.count
        cases = cases.where(lambda case_id: in_shard(case_id, index, count))
        view.info(f"Shard: {shard.describe()} ({_count(len(cases), 'test case')})")
    total = len(cases)
    selection = selection_of(config, options)
    if selection.run_filter is not None or selection.by_tags:
        # once, here: everything after sees only the selected cases
        cases = cases.matching(selection.keeps)
    if rerun is not None:
        failing = rerun.ids
        cases = cases.where(lambda case_id: case_id in failing)
        if not len(cases):
            raise ConfigError(
                f"none of the {_count(len(failing), 'failed case')} of {rerun.source} "
                "is in this case file (or selection)",
                hint="re-run with the case file that run used",
            )
    return cases, total


def _input_label(spec: InputSpec, suite: ScriptSuite | None) -> str:
    """How messages name the run's input: its case file (or script), else the input given."""
    return case_file_label(suite.path if suite else spec.path) or spec.value


def _check_selection(
    config: EvalConfig, options: EvalOptions, cases: CaseSet, total: int, input_label: str
) -> None:
    """A ``--run``/``--tag`` selection that leaves none of the file's cases is bad input
    (:class:`NothingSelected`). A shard that holds no case is no error: it runs nothing,
    and its results file still merges."""
    if len(cases) or not total:
        return
    selection = selection_of(config, options)
    if selection.by_tags:
        raise NothingSelected(
            f"no test cases of {input_label} match the selection ({selection.describe()})",
            hint="check the tags: agent eval ... --dry-run lists the cases",
        )
    if config.run_filter is not None:
        raise NothingSelected(
            f"no test cases match pattern {options.run_filter!r} (in {input_label})",
            hint="--run is a regular expression searched in case ids; "
            "agent eval ... --dry-run lists the cases",
        )


def _plan(
    config: EvalConfig,
    cases: CaseSet,
    total: int,
    options: EvalOptions,
    spec: InputSpec,
    suite: ScriptSuite | None,
    resumed: LoadedReport | None,
) -> RunPlan:
    """Check everything the run needs before anything runs (connector, simulators, hooks,
    the results to resume, the output target): bad input is exit 2, not lost results."""
    from agentcli.eval.reports import writer_for

    package = config.assistant.package
    if options.matrix_pass == "any" and not config.connectors:
        raise ConfigError(
            "--matrix-pass any applies to a connector matrix (-c given several times, or "
            "--matrix), and this run is on one connector",
            hint="give the connectors: -c A -c B --matrix-pass any, or leave --matrix-pass out",
        )
    if suite is None:
        connectors = _preflight_connector(
            config, cases.infos, need_price=options.max_cost is not None
        )
    elif config.connectors:
        connectors = config.connectors
    else:  # script tests call the agent only if they want to
        one = config.connector or package.connector
        connectors = (one,) if one else ()
    connector = ", ".join(connectors)  # the header's label; the matrix goes as columns
    input_label = _input_label(spec, suite)
    selected = cases.infos
    check_simulators(
        selected, config.simulator, config.registry, project_cite(options, "simulator")
    )
    _resolve_hooks(package, config, selected, input_label)
    if suite is None:  # judges, script functions, simulators' connectors
        check_references(
            config.registry,
            HookRunner(package),
            selected,
            simulator=config.simulator,
            fallback=input_label,
            judge_connector_source=project_cite(options, "judge_connector"),
            assistant=config.assistant,
        )
    if config.cassettes is not None:  # a broken cassette is bad input: exit 2, nothing run
        for column in config.columns().values():
            assert column.cassettes is not None
            column.cassettes.check([info.id for info in selected], config.runs)
    baseline = _baseline(options)
    if baseline is not None and options.output is not None and str(options.output) == "-":
        raise ConfigError(
            "--baseline compares the run's results read back from its file; -o - writes "
            "them to stdout",
            hint="give -o a file",
        )
    kept = kept_results(resumed) if resumed is not None else []
    if resumed is not None:
        config.done = _done_cases(resumed)
        if config.adaptive is not None:
            config.kept_runs = _kept_runs(resumed)
    output_path = options.output or options.resume or _default_output(options, spec)
    # Before any output: an unknown extension, an output that is an input, a file that is
    # not a report, a folder that takes no file are bad input (exit 2), not lost results.
    writer = writer_for(
        output_path,
        stream=True,
        inputs=_input_files(options, spec, suite),
        force=options.force,
    )
    return RunPlan(
        cases=cases,
        total=total,
        selected=selected,
        connector=connector,
        input_label=input_label,
        writer=writer,
        output_path=output_path,
        suite=suite,
        resumed=resumed,
        kept=kept,
        baseline=baseline,
        columns=config.connectors,
    )


def _announce(plan: RunPlan, config: EvalConfig, options: EvalOptions, view: EvalView) -> None:
    """The header and the info lines that say what is about to run."""
    package, connector, suite = config.assistant.package, plan.connector, plan.suite
    input_label, total, selected = plan.input_label, plan.total, plan.selected
    run_filter, writer, kept = config.run_filter, plan.writer, plan.kept
    view.header("Script Test" if suite else "Agent Test")
    view.info(f"Agent: {package.id}")
    if config.connectors:
        view.info(f"Matrix: {connector} ({len(config.connectors)} connectors per test case)")
        if options.matrix_pass == "any":
            view.info("Matrix pass: a case passes on any connector")
    elif connector:
        view.info(f"Connector: {connector}" + (" (override)" if options.connector else ""))
    if suite is not None:
        view.info(f"Script: {input_label} ({_count(total, 'test function')})")
    else:
        view.info(f"Input: {input_label} ({_count(total, 'test case')})")
    skipped = sum(1 for c in selected if c.skip)
    if skipped:
        view.warning(f"Skipped: {_count(skipped, 'test case')}")
    if suite is None:  # a script test asserts in its code
        _unchecked_warning([c for c in selected if c.unchecked and not c.skip], view)
    selection = selection_of(config, options)
    # "Selected: 6 of 11 test cases (tag smoke)": when tags were asked for, or the
    # project's excluded tags left cases out
    if options.tags or options.exclude_tags or (selection.by_tags and len(selected) < total):
        view.info(
            f"Selected: {len(selected):,} of {_count(total, 'test case')} ({selection.describe()})"
        )
    elif run_filter is not None:
        matched = _count(len(selected), "test case")
        verb = "matches" if len(selected) == 1 else "match"
        view.info(f'Filter: "{options.run_filter}" ({matched} {verb})')
    if options.ctx_file:
        view.info(f"Context: {options.ctx_file}")
    if config.registry.state.kind != "fresh":
        view.info(f"State: {config.registry.state.label}")
    if config.adaptive is not None:
        test = config.adaptive
        view.info(
            f"Runs: auto, {test.min_runs}-{test.max_runs} per test case, until the pass rate"
            f" is decided against {test.min_pass_rate:g}% (SPRT)"
        )
    elif config.runs > 1:
        view.info(f"Runs: {config.runs} per test case (stability analysis)")
        if options.pass_bar < 100:
            view.info(f"Min pass rate: {options.pass_bar:g}%")
    view.info(f"Timeout: {config.timeout:g}s")
    if config.max_steps is not None:
        view.info(f"Max steps: {config.max_steps} per turn")
    view.info(f"Parallel: {config.parallel}")
    if writer.stream_path is not None:
        view.info(f"Streaming results to {writer.stream_path}")
    if plan.rerun is not None:
        view.info(
            f"Re-run: {_count(len(selected), 'failed case')} of {plan.rerun.source}"
            f" ({len(kept)} results of the others kept)"
        )
        for warning in plan.rerun.warnings:
            view.warning(warning)
    if options.resume:
        view.info(f"Resume: {options.resume} ({_count(len(kept), 'finished result')} kept)")
        assert plan.resumed is not None
        _resume_warnings(plan.resumed, view)
        _other_columns_warning(plan.resumed, config, view)


def _unchecked_warning(unchecked: list[CaseInfo], view: EvalView) -> None:
    """``No assertions: 2 test cases pass whatever the answer (a, b)``."""
    if not unchecked:
        return
    shown = ", ".join(case.id for case in unchecked[:5])
    more = f" and {len(unchecked) - 5} more" if len(unchecked) > 5 else ""
    verb = "passes" if len(unchecked) == 1 else "pass"
    first = unchecked[0].source
    where = f"{first}: " if first is not None else ""
    view.warning(
        f"{where}No assertions: {_count(len(unchecked), 'test case')} {verb} whatever the "
        f'answer ({shown}{more}); give each an "assert" or an "expected"'
    )


def _open_results(plan: RunPlan, config: EvalConfig, options: EvalOptions) -> None:
    """Write the header (and the kept results) to the results file."""
    input_label, writer, kept = plan.input_label, plan.writer, plan.kept
    started_at = datetime.now(UTC)
    locale, user_id, team_id = config.identity()
    header = RunHeader(
        environment={
            "user_id": user_id,
            "team_id": team_id,
            "locale": locale,
            "chat_id": config.context.chat_id or None,
            "metadata": config.context.metadata or None,
        },
        metadata={
            "started_at": started_at.isoformat(),
            "version": __version__,
            "input_file": input_label,
            # Known now: a run killed before its summary is still named by its file.
            "agent_id": config.assistant.package.id,
            "connector": plan.connector,
            "options": header_options(options),
        },
    )
    if plan.otel is not None:  # the run's trace, for a viewer to link to
        header.metadata["otel"] = plan.otel
    # The kept results are on disk before anything runs, written back as they were read
    # (the reader's repairs are for counting and matching).
    writer.open(header, kept)


@contextlib.contextmanager
def _signals_to(handler: Callable[[int], None]) -> Iterator[None]:
    """SIGINT and SIGTERM go to ``handler`` (with the signal number) inside the block; once
    one came, after it too, until the process ends: the run is stopping, and a further
    signal (counted by ``handler``: the third leaves at once) must not end the process by
    SIGTERM's default before it leaves with 130."""
    loop = asyncio.get_running_loop()
    signums = (signal.SIGINT, signal.SIGTERM)
    previous = {signum: signal.getsignal(signum) for signum in signums}
    came: list[int] = []

    def on_signal(signum: int) -> None:
        came.append(signum)
        handler(signum)

    for signum in signums:
        loop.add_signal_handler(signum, on_signal, signum)
    try:
        yield
    finally:
        for signum in signums:
            loop.remove_signal_handler(signum)
            if came:  # stopping: the handler still counts them (the loop may be gone)
                signal.signal(signum, lambda signum, _frame: handler(signum))
                continue
            # The handlers from before the block (asyncio's, the state folder's), not the
            # defaults remove_signal_handler leaves: a signal after the block still cleans up.
            handler_before = previous[signum]
            if handler_before is not None:  # None: not set from Python, nothing to put back
                signal.signal(signum, handler_before)


def _faulted(plan: RunPlan, run_faults: FaultPlan | None) -> dict[str, str]:
    """The cases that run under faults (their own ``tools.faults``, else ``--faults``),
    each with its plan as text: their pass^k is a robustness figure."""
    faulted = {}
    for info in plan.selected:
        faults = info.faults if info.faults is not None else run_faults
        if faults is not None and faults.active:
            faulted[info.id] = str(faults)
    return faulted


class ResultTally:
    """A run's results as they come, in case order: counted, written to the results file,
    and (``--runs``) gathered into each case's stability figures. It holds nothing of the
    runner that feeds it, so a finished run leaves no reference cycle behind."""

    def __init__(
        self,
        plan: RunPlan,
        show_stability: Callable[[CaseStability], object],
        *,
        runs: int,
        min_pass_rate: float,
        faults: FaultPlan | None = None,
        adaptive: SequentialTest | None = None,
    ) -> None:
        self.writer, self.show_stability = plan.writer, show_stability
        self.runs, self.min_pass_rate = runs, min_pass_rate
        self.counts: dict[str, int] = {}
        self.costs = CostTotals()
        self.recap = Recap()
        self.write_failure: OutputError | None = None
        self.stop_run: Callable[[], object] = lambda: None  # called when writing fails
        columns = plan.columns
        self.tracker = (
            StabilityTracker(runs=runs, faults=_faulted(plan, faults), stop=adaptive)
            if runs > 1
            else None
        )
        if self.tracker is not None:
            for info in plan.selected:
                for column in columns or (None,):
                    self.tracker.declare(info.id, column)
        # A connector matrix: every cell's statuses, for its table and its exit code.
        self.grid = Matrix(list(columns), runs_per_case=runs) if columns else None
        self._count_kept(plan.kept)

    def _count_kept(self, kept: list[CaseResult]) -> None:
        """The kept results of ``--resume`` count as if this run had them."""
        counts, tracker, grid = self.counts, self.tracker, self.grid
        tracked: set[tuple[str, int | None, str | None]] = set()
        for previous in kept:  # the reader's statuses: always one of STATUSES
            counts[previous.status] = counts.get(previous.status, 0) + 1
            self.recap.add(previous)
            key = (previous.id, previous.run, previous.connector)
            if not previous.id or key in tracked:
                continue  # a run kept twice counts once in its case's figures
            tracked.add(key)
            self.costs.add(previous)
            if tracker is not None:
                tracker.add(previous)
            if grid is not None:
                grid.add(previous)

    def on_result(self, result: CaseResult) -> None:
        """A finished result: counted and written."""
        counts, writer = self.counts, self.writer
        if self.write_failure is not None:
            return  # the run is stopping: results cannot reach the disk any more
        counts[result.status] = counts.get(result.status, 0) + 1
        self.costs.add(result)
        self.recap.add(result)
        if self.grid is not None:
            self.grid.add(result)
        try:
            writer.add(result)
        except OutputError as error:  # a full disk, an I/O error: stop, say what was kept
            self.write_failure = error
            self.stop_run()

    def stop_when(self, result: CaseResult) -> bool:
        """Whether ``result`` stops a ``--fail-fast`` run: with ``--runs``, once its case
        can no longer reach ``--min-pass-rate``."""
        tracker = self.tracker
        if tracker is None:
            return failed(result)
        finished = tracker.add(result)
        if finished is not None:
            self.show_stability(finished)
        return not tracker.can_still_reach(
            result.id, self.runs, self.min_pass_rate, connector=result.connector
        )


class CaseRun:
    """The run step of a plan: the cases run with fail-fast and interrupts, their results
    tallied as they come; then the summary on disk and the exit code."""

    def __init__(
        self,
        config: EvalConfig,
        plan: RunPlan,
        options: EvalOptions,
        view: EvalView,
        *,
        dispatcher: ClusterDispatcher | None = None,
    ) -> None:
        self.config, self.plan, self.options, self.view = config, plan, options, view
        self.matrix_pass: MatrixPass = "any" if options.matrix_pass == "any" else "all"
        self.interrupted = False
        self.signals = 0
        self.grace = stop_grace()
        self.before_all_data: Any = None
        self.failed_before_all: BeforeAllFailed | None = None
        self.duration_ms = 0
        self.run_task: asyncio.Future[RunOutcome] | None = None
        # Events and results reach the view and the file through the outbox: batched
        # under --parallel, so their bookkeeping stays off the network path.
        # (The callbacks hold the outbox, the view and the tally, never this object: a
        # finished run leaves no reference cycle behind.)
        self.outbox = outbox = Outbox(BATCH_DELAY if config.parallel > 1 else 0)
        self.tally = tally = ResultTally(
            plan,
            lambda stats: outbox.put(view.stability, stats),
            runs=config.runs,
            min_pass_rate=options.pass_bar,
            faults=options.faults,
            adaptive=config.adaptive,
        )
        suite = plan.suite
        self.runner = EvalRunner(
            config,
            executor_for=None if suite is None else lambda column: ScriptExecutor(column, suite),
            on_event=lambda event: outbox.put(view.on_event, event),
            on_result=lambda result: outbox.put(tally.on_result, result),
            stop_when=tally.stop_when,
            budget=None if options.max_cost is None else CostBudget(options.max_cost),
            dispatcher=dispatcher,
        )

    def on_signal(self, signum: int) -> None:
        """Ctrl-C: stop, keeping finished results and the summary; hooks still running get
        the grace period. Twice: leave the hooks behind now. Three times: exit at once."""
        self.signals += 1
        if self.signals == 1:  # stop: finished results, the summary, clean-up within the grace
            self.interrupted = True
            note_interrupt(signum)
            self._hand_on()
            self.view.warning(
                f"Stopping: hooks still running get {self.grace:g}s to finish "
                "(a second Ctrl-C stops them now)"
            )
            self.runner.interrupt(self.grace)
            if self.run_task is not None:
                self.run_task.cancel()
        elif self.signals == 2:  # leave the hooks behind now; the summary is still written
            self.runner.interrupt(0)
        else:  # no clean-up runs after this: the fresh state folder goes first
            self.config.registry.state.remove()
            os._exit(EXIT_INTERRUPTED)

    async def run(self) -> None:
        """Run the plan's cases to their end, a stop or an interrupt."""
        view, runner = self.view, self.runner
        view.section("Running Tests")
        columns = max(1, len(self.config.connectors))
        view.start_progress(len(self.plan.selected) * self.config.runs * columns)
        clock = time.perf_counter()
        self.run_task = run_task = asyncio.ensure_future(runner.run(self.plan.cases))
        self.tally.stop_run = run_task.cancel
        # A batch that cannot be handed on stops the run; ``run`` raises its failure.
        self.outbox.on_failure = lambda failure: run_task.cancel()
        # Everything loaded so far (modules, the package, every case's summary) lives for the
        # whole run: frozen, the collector's full passes skip it instead of walking it again
        # and again (W3: 100,000 case summaries); young collections come less often (see
        # agentcli.collector). Undone at the end, for callers in-process.
        outbox = self.outbox
        with collector.while_running():
            try:
                outcome = await run_task
                self.before_all_data = outcome.before_all_data
            except asyncio.CancelledError:
                stopped = self.interrupted or self.tally.write_failure or outbox.failure
                if not stopped:
                    raise
                runner.flush_finished()
            except BeforeAllFailed as error:
                self.failed_before_all = error
            finally:
                self._hand_on()
                outbox.delay = 0  # AfterAll's lines and the summary are shown as they come
                view.stop_progress()
        self.duration_ms = int((time.perf_counter() - clock) * 1000)
        if outbox.failure is not None:
            raise outbox.failure

    def _hand_on(self) -> None:
        """Hand on what the outbox holds now; a failure is kept for ``run`` to raise."""
        try:
            self.outbox.drain()
        except Exception as error:
            self.outbox.failure = self.outbox.failure or error

    def close_results(self) -> tuple[RunSummary, list[CaseStability]]:
        """The summary and the ``--runs`` figures, written before AfterAll runs: a hook that
        hangs cannot cost them."""
        config, options, tally = self.config, self.options, self.tally
        counts, tracker, write_failure = tally.counts, tally.tracker, tally.write_failure
        writer, output_path, duration_ms = self.plan.writer, self.plan.output_path, self.duration_ms
        package, connector = config.assistant.package, self.plan.connector
        summary = summary_from_counts(
            counts, agent_id=package.id, connector=connector, duration_ms=duration_ms
        )
        tally.costs.write_to(summary)
        stability = tracker.results() if tracker is not None else []
        classes = tally.recap.counts()
        if classes:  # who the failures are on; a run that passed keeps its summary as it was
            summary.extra["attribution"] = classes
        if tracker is not None:
            summary.extra.update(stability_summary(stability, min_pass_rate=options.pass_bar))
            summary.extra["runs_per_case"] = config.runs
            if config.adaptive is not None:  # runs used against --runs --max-runs
                used = sum(stats.runs + stats.skipped for stats in stability)
                summary.extra["adaptive"] = config.adaptive.saving(len(stability), used)
        if tally.grid is not None:
            summary.extra["matrix"] = tally.grid.summary(self.matrix_pass, options.pass_bar)
        if write_failure is not None:
            writer.abandon()
            raise _resumable(write_failure, writer.stream_path or output_path)
        # The summary goes to disk before AfterAll runs: a hook that hangs cannot cost it.
        try:
            writer.close(summary, [s.to_dict() for s in stability] or None)
        except OutputError as error:
            resumable = writer.stream_path or output_path
            write_failure = error if writer.results_complete else _resumable(error, resumable)
        tally.write_failure = write_failure
        return summary, stability

    def _progress_said(self) -> str:
        """``3 of 11 test cases finished`` (``runs`` under --runs or a matrix), counting the
        results ``--resume`` kept."""
        config, plan = self.config, self.plan
        planned = len(plan.selected) * config.runs * max(1, len(config.connectors))
        done = self.runner.delivered + (len(plan.kept) if plan.resumed is not None else 0)
        noun = "run" if planned != len(plan.selected) else "test case"
        return f"{done:,} of {_count(planned, noun)} finished"

    def finish(self, summary: RunSummary, stability: list[CaseStability]) -> int:
        """Show the summary and the verdict; the exit code."""
        view, options, writer = self.view, self.options, self.plan.writer
        output_path = self.plan.output_path
        if self.failed_before_all is not None:
            view.error(f"beforeAll script failed: {self.failed_before_all}")
            return EXIT_USAGE
        recap = self.tally.recap.lists(stability, options.pass_bar)  # the bar the exit code uses
        view.failures(recap, self.tally.recap.counts())
        view.summary(summary, str(output_path))
        grid = self.tally.grid
        if grid is not None:
            view.matrix(grid, self.matrix_pass, options.pass_bar)
        write_failure = self.tally.write_failure
        if write_failure is not None:  # after the summary: the figures are true, a file is not
            raise write_failure
        view.output_file(str(output_path))
        if self.interrupted:
            written = f"{output_path}" + (
                f" and {writer.stream_path}" if writer.stream_path else ""
            )
            view.warning(f"Interrupted: {self._progress_said()}; their results are in {written}")
            return EXIT_INTERRUPTED
        code = exit_code_for(summary, stability, options.pass_bar)
        if grid is not None:  # a matrix: its cells decide, by --matrix-pass
            code = grid.exit_code(self.matrix_pass, options.pass_bar)
        verdict = code  # the banner tells the cases' truth; --gate may decide the exit code
        if self.plan.baseline is not None:
            from agentcli.eval.compare.gate import gate_run

            results = writer.stream_path or output_path
            code = gate_run(self.plan.baseline, results, options, view, code)
        budget = self.runner.budget
        if budget is not None and budget.cut:  # a run cut short is no pass, whatever ran
            view.warning(
                f"Stopped at --max-cost {format_usd(budget.limit)}: {format_usd(budget.spent)} "
                f"spent, {_count(budget.skipped, 'run')} skipped"
            )
            code, verdict = max(code, EXIT_FAILED), max(verdict, EXIT_FAILED)
        view.banner(verdict == EXIT_OK)
        return code


def _resumable(error: OutputError, results: Path) -> OutputError:
    """``error`` with a hint that says how to finish the run from what is on disk."""
    if isinstance(error, OutputClosed):
        return error  # nothing to finish: the reader wanted no more
    todo = error.hint or "free some space or write elsewhere"
    return OutputError(error.message, hint=f"{todo}; then finish the run with --resume {results}")


def _baseline(options: EvalOptions) -> LoadedRun | None:
    """The ``--baseline`` results, read before anything runs (bad input is exit 2 now)."""
    if options.baseline is None and options.gate is None:
        if options.alpha != EvalOptions().alpha:
            raise ConfigError(
                f"--alpha {options.alpha:g} needs --baseline FILE: the runs it compares"
            )
        if options.include_infra:
            raise ConfigError("--include-infra needs --baseline FILE: the runs it compares")
        return None  # the compare package is not even imported
    from agentcli.eval.compare.gate import load_baseline

    return load_baseline(options)


def _input_files(options: EvalOptions, spec: InputSpec, suite: ScriptSuite | None) -> list[Path]:
    """The files the run reads, which no output may overwrite."""
    files = [spec.path, suite.path if suite else None, options.ctx_file, options.rerun]
    return [path for path in files if path is not None]


def _done_cases(
    resumed: LoadedReport,
) -> frozenset[tuple[str, int | None] | tuple[str, int | None, str]]:
    """The ``(id, run)`` of every kept result (in a matrix ``(id, run, connector)``), which
    the run skips. A result without a usable id matches no case: it stays in the file and
    its case (whichever it was) runs again."""
    return frozenset(
        (r.id, r.run) if r.connector is None else (r.id, r.run, r.connector)
        for r in resumed.results
        if r.id
    )


def _kept_runs(resumed: LoadedReport) -> dict[tuple[str, str | None], list[CaseResult]]:
    """``--resume`` of a ``--runs auto`` run: each cell's kept runs, in run order (a run
    kept twice counts once, as in its figures), for its stopping rule to see first."""
    cells: dict[tuple[str, str | None], dict[int, CaseResult]] = {}
    for result in resumed.results:
        if result.id:
            cells.setdefault(result.cell, {}).setdefault(result.run or 1, result)
    return {cell: [runs[run] for run in sorted(runs)] for cell, runs in cells.items()}


def _other_columns_warning(resumed: LoadedReport, config: EvalConfig, view: EvalView) -> None:
    """Kept results of connectors this run does not run (a matrix resumed with other
    columns, or without one) count as done for no case: say so."""
    running = set(config.connectors) if config.connectors else {None}
    other = {r.connector for r in resumed.results if r.id and r.connector not in running}
    if other:
        names = ", ".join(sorted(name or "no matrix" for name in other))
        view.warning(
            f"kept results of connectors this run does not run ({names}) stay in the file; "
            "no case counts as done because of them"
        )


def _resume_warnings(resumed: LoadedReport, view: EvalView) -> None:
    """The reader's warnings about the resumed file, and the kept results no case matches."""
    for warning in resumed.warnings:
        view.warning(warning)
    orphans = sum(1 for result in resumed.results if not result.id)
    if orphans:
        view.warning(
            f"{_count(orphans, 'kept result')} {'has' if orphans == 1 else 'have'} no usable id "
            "and match no case: "
            "they stay in the file, and no case counts as done because of them"
        )


def _estimate(config: EvalConfig, cases: CaseSet, view: EvalView) -> int:
    """``--estimate``: the planned calls and their cost, checked as a run would check its
    connectors and simulators first; nothing runs."""
    from agentcli.eval.run.estimate import estimate_run, matrix_lines

    connectors = _preflight_connector(config, cases.infos)
    check_simulators(cases.infos, config.simulator, config.registry)
    if config.connectors:  # a matrix: each column is a run of every case on its connector
        columns = config.columns()
        lines = matrix_lines(
            {name: estimate_run(columns[name], cases, name) for name in config.connectors}
        )
    else:
        lines = estimate_run(config, cases, connectors[0] if connectors else "").lines()
    view.section("Estimate")
    for line in lines:
        view.info(line)
    return EXIT_OK


def _dry_run(cases: Iterable[Case], options: EvalOptions, view: EvalView, spec: InputSpec) -> int:
    """List the cases; with ``-o``, write them as a case file (never over an input, never
    over an existing file without ``--force``)."""
    from agentcli.eval.reports import is_stdout, stdout_stream
    from agentcli.eval.reports._files import (
        JSON_ERRORS,
        atomic_write_text,
        check_target,
        probe_writable,
    )

    if is_stdout(options.output):  # -o -: the case file on stdout
        for case in cases:
            view.dry_run_case(case)
        out = stdout_stream()
        out.writelines(json.dumps(case.to_dict(), ensure_ascii=False) + "\n" for case in cases)
        out.flush()
        return EXIT_OK
    if options.output is not None:
        check_target(
            options.output,
            recognises=lambda head: False,  # a listing is a case file: only --force replaces one
            inputs=_input_files(options, spec, None),
            force=options.force,
        )
        probe_writable(options.output)
    for case in cases:
        view.dry_run_case(case)
    if options.output is not None:
        lines = [json.dumps(case.to_dict(), ensure_ascii=False) + "\n" for case in cases]
        atomic_write_text(options.output, "".join(lines), errors=JSON_ERRORS)
        view.output_file(str(options.output))
    return EXIT_OK

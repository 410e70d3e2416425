"""The driver's side of ``--executor ray``: connect to the cluster, ship the package, and
dispatch each case as a Ray task.

The package travels in Ray's runtime environment: its project folder (the one holding the
assistants root, else the package's parent) is the job's ``working_dir``, which Ray zips,
uploads once and unpacks as every worker's working directory. A case's inputs are read
here (files encoded into its messages), so nothing outside that folder is needed there.
Each task may be retried by Ray when its worker or node dies (``TASK_RETRIES``); the
driver awaits one result per case, so a re-run case is still recorded once.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import re
import socket
import sys
import threading
import time
import uuid
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.errors import AgentCliError, ConfigError
from agentcli.eval.results.model import CaseResult
from agentcli.eval.run.cluster.budget import Budget
from agentcli.eval.run.cluster.spec import WorkerSpec
from agentcli.eval.run.cluster.worker import TaskResult, run_case
from agentcli.eval.run.executor import error_result

if TYPE_CHECKING:
    from agentcli.eval.cases.model import Case
    from agentcli.eval.run.options import EvalOptions
    from agentcli.eval.run.runner import EvalConfig

__all__ = ["RayDispatcher", "connect"]

TASK_RETRIES = 3  # re-runs of a case's task whose worker or node died
# Beyond the case's own timeout, how long a task may wait for a worker (a busy cluster, a
# node coming up) before the driver gives it up as timed out.
SCHEDULING_ALLOWANCE = 120.0
CONNECT_TIMEOUT = 60.0  # seconds ray.init may take (a wrong address otherwise hangs minutes)
NAMESPACE = "agentcli"
# Never shipped: version control, environments, caches (Ray also honours .gitignore).
EXCLUDES = (".git", ".venv", "venv", "__pycache__", "*.pyc", "node_modules", ".mypy_cache")
# Handed to the workers when set here: what picks a connector, and litellm's offline map.
# API keys are not: a worker reads them from its own environment (a Secret on KubeRay).
FORWARDED_ENV = ("AGENT_CONNECTOR", "LITELLM_LOCAL_MODEL_COST_MAP")
# EvalConfig fields a worker does not get: live objects, and what only the driver does.
_DRIVER_ONLY = frozenset(
    {"assistant", "registry", "cassettes", "done", "run_filter", "before_all", "after_all"}
)
_ADDRESS = re.compile(r"(?:ray://)?(\[[^\]]+\]|[^:/\s]+):(\d+)")


class RayDispatcher:
    """The runner's ``CaseDispatcher`` for a Ray cluster: a task per case."""

    def __init__(self, ray: Any, spec: WorkerSpec, *, cpus: float = 1.0) -> None:
        self.ray, self.spec, self.cpus = ray, spec, cpus
        self._spec_ref = ray.put(spec)  # pickled once, not once per case
        remote = ray.remote(run_case)
        self._task = remote.options(max_retries=TASK_RETRIES, retry_exceptions=False, num_cpus=cpus)

    async def dispatch(
        self, case: Case, run: int | None, *, started: float, timeout: float
    ) -> CaseResult:
        """Run the case on a worker and wait for it (bounded: its timeout plus the time a
        task may wait for a worker); a cancelled wait cancels the task."""
        elapsed = time.perf_counter() - started
        ref = self._task.remote(self._spec_ref, _portable(case), run, elapsed)
        bound = timeout + SCHEDULING_ALLOWANCE
        try:
            async with asyncio.timeout(bound):
                returned: TaskResult = await asyncio.wrap_future(ref.future())
        except asyncio.CancelledError:
            self._cancel(ref)  # --fail-fast or Ctrl-C: the worker stops the case too
            raise
        except TimeoutError:
            self._cancel(ref)
            result = error_result(
                case, run, f"no result from the Ray cluster within {bound:g}s", started
            )
            result.status = "timeout"
            return result
        except self.ray.exceptions.RayError as error:
            return error_result(case, run, f"ray: {_reason(error)}", started)
        data, lines = returned
        _print_again(lines)
        return CaseResult.from_dict(data)

    def for_config(self, config: EvalConfig) -> RayDispatcher:
        """The dispatcher of one matrix column: the same cluster, shipped package and budget,
        the column's settings (its connector), and a session of its own on each worker."""
        column = config.connector or ""
        spec = dataclasses.replace(
            self.spec, run_id=f"{self.spec.run_id}:{column}", settings=_settings(config)
        )
        return RayDispatcher(self.ray, spec, cpus=self.cpus)

    def describe(self) -> str:
        """The cluster in a few words: its nodes and CPUs, and how many cases fit at once
        (what ``--parallel`` may use)."""
        nodes = sum(1 for node in self.ray.nodes() if node.get("Alive"))
        cpus = self.ray.cluster_resources().get("CPU", 0)
        room = int(cpus / self.cpus + 1e-9)
        return (
            f"{nodes} node{'s' if nodes != 1 else ''}, {cpus:g} CPUs: room for {room} cases at once"
        )

    def _cancel(self, ref: Any) -> None:
        with contextlib.suppress(Exception):  # finished meanwhile, or the cluster is gone
            self.ray.cancel(ref)

    def close(self) -> None:
        """Leave the cluster (the budget actor and this job's workers go with it)."""
        with contextlib.suppress(Exception):
            self.ray.shutdown()


def connect(config: EvalConfig, options: EvalOptions, *, scripts: str | None) -> RayDispatcher:
    """Connect to the cluster ``--ray-address`` names with the package shipped; bad input
    (no Ray, an unreachable address, --record/--replay) is a ConfigError."""
    if options.record or options.replay:
        raise ConfigError(
            "--record/--replay cannot be used with --executor ray: cassettes are files "
            "of this machine",
            hint="record or replay with --executor local",
        )
    try:
        import ray
    except ImportError:
        raise ConfigError(
            "--executor ray needs Ray, which is not installed",
            hint="pip install 'agentcli[ray]'",
        ) from None
    folder, package, root, cwd = _shipped(config, options)
    address = options.ray_address or os.environ.get("RAY_ADDRESS") or None
    if address is not None:
        _check_reachable(address)
    excludes = [*EXCLUDES]
    if options.output is not None and options.output.resolve().is_relative_to(folder):
        excludes.append(options.output.resolve().relative_to(folder).as_posix())
    runtime_env: dict[str, Any] = {"working_dir": str(folder), "excludes": excludes}
    env = {name: os.environ[name] for name in FORWARDED_ENV if name in os.environ}
    if env:
        runtime_env["env_vars"] = env
    _init(ray, address, runtime_env)
    run_id = uuid.uuid4().hex[:12]
    budget = _budget(ray, run_id, config.parallel)
    settings = _settings(config)
    spec = WorkerSpec(
        run_id=run_id,
        package=package,
        root=root,
        cwd=cwd,
        state=options.state,
        settings=settings,
        scripts=scripts,
        cache=options.cache,
        uncached=config.registry.uncached,
        budget=budget,
        lease_s=config.timeout + SCHEDULING_ALLOWANCE,
    )
    return RayDispatcher(ray, spec, cpus=options.ray_cpus)


def _settings(config: EvalConfig) -> dict[str, Any]:
    """The plain fields of ``config`` a worker rebuilds its config from."""
    return {f.name: getattr(config, f.name) for f in fields(config) if f.name not in _DRIVER_ONLY}


def _budget(ray: Any, run_id: str, ceiling: int) -> Any:
    """The run's budget actor, on this machine's node (a worker node may go away) and
    restarted should it fail; it needs no CPU of the cluster."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=True)
    actor = ray.remote(Budget).options(
        name=f"agentcli-budget-{run_id}",
        namespace=NAMESPACE,
        num_cpus=0,
        scheduling_strategy=here,
        max_restarts=3,
        max_task_retries=3,
    )
    return actor.remote(ceiling)


def _shipped(config: EvalConfig, options: EvalOptions) -> tuple[Path, str, str | None, str]:
    """The folder shipped to the workers, and in it the package, the assistants root and
    the run's folder (``.`` when outside it)."""
    package = config.assistant.package.path.resolve()
    root = config.registry.root.resolve() if config.registry.root is not None else None
    if root is not None and package.is_relative_to(root.parent):
        folder = root.parent
    else:
        folder = package.parent
    if folder == Path(folder.anchor) or folder == Path.home().resolve():
        raise ConfigError(
            f"--executor ray would ship all of {folder} to the cluster",
            hint="keep the assistants in a project folder of their own",
        )
    in_root = root is not None and root.is_relative_to(folder)
    cwd = options.cwd.resolve()
    return (
        folder,
        package.relative_to(folder).as_posix(),
        root.relative_to(folder).as_posix() if in_root and root is not None else None,
        cwd.relative_to(folder).as_posix() if cwd.is_relative_to(folder) else ".",
    )


def _check_reachable(address: str) -> None:
    """A ``host:port`` address must answer within a few seconds (Ray itself retries a
    wrong one for minutes)."""
    match = _ADDRESS.fullmatch(address.strip())
    if match is None:
        return  # "auto", "local": Ray finds or starts the cluster
    host, port = match[1].strip("[]"), int(match[2])
    try:
        with socket.create_connection((host, port), timeout=5):
            pass
    except OSError as error:
        raise ConfigError(
            f"cannot reach the Ray cluster at {address}: {error.strerror or error}",
            hint="start one (ray start --head) or give its address with --ray-address",
        ) from None


def _init(ray: Any, address: str | None, runtime_env: dict[str, Any]) -> None:
    """``ray.init`` as this run's job, bounded by ``CONNECT_TIMEOUT``."""
    failure: list[BaseException] = []

    def init() -> None:
        try:
            ray.init(
                address=address,
                runtime_env=runtime_env,
                namespace=NAMESPACE,
                log_to_driver=False,  # a case's prints come back with its result
                logging_level=logging.ERROR,  # not its notes on threads and signals
            )
        except BaseException as error:
            failure.append(error)

    thread = threading.Thread(target=init, name="ray-init", daemon=True)
    thread.start()
    thread.join(CONNECT_TIMEOUT)
    where = address or "this machine"
    if thread.is_alive():
        raise ConfigError(
            f"could not connect to the Ray cluster at {where} within {CONNECT_TIMEOUT:g}s"
        )
    if failure:
        raise ConfigError(
            f"could not start on the Ray cluster at {where}: {_first_line(failure[0])}",
            hint="check --ray-address, and that the cluster runs this Ray version",
        )


def _portable(case: Case) -> Case:
    """The case with its input files read into its messages (the worker has no access to
    this machine's files); as it is when one cannot be read (the worker says so)."""
    try:
        return dataclasses.replace(case, messages=case.build_messages())
    except (AgentCliError, OSError):
        return case


def _print_again(lines: list[dict[str, str]]) -> None:
    """What the case's code printed on the worker, printed here where the runner captures
    it for the case (its logs and ``output`` events)."""
    for line in lines:
        stream = sys.stderr if line.get("stream") == "stderr" else sys.stdout
        print(line.get("text", ""), file=stream)


def _reason(error: BaseException) -> str:
    """What went wrong in a task, in a line: the user-facing error it raised, or Ray's."""
    cause = getattr(error, "cause", None)
    if isinstance(cause, AgentCliError):
        return str(cause)
    if cause is not None:
        return f"{type(cause).__name__}: {_first_line(cause)}"
    return f"{type(error).__name__}: {_first_line(error)}"


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__

"""Script tests (SPEC 5.8): every ``Test*`` function of ``src/<module>_test.py`` run as
``TestX(t, ctx)``, in file order, filtered by ``--run``.

``--scripts setup`` names the module of the target assistant; ``-i scripts.expense.setup``
names the assistant too (the longest dotted prefix that is a package wins, so
``scripts.yao.keeper.tests.seed`` is ``src/tests/seed_test.py`` of ``yao.keeper``). Tests may
be sync (run in a thread of their own) or async; each runs under the ``--timeout``. ``t`` is
``script_assert.T``; ``ctx`` is a real agent context of the package (memory, ``ctx.agent``,
``ctx.llm``, ``ctx.mcp``) with the run's identity. Statuses: passed, failed (an assertion,
``t.error``/``t.fail``/``t.fatal``), error (the test raised; the traceback is in the report),
timeout, skipped (``t.skip``; a test that failed before skipping stays failed).

``ScriptExecutor`` plays the test functions as the cases of an ``EvalRunner``, so script
tests share the console, the results files, ``--parallel``, ``--runs``, ``--fail-fast`` and
the exit codes of case runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import agentcli
from agentcli.assistant.context import Context
from agentcli.assistant.hooks import call_user_function
from agentcli.assistant.package import AssistantPackage, package_file
from agentcli.choices import Attribution
from agentcli.errors import ConfigError
from agentcli.eval.cases.model import Case
from agentcli.eval.checks.script_assert import StopTest, T
from agentcli.eval.results.model import CaseResult, Status
from agentcli.eval.run.attribution import of_exception
from agentcli.eval.run.executor import elapsed_ms
from agentcli.eval.run.services import judge_with_agent
from agentcli.pysource import load_source_module

if TYPE_CHECKING:
    from agentcli.eval.run.runner import EvalConfig

__all__ = [
    "ScriptExecutor",
    "ScriptSuite",
    "load_suite",
    "resolve_script_ref",
    "src_import",
    "suite_path",
]

_AGENTCLI_DIR = Path(agentcli.__file__).resolve().parent


@dataclass(slots=True)
class ScriptSuite:
    """The test functions of one ``*_test.py`` file, in file order."""

    path: Path
    module: str
    functions: dict[str, Callable[..., Any]] = field(default_factory=dict)

    def cases(self) -> list[Case]:
        """One case per test function (its id is the function name)."""
        return [Case(id=name) for name in self.functions]


def resolve_script_ref(value: str, *, root: Path | None, cwd: Path) -> tuple[Path, str]:
    """``scripts.<assistant>.<module>`` -> (the package folder, the module)."""
    parts = value.removeprefix("scripts.").split(".")
    if len(parts) < 2 or not all(parts):
        raise ConfigError(
            f"invalid script path {value!r}", hint="write scripts.<assistant>.<module>"
        )
    bases = [b for b in (root, cwd) if b is not None]
    for split in range(len(parts) - 1, 0, -1):
        for base in bases:
            folder = base.joinpath(*parts[:split])
            if package_file(folder) is not None:
                return folder, ".".join(parts[split:])
    tried = ", ".join(str(b.joinpath(*parts[:-1])) for b in bases)
    raise ConfigError(
        f"{value}: no assistant package found (tried {tried})",
        hint="write scripts.<assistant id>.<module>, e.g. scripts.expense.setup",
    )


def suite_path(package: AssistantPackage, module: str) -> Path:
    """``src/<module as path>_test.py`` of the package (``_test`` not doubled)."""
    parts = module.split(".")
    name = parts[-1] if parts[-1].endswith("_test") else f"{parts[-1]}_test"
    return package.path.joinpath("src", *parts[:-1], f"{name}.py")


def load_suite(package: AssistantPackage, module: str) -> ScriptSuite:
    """Import the test file and collect its ``Test*`` functions in file order."""
    path = suite_path(package, module)
    if not path.is_file():
        raise ConfigError(
            f"test file not found for {module!r}: {path}",
            hint="create it with functions like: def TestSomething(t, ctx): ...",
        )
    dotted = ".".join(path.relative_to(package.path / "src").with_suffix("").parts)
    loaded = load_source_module(path, dotted)
    found = [
        value
        for name, value in vars(loaded).items()
        if name.startswith("Test")
        and inspect.isfunction(value)
        and value.__module__ == loaded.__name__
    ]
    found.sort(key=lambda f: f.__code__.co_firstlineno)
    if not found:
        raise ConfigError(
            f"{path}: no Test* functions found",
            hint="a script test is a function named Test<Name>(t, ctx)",
        )
    return ScriptSuite(path=path, module=module, functions={f.__name__: f for f in found})


def src_import(anchor: str | Path, module: str) -> ModuleType:
    """Import a module of the package's ``src/`` from a script test, as the same module object
    hooks and tools use: ``setup = src_import(__file__, "setup")`` (``anchor`` is any file
    inside ``src/``; ``module`` is dotted, ``"tests.seed"`` for ``src/tests/seed.py``)."""
    start = Path(anchor).resolve()
    src = next((d for d in start.parents if d.name == "src" and package_file(d.parent)), None)
    if src is None:
        raise ConfigError(f"{anchor}: not inside the src/ folder of an assistant package")
    path = src.joinpath(*module.split(".")).with_suffix(".py")
    if not path.is_file():
        raise ConfigError(f"src_import: {path} not found", hint=f"module {module!r} of {src}")
    return load_source_module(path, module)


class ScriptExecutor:
    """Plays the functions of a ``ScriptSuite``: the case ``TestX`` calls ``TestX(t, ctx)``."""

    def __init__(self, config: EvalConfig, suite: ScriptSuite) -> None:
        self.config = config
        self.suite = suite

    async def execute(
        self, case: Case, run: int | None, *, started: float, timeout: float
    ) -> CaseResult:
        """One test: the function named by ``case.id`` under ``timeout``, its outcome as a
        result."""
        name = case.id
        function = self.suite.functions[name]
        ctx = self._context(case, run)
        t = T(name, judge=self._judge_response, bridge=ctx.bridge)
        status: Status = "passed"
        error: str | None = None
        cause: Attribution | None = None
        try:
            async with asyncio.timeout(timeout):
                await _call(function, t, ctx)
        except TimeoutError:
            status, error = "timeout", f"timed out after {timeout:g}s"
        except Exception as raised:
            status, error, cause = "error", _error_report(raised), of_exception(raised)
        finally:
            ctx.close()
            t.finish()
        if status == "passed" and t.failed:
            status, error = "failed", t.errors[0]
        elif status == "passed" and t.skipped is not None:
            status = "skipped"
        return CaseResult(
            id=name,
            status=status,
            duration_ms=elapsed_ms(started),
            error=error,
            assertions=list(t.assertions),
            metadata={"logs": t.logs} if t.logs else {},
            run=run,
            attribution=cause,
        )

    def _context(self, case: Case, run: int | None) -> Context:
        """A real agent context of the package, with the run's identity."""
        options = self.config.request_options(case, run)
        chat_id = f"script-test-{case.id}"
        conversation = self.config.assistant.conversation(options)
        return Context(
            conversation=conversation,
            registry=self.config.registry,
            chat_id=chat_id,
            locale=options.locale or "en-us",
            user_id=options.user_id,
            team_id=options.team_id,
            metadata=options.metadata,
            authorized=options.authorized,
            sandbox_spec=self.config.assistant.package.sandbox,
        )

    async def _judge_response(
        self, agent_id: str, response: Any, options: dict[str, Any]
    ) -> dict[str, Any]:
        use = agent_id if agent_id.startswith("agents:") else f"agents:{agent_id}"
        return await judge_with_agent(
            self.config.registry, use, options.get("criteria"), response, None, options
        )


async def _call(function: Callable[..., Any], t: T, ctx: Context) -> None:
    """Call the test (``(t, ctx)``, or ``(t)`` when it takes one parameter); ``t.fatal`` and
    ``t.skip`` end it quietly."""
    args = (t, ctx) if _arity(function) != 1 else (t,)
    if inspect.iscoroutinefunction(function):
        with contextlib.suppress(StopTest):
            await function(*args)
        return

    def body() -> None:
        with contextlib.suppress(StopTest):
            function(*args)

    await call_user_function(body)


def _arity(function: Callable[..., Any]) -> int:
    parameters = inspect.signature(function).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in parameters):
        return 2
    return sum(
        1
        for p in parameters
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
    )


def _error_report(error: BaseException) -> str:
    """``Type: message`` and the traceback through the user's code (agentcli frames left out)."""
    frames = [
        frame
        for frame in traceback.extract_tb(error.__traceback__)
        if not Path(frame.filename).resolve().is_relative_to(_AGENTCLI_DIR)
    ]
    headline = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    if not frames:
        return headline
    stack = "".join(traceback.format_list(frames)).rstrip()
    return f"{headline}\nTraceback (most recent call last):\n{stack}"

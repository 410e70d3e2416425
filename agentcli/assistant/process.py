"""``Process(name, *args)``: one resolver for every name a package may call, from hooks
(``ctx.process``, ``from agentcli import process``), from ``transport: process`` tools and
from MCP process-server resources.

Names, as in Yao::

    models.agents.<id>.<model>.<Method>   a data model's method (methods.py), e.g.
                                          models.agents.shop.order.Paginate
    models.<model>.<Method>               a model of the calling package
    agents.<id>.<file>.<Func>             src/<file>.py:Func of assistant <id>
    scripts.<file>.<Func>                 src/<file>.py:Func of the calling package
    <file>.<Func>                         the same (the form process tools always took)

A Python function gets the process arguments positionally and ``ctx=`` when it takes it.
``Processes.resolve(name, *, path)`` is the entry point; ``path`` is the file that named
the process, for errors.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from agentcli.errors import AgentCliError, PackageError, ToolError, UnknownAssistantError
from agentcli.threads import in_own_thread

if TYPE_CHECKING:
    from agentcli.assistant.package import AssistantPackage
    from agentcli.assistant.session import AssistantRegistry

__all__ = [
    "Process",
    "ProcessKind",
    "Processes",
    "current_processes",
    "map_process_args",
    "process",
    "processes_scope",
    "use_processes",
    "wants_ctx",
]

ProcessKind = Literal["model", "python"]
# (resolver, weak reference to the ctx or None). Weak: every task a request starts copies
# the context, and a strong ctx there would tie ctx -> agent -> task -> context -> ctx into
# a cycle per case that only the collector frees (docs/architecture.md, "No reference
# cycles per case").
_SCOPE: contextvars.ContextVar[tuple[Processes, Callable[[], Any]] | None] = contextvars.ContextVar(
    "agentcli_process_scope", default=None
)


def _no_ctx() -> None:
    return None


def _held(ctx: Any) -> Callable[[], Any]:
    """``ctx`` as the scope keeps it: weakly where it can be (every ctx of a request)."""
    if ctx is None:
        return _no_ctx
    try:
        return weakref.ref(ctx)
    except TypeError:  # an object without weak references (a plain value of a caller's)
        return lambda: ctx


@dataclass(frozen=True, slots=True)
class Process:
    """A resolved process: what to call and how."""

    name: str
    kind: ProcessKind
    function: Callable[..., Any]
    wants_ctx: bool = False
    # The resolver of the package the function belongs to: while it runs, process()
    # resolves there, however it was called (a tool, ctx.mcp, another process).
    scope: Processes | None = None

    def _scope(self, ctx: Any) -> contextlib.AbstractContextManager[None]:
        if self.scope is None:
            return contextlib.nullcontext()
        return processes_scope(self.scope, ctx)

    def call_sync(self, args: list[Any], ctx: Any = None) -> Any:
        """Call it in this thread (an async function runs on a loop of its own here)."""
        kwargs = {"ctx": ctx} if self.wants_ctx else {}
        with self._scope(ctx):
            result = self.function(*args, **kwargs)
            if inspect.isawaitable(result):
                result = asyncio.run(_awaited(result))
        return result

    async def call(self, args: list[Any], ctx: Any = None) -> Any:
        """Call it from the event loop: async functions awaited, the rest (model methods
        included: they wait on the database) in a thread of their own."""
        kwargs = {"ctx": ctx} if self.wants_ctx else {}
        with self._scope(ctx):
            if inspect.iscoroutinefunction(self.function):
                return await self.function(*args, **kwargs)
            result = await in_own_thread(self.function, *args, **kwargs)
            if inspect.isawaitable(result):
                result = await result
        return result


async def _awaited(value: Any) -> Any:
    return await value


class Processes:
    """The process names one assistant package can call, resolved once each; ``registry``
    holds the data models and finds the other assistants."""

    def __init__(self, package: AssistantPackage, registry: AssistantRegistry) -> None:
        self.package = package
        self.registry = registry
        self._resolved: dict[str, Process] = {}

    def resolve(self, name: str, *, path: Path | None = None) -> Process:
        """The process behind ``name``; an unknown one is a ``PackageError`` at ``path``
        (the file naming it; package.yao when not given)."""
        found = self._resolved.get(name)
        if found is None:
            found = self._resolved[name] = self._resolve(name, path or self.package.file)
        return found

    def _resolve(self, name: str, path: Path) -> Process:
        parts = name.split(".")
        if parts[0] == "models" and len(parts) >= 3:
            return self._model_process(name, parts[1:], path)
        if parts[0] == "agents" and len(parts) >= 4:
            return self._agent_function(name, parts[1:], path)
        if parts[0] == "scripts" and len(parts) >= 3:
            return self._python(name, self, ".".join(parts[1:]), path)
        return self._python(name, self, name, path)

    def _model_process(self, name: str, parts: list[str], path: Path) -> Process:
        *model, method = parts
        store_name = ".".join(model)
        if model[0] == "agents" and len(model) >= 3:
            self._load_owner(model[1:])
        else:
            store_name = f"agents.{self.package.id}.{store_name}"
        data = self.registry.data_store
        if data is None or not data.has(store_name):
            known = sorted(m.name for m in data.models()) if data is not None else []
            raise PackageError(
                f"process {name!r}: no data model {store_name!r}"
                f" (models: {', '.join(known) or 'none; add models/<name>.mod.yao'})",
                path=str(path),
            )
        try:
            function = data.model(store_name).method(method)
        except ToolError as error:
            raise PackageError(f"process {name!r}: {error.message}", path=str(path)) from None
        return Process(name, "model", function)

    def _load_owner(self, parts: list[str]) -> None:
        """Load the assistant whose id leads ``parts`` (ids may hold dots: the longest that
        resolves wins), so its models are registered."""
        for cut in range(len(parts) - 1, 0, -1):
            candidate = ".".join(parts[:cut])
            if candidate == self.package.id:
                return
            try:
                self.registry.get(candidate)
            except UnknownAssistantError:
                continue
            return

    def _agent_function(self, name: str, parts: list[str], path: Path) -> Process:
        for cut in range(len(parts) - 2, 0, -1):
            candidate = ".".join(parts[:cut])
            try:
                owner = (
                    self if candidate == self.package.id else self.registry.get(candidate).processes
                )
            except UnknownAssistantError:
                continue
            return self._python(name, owner, ".".join(parts[cut:]), path)
        raise PackageError(
            f"process {name!r}: no assistant {'.'.join(parts[:-2])!r}",
            path=str(path),
            hint='write "agents.<assistant id>.<file>.<Function>"',
        )

    def _python(self, name: str, owner: Processes, ref: str, path: Path) -> Process:
        from agentcli.assistant.tools import load_src_function

        function = load_src_function(owner.package.path / "src", ref, path=path)
        return Process(name, "python", function, wants_ctx(function), owner)

    async def run(self, name: str, args: list[Any], ctx: Any = None) -> Any:
        """Resolve and call ``name`` from the event loop; a failure is a ``ToolError``."""
        target = await in_own_thread(self.resolve, name)
        try:
            return await target.call(args, ctx)
        except AgentCliError:
            raise
        except Exception as error:
            raise ToolError(f"{name} failed: {type(error).__name__}: {error}") from error

    def run_sync(self, name: str, args: list[Any], ctx: Any = None) -> Any:
        """Resolve and call ``name`` in this thread; a failure is a ``ToolError``."""
        target = self.resolve(name)
        try:
            return target.call_sync(args, ctx)
        except AgentCliError:
            raise
        except Exception as error:
            raise ToolError(f"{name} failed: {type(error).__name__}: {error}") from error


def wants_ctx(function: Callable[..., Any]) -> bool:
    """Whether ``function`` takes ``ctx`` (by name, or any keyword)."""
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False
    return "ctx" in parameters or any(p.kind is p.VAR_KEYWORD for p in parameters.values())


def map_process_args(spec: list[Any] | None, arguments: dict[str, Any]) -> list[Any]:
    """A tool call's process arguments from its ``x-process-args`` (Yao's form):
    ``":arguments"`` is the whole arguments object, ``"$args.<path>"`` one value of it
    (dotted into objects; missing: null), anything else a literal. Without one, the
    arguments object is the only argument."""
    if spec is None:
        return [arguments]
    mapped: list[Any] = []
    for item in spec:
        if item == ":arguments":
            mapped.append(arguments)
        elif isinstance(item, str) and item.startswith("$args."):
            value: Any = arguments
            for key in item.removeprefix("$args.").split("."):
                value = value.get(key) if isinstance(value, dict) else None
            mapped.append(value)
        else:
            mapped.append(item)
    return mapped


@contextlib.contextmanager
def processes_scope(processes: Processes, ctx: Any = None) -> Iterator[None]:
    """Inside the block (and the tasks and threads it starts) ``process()`` resolves
    through ``processes``, passing ``ctx`` to the functions that take it."""
    token = _SCOPE.set((processes, _held(ctx)))
    try:
        yield
    finally:
        _SCOPE.reset(token)


def use_processes(processes: Processes) -> None:
    """For the rest of the calling task (and what it starts), ``process()`` resolves
    through ``processes``: the eval runner's hooks (Before, After, BeforeAll, AfterAll)."""
    _SCOPE.set((processes, _no_ctx))


def current_processes() -> tuple[Processes, Any] | None:
    """The resolver (and ctx) ``process()`` uses here, if any."""
    scope = _SCOPE.get()
    return None if scope is None else (scope[0], scope[1]())


def process(name: str, *args: Any) -> Any:
    """``Process(name, *args)``: the result in sync code; an awaitable of it in async code
    (running on the event loop) — ``await process(...)``."""
    scope = _SCOPE.get()
    if scope is None:
        raise ToolError(
            f"process({name!r}): no assistant is running here",
            hint="call process() from a hook, a tool or an eval hook of a package",
        )
    processes, ctx = scope[0], scope[1]()
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return processes.run_sync(name, list(args), ctx)
    return processes.run(name, list(args), ctx)

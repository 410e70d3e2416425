"""The Create / Next hooks of ``src/index.py`` and calling user functions safely.

``Create(ctx, messages, options)`` runs before the model call and may return messages,
temperature, max_tokens, connector, prompt_preset, disable_global_prompts, mcp_servers,
locale, metadata or delegate, and every other field of Yao's HookCreateResponse (audio and
max_completion_tokens act; ``uses.search``, ``force_uses`` and ``search`` steer the
automatic search (``agentcli.assistant.search.inject``); theme, route and the other
``uses`` keys are noted in the trace as ignored). ``Next(ctx, payload, options)`` runs after it and may return
data (the turn's output), delegate or metadata. ``create``/``next`` are accepted too, and a
hook may take fewer parameters (``Create(ctx, messages)``, the seed's form). Both may be
sync (run in a thread of their own) or async; a hook that raises becomes a ``HookError``
naming the assistant, file, line and function.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentcli.errors import AgentCliError, HookError
from agentcli.pysource import load_source_module
from agentcli.threads import in_own_thread

__all__ = [
    "CreateResult",
    "Delegate",
    "Hooks",
    "NextResult",
    "call_user_function",
    "unported_hooks",
]

_SCRIPT_SUFFIXES = (".ts", ".js", ".mts", ".mjs")


def unported_hooks(package_dir: Path) -> list[str]:
    """A warning for each TypeScript/JavaScript file of ``src/`` without a Python twin
    (``index.ts`` and no ``index.py``): a Yao package's hooks must be ported to run here."""
    src = package_dir / "src"
    if not src.is_dir():
        return []
    warnings = []
    for path in sorted(src.rglob("*")):
        if path.suffix in _SCRIPT_SUFFIXES and not path.name.endswith(".d.ts"):
            twin = path.with_suffix(".py")
            if not twin.is_file():
                shown = path.relative_to(package_dir).as_posix()
                warnings.append(
                    f"{shown} has no Python twin ({twin.relative_to(package_dir).as_posix()}): "
                    "its hooks do not run here; port them to Python"
                )
    return warnings


# Field -> (accepted Python types, what the error says). ``uses``/``force_uses`` (Yao's
# wrapper tools) are accepted for compatibility; the conversation notes in the trace that
# they have no effect.
_CREATE_TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "messages": ((list,), "a list of messages"),
    "temperature": ((int, float), "a number"),
    "max_tokens": ((int,), "an integer"),
    "connector": ((str,), "a connector string"),
    "prompt_preset": ((str,), "a preset name"),
    "disable_global_prompts": ((bool,), "true or false"),
    "mcp_servers": ((list,), 'a list of server ids or {"server_id", "tools"}'),
    "locale": ((str,), "a locale code such as en-us"),
    "metadata": ((dict,), "an object"),
    "delegate": ((dict,), "an object with agent_id"),
    "uses": ((dict,), "an object"),
    "force_uses": ((bool,), "true or false"),
    "max_steps": ((int,), "a positive integer"),
    # the rest of Yao's HookCreateResponse: audio goes to the model request as it is,
    # max_completion_tokens limits the answer like max_tokens; theme, route and search have
    # nothing to act on here (no UI, no search), so the trace says they were ignored
    "audio": ((dict,), "an object such as {voice, format}"),
    "max_completion_tokens": ((int,), "an integer"),
    "theme": ((str,), "a string"),
    "route": ((str,), "a string"),
    "search": ((bool, dict), "true, false or an object"),
}
# Create fields with no effect here, noted in the trace when a hook returns them (of
# ``uses``, the keys other than search and fetch)
IGNORED_CREATE_FIELDS = ("uses", "theme", "route")
USED_USES = ("search", "fetch")
CREATE_FIELDS = tuple(_CREATE_TYPES)
NEXT_FIELDS = ("data", "delegate", "metadata")


@dataclass(slots=True)
class Delegate:
    """Hand the request to another assistant."""

    agent_id: str
    messages: list[dict[str, Any]] | None = None
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class CreateResult:
    """What a Create hook asked for (None = keep the default)."""

    messages: list[dict[str, Any]] | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    connector: str | None = None
    prompt_preset: str | None = None
    disable_global_prompts: bool | None = None
    mcp_servers: list[Any] | None = None
    locale: str | None = None
    metadata: dict[str, Any] | None = None
    delegate: Delegate | None = None
    uses: dict[str, Any] | None = None
    force_uses: bool | None = None
    max_steps: int | None = None
    audio: dict[str, Any] | None = None
    max_completion_tokens: int | None = None
    theme: str | None = None
    route: str | None = None
    search: bool | dict[str, Any] | None = None

    def ignored(self) -> dict[str, Any]:
        """The fields it set that have no effect here (Yao's UI and wrapper-tool fields)."""
        values = {name: getattr(self, name) for name in IGNORED_CREATE_FIELDS}
        if self.uses is not None:
            other = {k: v for k, v in self.uses.items() if k not in USED_USES}
            values["uses"] = other or None
        return {name: value for name, value in values.items() if value is not None}


@dataclass(slots=True)
class NextResult:
    """What a Next hook asked for; ``has_data`` tells a returned ``data`` from none."""

    data: Any = None
    delegate: Delegate | None = None
    metadata: dict[str, Any] | None = None
    has_data: bool = False


async def call_user_function(function: Callable[..., Any], *args: Any) -> Any:
    """Call user code: async functions awaited, sync ones in a thread of their own so they
    cannot stall the event loop (and may block on ``ctx`` calls that need it)."""
    if inspect.iscoroutinefunction(function):
        return await function(*args)
    result = await in_own_thread(function, *args)
    if inspect.isawaitable(result):
        result = await result
    return result


def _delegate(value: Any, where: str) -> Delegate | None:
    if value is None:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("agent_id"), str):
        raise HookError(f"{where}: delegate must be an object with an agent_id string")
    messages = value.get("messages")
    if messages is not None and not isinstance(messages, list):
        raise HookError(f"{where}: delegate.messages must be a list of messages")
    options = value.get("options") or {}
    if not isinstance(options, dict):
        raise HookError(f"{where}: delegate.options must be an object")
    return Delegate(value["agent_id"], messages, dict(options))


class Hooks:
    """The hooks of one package (either may be missing)."""

    def __init__(
        self,
        assistant_id: str,
        path: Path | None = None,
        create: Callable[..., Any] | None = None,
        next_: Callable[..., Any] | None = None,
    ) -> None:
        self.assistant_id = assistant_id
        self.path = path
        self.create = create
        self.next = next_

    @classmethod
    def load(cls, assistant_id: str, package_dir: Path) -> Hooks:
        """Load ``src/index.py`` if the package has one (import errors name the file)."""
        path = package_dir / "src" / "index.py"
        if not path.is_file():
            return cls(assistant_id)
        module = load_source_module(path, "index")
        create = getattr(module, "Create", None) or getattr(module, "create", None)
        next_ = getattr(module, "Next", None) or getattr(module, "next", None)
        return cls(
            assistant_id,
            path,
            create if callable(create) else None,
            next_ if callable(next_) else None,
        )

    def _where(self, function: Callable[..., Any], line: int | None = None) -> str:
        place = f"{self.path}:{line}" if line else str(self.path)
        return f"{place}: {getattr(function, '__name__', '?')}() of assistant {self.assistant_id}"

    def _line(self, error: BaseException) -> int | None:
        """The last line of the hook file in the error's traceback."""
        line = None
        target = self.path.resolve() if self.path else None
        trace = error.__traceback__
        while trace is not None:
            if target is not None and Path(trace.tb_frame.f_code.co_filename) == target:
                line = trace.tb_lineno
            trace = trace.tb_next
        return line

    async def _call(self, function: Callable[..., Any], *args: Any) -> Any:
        parameters = _positional_count(function)
        try:
            return await call_user_function(function, *args[:parameters])
        except AgentCliError:
            raise
        except Exception as error:
            raise HookError(
                f"hook {self._where(function, self._line(error))} raised "
                f"{type(error).__name__}: {error}"
            ) from error

    async def run_create(
        self, ctx: Any, messages: list[dict[str, Any]], options: dict[str, Any]
    ) -> CreateResult | None:
        """Run Create; None when there is none or it returned nothing."""
        if self.create is None:
            return None
        value = await self._call(self.create, ctx, messages, options)
        if value is None:
            return None
        where = f"hook {self._where(self.create)}"
        _check_shape(value, CREATE_FIELDS, where, "Create")
        for key, item in value.items():
            types, expected = _CREATE_TYPES[key]
            wrong_bool = isinstance(item, bool) and bool not in types
            if item is not None and (wrong_bool or not isinstance(item, types)):
                raise HookError(f"{where}: {key} must be {expected}, got {type(item).__name__}")
        if value.get("connector") == "":
            raise HookError(f"{where}: connector must not be empty")
        if value.get("max_steps") is not None and value["max_steps"] < 1:
            raise HookError(
                f"{where}: max_steps must be a positive integer, got {value['max_steps']}"
            )
        result = CreateResult(**{k: v for k, v in value.items() if k != "delegate"})
        result.delegate = _delegate(value.get("delegate"), where)
        return result

    async def run_next(
        self, ctx: Any, payload: dict[str, Any], options: dict[str, Any]
    ) -> NextResult | None:
        """Run Next; None when there is none or it returned nothing."""
        if self.next is None:
            return None
        value = await self._call(self.next, ctx, payload, options)
        if value is None:
            return None
        where = f"hook {self._where(self.next)}"
        _check_shape(value, NEXT_FIELDS, where, "Next")
        metadata = value.get("metadata")
        if metadata is not None and not isinstance(metadata, dict):
            raise HookError(f"{where}: metadata must be an object")
        return NextResult(
            data=value.get("data"),
            delegate=_delegate(value.get("delegate"), where),
            metadata=metadata,
            has_data=value.get("data") is not None,
        )


def _check_shape(value: Any, fields: tuple[str, ...], where: str, hook: str) -> None:
    if not isinstance(value, dict):
        raise HookError(
            f"{where} must return a dict or None, not {type(value).__name__}",
            hint=f"{hook} may return: {', '.join(fields)}",
        )
    unknown = sorted(set(value) - set(fields))
    if unknown:
        raise HookError(
            f"{where} returned unknown field(s) {', '.join(map(str, unknown))}",
            hint=f"{hook} may return: {', '.join(fields)}",
        )


@functools.lru_cache(maxsize=1024)  # hooks are called per request; their signatures never change
def _positional_count(function: Callable[..., Any]) -> int:
    """How many of (ctx, messages/payload, options) the hook takes, so ``Create(ctx, messages)``
    (the seed's two-argument form) works as well as the three-argument one."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return 3
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in parameters):
        return 3
    positional = [
        p
        for p in parameters
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    return min(3, len(positional))

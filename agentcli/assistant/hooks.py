"""The Create / Next hooks of ``src/index.py`` and calling user functions safely.

``Create(ctx, messages, options)`` runs before the model call and may return messages,
temperature, max_tokens, connector, prompt_preset, disable_global_prompts, mcp_servers,
locale, metadata or delegate. ``Next(ctx, payload, options)`` runs after it and may return
data (the turn's output), delegate or metadata. ``create``/``next`` are accepted too. Both
may be sync (run in a worker thread) or async; a hook that raises becomes a ``HookError``
naming the assistant, file and function.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentcli.errors import AgentCliError, HookError
from agentcli.pysource import load_source_module

__all__ = ["CreateResult", "Delegate", "Hooks", "NextResult", "call_user_function"]

CREATE_FIELDS = (
    "messages",
    "temperature",
    "max_tokens",
    "connector",
    "prompt_preset",
    "disable_global_prompts",
    "mcp_servers",
    "locale",
    "metadata",
    "delegate",
    "uses",
    "force_uses",
)
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


@dataclass(slots=True)
class NextResult:
    """What a Next hook asked for."""

    data: Any = None
    delegate: Delegate | None = None
    metadata: dict[str, Any] | None = None
    has_data: bool = False


async def call_user_function(function: Callable[..., Any], *args: Any) -> Any:
    """Call user code: async functions awaited, sync ones in a worker thread so they cannot
    stall the event loop."""
    if inspect.iscoroutinefunction(function):
        return await function(*args)
    result = await asyncio.to_thread(function, *args)
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
    return Delegate(value["agent_id"], messages, dict(value.get("options") or {}))


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
        """Load ``src/index.py`` if the package has one."""
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

    def _where(self, function: Callable[..., Any]) -> str:
        return f"{self.assistant_id}: {self.path}:{getattr(function, '__name__', '?')}"

    async def _call(self, function: Callable[..., Any], *args: Any) -> Any:
        parameters = _positional_count(function)
        try:
            return await call_user_function(function, *args[:parameters])
        except AgentCliError:
            raise
        except Exception as error:
            raise HookError(
                f"hook {self._where(function)} raised {type(error).__name__}: {error}"
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
        if not isinstance(value, dict):
            raise HookError(f"{where} must return a dict or None, not {type(value).__name__}")
        unknown = sorted(set(value) - set(CREATE_FIELDS))
        if unknown:
            raise HookError(
                f"{where} returned unknown field(s) {', '.join(unknown)}",
                hint=f"Create may return: {', '.join(CREATE_FIELDS)}",
            )
        messages_value = value.get("messages")
        if messages_value is not None and not isinstance(messages_value, list):
            raise HookError(f"{where}: messages must be a list of messages")
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
        if not isinstance(value, dict):
            raise HookError(f"{where} must return a dict or None, not {type(value).__name__}")
        unknown = sorted(set(value) - set(NEXT_FIELDS))
        if unknown:
            raise HookError(
                f"{where} returned unknown field(s) {', '.join(unknown)}",
                hint=f"Next may return: {', '.join(NEXT_FIELDS)}",
            )
        return NextResult(
            data=value.get("data"),
            delegate=_delegate(value.get("delegate"), where),
            metadata=value.get("metadata"),
            has_data="data" in value and value["data"] is not None,
        )


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

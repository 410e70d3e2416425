"""Plugins: small objects whose optional hooks extend an agent.

Plugins run in the order ``enforce="pre"`` -> registration order -> ``enforce="post"``.
Every hook may be sync or async. The families and their rules:

=====================================  ===================================================
``init(agent)`` / ``stop()``           lifecycle; a failing init stops the plugins already
                                       started (reverse order) and fails the turn
``extend_instructions()``              a paragraph added to the instructions
``extend_tools()``                     more tools (a list or a name -> Tool dict); both run
                                       once per turn, before its first step; a tool name
                                       given twice is a ``ToolConflictError``
``on_append(entry)``                   rewrite an entry on its way to storage (return an
                                       Entry, a list of them -- ``[]`` drops it -- or None)
``transform_entries(entries)``         chained: each return value feeds the next plugin
``transform_messages(messages)``       chained the same way (None keeps the value)
``to_model_messages(message)``         project a ``custom`` message into model messages;
                                       the first non-None answer wins
``prepare_step(step)``                 chained; may change the step's messages, model,
                                       instructions, settings, tool choice, active tools;
                                       a new ``tools_context`` / ``runtime_context`` object
                                       stays in force for the rest of the turn
``before_tool_call(call, decision)``   chained; return a ``Block`` / ``Replace`` (or their
                                       dict forms) to decide, None to keep the decision
``after_tool_call(call, result)``      chained; return a ToolResult or a dict of fields
``transform_context(messages)``        chained, after ``transform_messages`` (seed 004)
``convert_to_llm(messages)``           the first non-None answer is the model messages
                                       (else standard ones converted, custom projected)
``prepare_request(request)``           chained; the whole request before the model call
``finish_turn(result, message)``       after each response and its tool results: the first
                                       ``"end"`` / ``"continue"`` answer wins
``on_step_finish(info)``               ``{"continue": False}`` ends the turn, ``True`` asks
                                       for another step; the first decision wins, a
                                       plugin that raises has no opinion
``on_turn_finish(result)``             observer; errors are swallowed
=====================================  ===================================================

The agent's own callbacks (``Agent(before_tool_call=..., finish_turn=...)``) are the hooks
of one built-in plugin that runs ahead of the others (``callbacks.py``): one extension path.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, get_args

from agentcli.errors import ToolConflictError
from agentcli.models.base import Model, ModelSettings, Usage
from agentcli.runtime.choice import ToolChoice
from agentcli.runtime.storage import Entry, Storage
from agentcli.runtime.tools import (  # maybe_await: shared by the hook callers
    AfterToolCall,
    BeforeToolCall,
    Tool,
    ToolCall,
    ToolResult,
    apply_override,
    as_decision,
    maybe_await,
)

if TYPE_CHECKING:
    from agentcli.runtime.agent import Agent
    from agentcli.runtime.messages import Message

__all__ = ["HOOKS", "Enforce", "Hook", "Plugin", "PluginSet", "Step", "StepInfo", "maybe_await"]

log = logging.getLogger("agentcli.runtime")

Hook = Literal[
    "init",
    "stop",
    "extend_instructions",
    "extend_tools",
    "on_append",
    "transform_entries",
    "transform_messages",
    "to_model_messages",
    "prepare_step",
    "before_tool_call",
    "after_tool_call",
    "transform_context",
    "convert_to_llm",
    "prepare_request",
    "finish_turn",
    "on_step_finish",
    "on_turn_finish",
]
HOOKS: tuple[Hook, ...] = get_args(Hook)


# where a plugin runs among the others: first, or last (None: in registration order)
Enforce = Literal["pre", "post"]


class Plugin:
    """Base for plugins: subclass and define the hooks you need as methods, or pass them as
    functions: ``Plugin("stopper", on_step_finish=lambda info: {"continue": False})``."""

    name: str = ""
    enforce: Enforce | None = None

    def __init__(
        self,
        name: str | None = None,
        *,
        enforce: Enforce | None = None,
        **hooks: Callable[..., Any],
    ) -> None:
        if name is not None:
            self.name = name
        if enforce is not None:
            self.enforce = enforce
        for hook, function in hooks.items():
            if hook not in HOOKS:
                raise TypeError(f"unknown plugin hook {hook!r} (hooks: {', '.join(HOOKS)})")
            setattr(self, hook, function)

    def __repr__(self) -> str:
        return f"<Plugin {plugin_name(self)!r}>"


# Every hook a plain None on the base class: looking up one a plugin lacks then finds None
# at once instead of raising (and catching) an AttributeError, for each agent built.
for _hook in HOOKS:
    setattr(Plugin, _hook, None)


def plugin_name(plugin: object) -> str:
    """A plugin's ``name``, else its class name."""
    return getattr(plugin, "name", "") or type(plugin).__name__


@dataclass(slots=True)
class Step:
    """What the next model call will use; ``prepare_step`` hooks may change any of it."""

    turn_id: str
    number: int  # 1 for the turn's first model call
    messages: list[dict[str, Any]]  # model messages, without the instructions
    instructions: str
    model: Model
    settings: ModelSettings
    tool_choice: ToolChoice = None
    active_tools: list[str] | None = None  # None: every tool
    tools_context: dict[str, Any] = field(default_factory=dict)
    runtime_context: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class StepInfo:
    """What ``on_step_finish`` sees: one finished step."""

    turn_id: str
    number: int
    messages: list[Message]  # the step's messages: response, tool results, joined input
    tool_calls: list[ToolCall]
    tool_results: list[ToolResult]
    finish_reason: str | None
    usage: Usage


_NO_HOOKS: dict[Hook, tuple[Callable[..., Any], ...]] = dict.fromkeys(HOOKS, ())


def _ordered(plugins: Iterable[object]) -> tuple[object, ...]:
    plugins = list(plugins)
    if not plugins:
        return ()
    for plugin in plugins:
        enforce = getattr(plugin, "enforce", None)
        if enforce not in (None, "pre", "post"):
            raise ValueError(
                f"plugin {plugin_name(plugin)!r}: enforce must be 'pre', 'post' or None, "
                f"not {enforce!r}"
            )
    pre = [p for p in plugins if getattr(p, "enforce", None) == "pre"]
    post = [p for p in plugins if getattr(p, "enforce", None) == "post"]
    normal = [p for p in plugins if getattr(p, "enforce", None) is None]
    return (*pre, *normal, *post)


class PluginSet:
    """An agent's plugins, ordered, with their hooks gathered once per family.

    ``builtin`` runs ahead of them all (the agent's callbacks) and is not listed in
    ``plugins``; ``refresh`` gathers the hooks again after one of its callbacks changed."""

    def __init__(self, plugins: Iterable[object] = (), builtin: object | None = None) -> None:
        self.plugins = _ordered(plugins)
        self.builtin = builtin
        # the plugins' hooks, gathered once; refresh() puts the built-in's ahead of them
        self._own: dict[Hook, tuple[Callable[..., Any], ...]] = _NO_HOOKS
        if self.plugins:
            # by hand, not a comprehension per family: this runs for every agent built
            own = dict(_NO_HOOKS)
            for plugin in self.plugins:
                for hook in HOOKS:
                    function = getattr(plugin, hook, None)
                    if function is not None:
                        own[hook] = (*own[hook], function)
            self._own = own
        self._hooks = self._own
        self.active = False  # whether any hook at all is defined
        self.refresh()
        self._started: list[object] = []
        self._writes: asyncio.Task[None] | None = None

    def refresh(self) -> None:
        """Gather the hooks again (a callback of the built-in plugin changed)."""
        hooks = self._own
        builtin = self.builtin
        if builtin is not None:
            gather = getattr(builtin, "hooks", None)
            if gather is not None:  # the built-in lists its own (CallbackPlugin.hooks)
                found: list[tuple[Hook, Callable[..., Any]]] = gather()
            else:
                found = [(h, f) for h in HOOKS if (f := getattr(builtin, h, None)) is not None]
            if found:
                hooks = dict(hooks)
                for hook, function in found:
                    hooks[hook] = (function, *hooks[hook])
        self._hooks = hooks
        self.active = bool(self.plugins) or hooks is not _NO_HOOKS
        self.appends = bool(hooks["on_append"])
        self._async_append = self.appends and any(_is_async(f) for f in hooks["on_append"])

    def has(self, hook: Hook) -> bool:
        """Whether any plugin defines ``hook``."""
        return bool(self._hooks[hook])

    # -- lifecycle ---------------------------------------------------------------------

    async def init(self, agent: Agent) -> None:
        """Run every ``init`` in order; on failure stop the started ones and re-raise."""
        started: list[object] = []
        try:
            for plugin in self.plugins:
                init = getattr(plugin, "init", None)
                if init is not None:
                    await maybe_await(init(agent))
                started.append(plugin)
        except BaseException:
            await _stop_all(reversed(started))
            raise
        self._started = started

    async def stop(self) -> None:
        """Stop the started plugins in reverse order (errors are logged, not raised)."""
        started, self._started = self._started, []
        await _stop_all(reversed(started))

    # -- assembly ----------------------------------------------------------------------

    async def assemble(
        self, instructions: str, tools: dict[str, Tool]
    ) -> tuple[str, dict[str, Tool]]:
        """The turn's instructions and tools: the agent's plus every plugin's."""
        if not self._hooks["extend_instructions"] and not self._hooks["extend_tools"]:
            return instructions, tools
        parts = [instructions] if instructions else []
        merged = dict(tools)
        sources = dict.fromkeys(tools, "the agent")
        for plugin in self.plugins:
            extend = getattr(plugin, "extend_instructions", None)
            if extend is not None and (text := await maybe_await(extend())):
                parts.append(str(text))
            extend = getattr(plugin, "extend_tools", None)
            if extend is None:
                continue
            for tool in _tools(await maybe_await(extend())):
                if tool.name in merged:
                    raise ToolConflictError(
                        f"tool {tool.name!r} from plugin {plugin_name(plugin)!r} is already "
                        f"registered by {sources[tool.name]}",
                        hint="rename one of the tools or drop one of the sources",
                    )
                merged[tool.name] = tool
                sources[tool.name] = f"plugin {plugin_name(plugin)!r}"
        return "\n\n".join(parts), merged

    # -- chains ------------------------------------------------------------------------

    async def pipe(self, hook: Hook, value: Any) -> Any:
        """Feed ``value`` through every ``hook``; a None return keeps the value."""
        for function in self._hooks[hook]:
            result = await maybe_await(function(value))
            if result is not None:
                value = result
        return value

    async def first(self, hook: Hook, *args: Any) -> Any:
        """The first non-None answer of ``hook``."""
        for function in self._hooks[hook]:
            result = await maybe_await(function(*args))
            if result is not None:
                return result
        return None

    async def finish_decision(self, result: Any, message: Message) -> Any:
        """The first ``finish_turn`` answer for this response, as given (None: no opinion)."""
        return await self.first("finish_turn", result, message)

    async def step_decision(self, info: StepInfo) -> bool | None:
        """Whether the turn goes on after this step (None: no plugin has an opinion)."""
        decision: bool | None = None
        for function in self._hooks["on_step_finish"]:
            try:
                result = await maybe_await(function(info))
            except Exception:  # a raising plugin has no opinion; the others still observe
                log.debug("on_step_finish failed", exc_info=True)
                continue
            if decision is None and isinstance(result, Mapping) and "continue" in result:
                decision = bool(result["continue"])
        return decision

    async def observe(self, hook: Hook, value: Any) -> None:
        """Call an observer hook on every plugin, swallowing errors."""
        for function in self._hooks[hook]:
            try:
                await maybe_await(function(value))
            except Exception:
                log.debug("%s failed", hook, exc_info=True)

    # -- tool hooks --------------------------------------------------------------------

    def before_tool_call(self) -> BeforeToolCall | None:
        """The ``before_tool_call`` chain as the executor calls it: each hook sees the call
        and the decision so far (the built-in one passes the agent's ``services``)."""
        hooks = self._hooks["before_tool_call"]
        if not hooks:
            return None

        async def before(call: ToolCall, services: Any) -> Any:
            decision = None
            for hook in hooks:
                result = await maybe_await(hook(call, decision))
                if result is not None:
                    decision = as_decision(result)
            return decision

        return before

    def after_tool_call(self) -> AfterToolCall | None:
        """The ``after_tool_call`` chain: each hook's override applied in turn."""
        hooks = self._hooks["after_tool_call"]
        if not hooks:
            return None

        async def after(call: ToolCall, result: ToolResult) -> ToolResult:
            for hook in hooks:
                result = apply_override(result, await maybe_await(hook(call, result)))
            return result

        return after

    # -- storage -----------------------------------------------------------------------

    def record(self, entry: Entry, storage: Storage) -> None:
        """Append ``entry`` to ``storage`` through the ``on_append`` chain (async chains are
        applied in order in the background; ``flush`` waits for them)."""
        if not self.appends:
            storage.append(entry)
        elif not self._async_append:
            for item in self._rewrite_sync(entry):
                storage.append(item)
        else:
            self._writes = asyncio.get_running_loop().create_task(
                self._write_later(self._writes, entry, storage)
            )

    async def flush(self) -> None:
        """Wait until every entry recorded so far is in storage."""
        while self._writes is not None:
            writes = self._writes
            await writes
            if self._writes is writes:
                self._writes = None

    def _rewrite_sync(self, entry: Entry) -> list[Entry]:
        entries = [entry]
        for hook in self._hooks["on_append"]:
            entries = [out for item in entries for out in _appended(hook, item)]
        return entries

    async def _write_later(
        self, previous: asyncio.Task[None] | None, entry: Entry, storage: Storage
    ) -> None:
        if previous is not None:
            await previous  # keeps entries in the order they were recorded
        entries = [entry]
        for hook in self._hooks["on_append"]:
            rewritten: list[Entry] = []
            for item in entries:
                try:
                    rewritten.extend(_as_entries(await maybe_await(hook(item)), item))
                except Exception:  # never lose an entry to a plugin bug
                    log.warning("on_append failed; entry stored unchanged", exc_info=True)
                    rewritten.append(item)
            entries = rewritten
        for item in entries:
            storage.append(item)


def _appended(hook: Callable[[Entry], Any], entry: Entry) -> list[Entry]:
    try:
        return _as_entries(hook(entry), entry)
    except Exception:  # never lose an entry to a plugin bug
        log.warning("on_append failed; entry stored unchanged", exc_info=True)
        return [entry]


def _as_entries(value: Entry | Iterable[Entry] | None, original: Entry) -> list[Entry]:
    if value is None:
        return [original]
    if isinstance(value, Entry):
        return [value]
    return list(value)


def _tools(value: Any) -> list[Tool]:
    if not value:
        return []
    if isinstance(value, Mapping):
        return [
            tool if tool.name == name else dataclasses.replace(tool, name=name)
            for name, tool in value.items()
        ]
    return list(value)


def _is_async(function: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(
        getattr(function, "__call__", None)  # noqa: B004 - an async __call__ method
    )


async def _stop_all(plugins: Iterable[object]) -> None:
    for plugin in plugins:
        stop = getattr(plugin, "stop", None)
        if stop is None:
            continue
        try:
            await maybe_await(stop())
        except Exception:
            log.warning("plugin %r failed to stop", plugin_name(plugin), exc_info=True)

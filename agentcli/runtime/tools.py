"""Tools: definitions, argument validation and batch execution.

A batch is preflighted in the model's order (lookup, argument validation, the tool's
``tools_context`` entry against its ``context_schema``, the ``before_tool_call`` hook), executed concurrently (or one by one when any tool in it is
``sequential``), and its results are returned in the model's order whatever order the
tools finished in. Every call gets a result: errors, blocks and cancellations become
error results the model can react to.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentcli import otel
from agentcli.jsonsafe import json_safe
from agentcli.threads import in_own_thread

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

    from agentcli.runtime.events import Event

__all__ = [
    "Tool",
    "ToolCall",
    "ToolContext",
    "ToolResult",
    "ArgumentValidator",
    "Block",
    "Replace",
    "ToolExecutor",
    "apply_override",
    "as_decision",
    "call_tool_function",
    "maybe_await",
    "result_text",
]


@dataclass(slots=True)
class ToolCall:
    """A tool call as the runtime executes it."""

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    arguments_error: str | None = None
    caller: str | None = None  # the caller tool this call came from (None: the model)
    parent_id: str | None = None  # ... and that caller's call id

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        data: dict[str, Any] = {"id": self.id, "name": self.name, "arguments": self.arguments}
        if self.caller is not None:
            data["caller"] = self.caller
            data["parent_id"] = self.parent_id
        return data


@dataclass(slots=True)
class ToolResult:
    """What a tool call produced. ``content`` is any JSON value; ``terminate`` is a hint
    that the run may stop after this batch (honoured only when every result agrees)."""

    call_id: str
    name: str
    content: Any = None
    is_error: bool = False
    terminate: bool = False
    details: dict[str, Any] = field(default_factory=dict)
    # the tool's ``to_model_output`` projection: what the model is sent instead of
    # ``content``, which stays whole in events and the turn's results (None: not projected)
    model_content: Any = None

    @property
    def for_model(self) -> Any:
        """What the model is sent: the projection when there is one, else the content."""
        return self.content if self.model_content is None else self.model_content

    def text(self) -> str:
        """The result as the model sees it."""
        return result_text(self.for_model)

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        data: dict[str, Any] = {
            "call_id": self.call_id,
            "name": self.name,
            "content": self.content,
            "is_error": self.is_error,
        }
        if self.terminate:
            data["terminate"] = True
        if self.details:
            data["details"] = self.details
        if self.model_content is not None:
            data["model_content"] = self.model_content
        return data


@dataclass(slots=True)
class ToolContext:
    """What a tool function may receive as ``ctx``: its call, its per-tool context, an
    ``update`` callback for progress, and the host's context object (``services``), which
    for assistant packages is the hook ``ctx``."""

    call: ToolCall
    context: Any = None
    services: Any = None
    update: Callable[[Any], None] = lambda data: None
    # for caller tools: ``await ctx.call_tool(name, arguments)`` runs another tool through
    # the same checks, hooks and events (allowed when the tool's ``tool_callers`` entry
    # names this tool)
    call_tool: Callable[[str, dict[str, Any]], Awaitable[ToolResult]] | None = None


ToolFunction = Callable[..., Any | Awaitable[Any]]


@dataclass(slots=True)
class Tool:
    """A tool the model can call.

    ``execute`` is called as ``execute(arguments)`` or, when it has a ``ctx`` parameter,
    ``execute(arguments, ctx=ToolContext)``; it may be sync (run in a thread of its own) or
    async. A ``ToolResult`` return value is used as is (``terminate=True`` hints that the
    run may stop after this batch); anything else is the content. ``context_schema``, when
    set, is the JSON Schema the tool's ``tools_context`` entry must satisfy.
    ``to_model_output(result)``, when set, is the tool's own projection of a successful
    result for the model (a summary of a big value); the whole result stays in the trace.
    """

    name: str
    execute: ToolFunction
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    sequential: bool = False
    context_schema: dict[str, Any] | None = None
    label: str = ""
    server: str = ""  # the tool server it came from, for reports ("" for local tools)
    bare_name: str = ""  # the name within its server
    to_model_output: Callable[[ToolResult], Any] | None = None

    def to_openai(self) -> dict[str, Any]:
        """The OpenAI function-tool declaration."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters or {"type": "object", "properties": {}},
            },
        }


@functools.lru_cache(maxsize=1024)  # inspect.signature per call would cost more than the call
def _wants_ctx(function: Callable[..., Any]) -> bool:
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False
    return "ctx" in parameters or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()
    )


async def call_tool_function(function: ToolFunction, arguments: Any, ctx: Any) -> Any:
    """Call a user function (sync in a thread of its own, async awaited), passing ``ctx=``
    only when the function accepts it."""
    try:
        wants_ctx = _wants_ctx(function)
    except TypeError:  # an unhashable callable object: not cached
        wants_ctx = _wants_ctx.__wrapped__(function)
    kwargs = {"ctx": ctx} if wants_ctx else {}
    if inspect.iscoroutinefunction(function):
        return await function(arguments, **kwargs)
    result = await in_own_thread(function, arguments, **kwargs)
    if inspect.isawaitable(result):
        result = await result
    return result


def result_text(content: Any) -> str:
    """A tool result as text: strings as they are, everything else as JSON."""
    if isinstance(content, str):
        return content
    return json.dumps(json_safe(content), ensure_ascii=False)


@dataclass(slots=True, frozen=True)
class Block:
    """A ``before_tool_call`` decision: do not run the tool; ``reason`` becomes the result."""

    reason: str = "blocked"
    terminate: bool = False


@dataclass(slots=True, frozen=True)
class Replace:
    """A ``before_tool_call`` decision: run the tool with these arguments instead."""

    arguments: dict[str, Any]


BeforeToolCall = Callable[[ToolCall, Any], Any]
AfterToolCall = Callable[[ToolCall, ToolResult], Any]
Emit = Callable[["Event"], Coroutine[Any, Any, None]]

_RESULT_FIELDS = ("content", "is_error", "terminate", "details")


def as_decision(value: object) -> Block | Replace | None:
    """A ``before_tool_call`` answer as a decision: the dataclasses, their dict spellings
    (``{"block": True, "reason": ..., "terminate": ...}``, ``{"arguments": {...}}``) or
    ``False`` (block); anything else allows the call."""
    if value is None or isinstance(value, Block | Replace):
        return value
    if isinstance(value, dict):
        if value.get("block"):
            return Block(str(value.get("reason") or "blocked"), bool(value.get("terminate")))
        if isinstance(value.get("arguments"), dict):
            return Replace(value["arguments"])
        return None
    if value is False:
        return Block()
    return None


def apply_override(result: ToolResult, override: object) -> ToolResult:
    """``result`` after an ``after_tool_call`` answer: a ToolResult replaces it, a dict
    replaces the fields it names (content, is_error, terminate, details), None keeps it."""
    if override is None:
        return result
    if isinstance(override, ToolResult):
        return override
    if isinstance(override, dict):
        for key in _RESULT_FIELDS:
            if key in override:
                setattr(result, key, override[key])
    return result


class ArgumentValidator:
    """Validates tool arguments against each tool's JSON Schema (validators compiled once;
    jsonschema imported only when a schema has something to check)."""

    def __init__(self) -> None:
        self._validators: dict[int, Draft202012Validator] = {}

    def errors(self, tool: Tool, arguments: dict[str, Any]) -> str | None:
        """A one-line description of what is wrong, or None."""
        schema = tool.parameters
        if not isinstance(schema, dict) or not (
            schema.get("properties") or schema.get("required") or schema.get("anyOf")
        ):
            return None
        return self._problems(schema, arguments)

    def context_errors(self, tool: Tool, context: Any) -> str | None:
        """What is wrong with ``context`` for a tool that declares a ``context_schema``."""
        if tool.context_schema is None:
            return None
        return self._problems(tool.context_schema, context)

    def _problems(self, schema: dict[str, Any], value: Any) -> str | None:
        key = id(schema)
        validator = self._validators.get(key)
        if validator is None:
            from jsonschema import Draft202012Validator

            validator = Draft202012Validator(schema)
            self._validators[key] = validator
        problems = sorted(validator.iter_errors(value), key=lambda e: list(e.path))
        if not problems:
            return None
        parts = []
        for problem in problems[:3]:
            where = ".".join(str(p) for p in problem.path)
            parts.append(f"{where}: {problem.message}" if where else problem.message)
        return "; ".join(parts)


@dataclass(slots=True)
class _Prepared:
    call: ToolCall
    tool: Tool | None = None
    result: ToolResult | None = None  # set when preflight already decided the result


class ToolExecutor:
    """Runs one batch of tool calls: preflight in order, execute, finalize in order."""

    def __init__(
        self,
        tools: dict[str, Tool],
        *,
        emit: Emit,
        turn_id: str | None,
        before_tool_call: BeforeToolCall | None = None,
        after_tool_call: AfterToolCall | None = None,
        parallel: bool = True,
        services: Any = None,
        tools_context: dict[str, Any] | None = None,
        validator: ArgumentValidator | None = None,
        tool_callers: dict[str, list[str]] | None = None,
        pending: set[str] | None = None,
    ) -> None:
        self.tools = tools
        self.emit = emit
        self.turn_id = turn_id
        self.before_tool_call = before_tool_call
        self.after_tool_call = after_tool_call
        self.parallel = parallel
        self.services = services
        self.tools_context = tools_context or {}
        self.validator = validator or ArgumentValidator()
        self.tool_callers = tool_callers or {}
        self.finished: dict[str, ToolResult] = {}
        self.pending = pending if pending is not None else set()  # calls not finalized yet
        self._blocked: set[str] = set()  # calls a before_tool_call hook blocked

    async def run(self, calls: list[ToolCall]) -> list[ToolResult]:
        """Execute ``calls`` and return their results in the given order."""
        from agentcli.runtime.events import ToolExecutionStart

        if not self.parallel or any(self._sequential(call) for call in calls):
            # One by one, each start -> checks -> run -> end before the next call starts:
            # tools that share state (a database) see each other's effects in order.
            for call in calls:
                await self.emit(ToolExecutionStart(turn_id=self.turn_id, call=call))
                item = await self._preflight(call)
                if item.result is None:
                    await self._execute(item)
                else:
                    await self._finalize(call, item.result, 0.0)
            return [self.finished[call.id] for call in calls]
        prepared: list[_Prepared] = []
        for call in calls:
            await self.emit(ToolExecutionStart(turn_id=self.turn_id, call=call))
            prepared.append(await self._preflight(call))
        runnable = [p for p in prepared if p.result is None]
        if len(runnable) <= 1:
            for item in runnable:
                await self._execute(item)
        else:
            async with asyncio.TaskGroup() as group:
                for item in runnable:
                    group.create_task(self._execute(item))
        for item in prepared:
            if item.call.id not in self.finished:
                await self._finalize(
                    item.call, item.result or _error(item.call, "not executed"), 0.0
                )
        return [self.finished[call.id] for call in calls]

    def _sequential(self, call: ToolCall) -> bool:
        """Whether ``call`` is to a tool that must run alone (its batch then runs in order)."""
        tool = self.tools.get(call.name)
        return tool is not None and tool.sequential

    async def call_from(self, caller: ToolCall, name: str, arguments: dict[str, Any]) -> ToolResult:
        """Run tool ``name`` for the caller tool of ``caller`` (a program calling tools):
        the same events, checks and hooks as a call of the model; not in the batch's
        results (the model sees the caller's result)."""
        from agentcli.runtime.events import ToolExecutionStart
        from agentcli.runtime.messages import new_id

        call = ToolCall(new_id(), name, dict(arguments), caller=caller.name, parent_id=caller.id)
        await self.emit(ToolExecutionStart(turn_id=self.turn_id, call=call))
        item = await self._preflight(call)
        if item.result is None:
            await self._execute(item)
        else:
            await self._finalize(call, item.result, 0.0)
        return self.finished.pop(call.id)

    def _reachable(self, call: ToolCall) -> str | None:
        """Why ``call`` may not reach its tool from where it came (None: it may)."""
        from agentcli.runtime.config import DIRECT_TOOL_CALL

        callers = self.tool_callers.get(call.name)
        source = DIRECT_TOOL_CALL if call.caller is None else call.caller
        if callers is None:
            if call.caller is None:
                return None
            return f"tool {call.name!r} may not be called from {call.caller!r} (tool_callers)"
        if source in callers:
            return None
        if call.caller is None:
            return f"tool {call.name!r} is only reachable from {', '.join(callers)}"
        return f"tool {call.name!r} may not be called from {call.caller!r} (tool_callers)"

    async def _preflight(self, call: ToolCall) -> _Prepared:
        self.pending.add(call.id)
        tool = self.tools.get(call.name)
        if tool is None:
            known = ", ".join(sorted(self.tools)) or "none"
            return _Prepared(
                call, None, _error(call, f"unknown tool {call.name!r} (available: {known})")
            )
        if self.tool_callers or call.caller is not None:
            problem = self._reachable(call)
            if problem:
                return _Prepared(call, tool, _error(call, problem))
        if call.arguments_error:
            return _Prepared(call, tool, _error(call, f"invalid arguments: {call.arguments_error}"))
        problem = self.validator.errors(tool, call.arguments)
        if problem:
            return _Prepared(
                call, tool, _error(call, f"invalid arguments for {call.name}: {problem}")
            )
        if tool.context_schema is not None:
            problem = self.validator.context_errors(tool, self.tools_context.get(tool.name))
            if problem:
                return _Prepared(
                    call, tool, _error(call, f"invalid context for {call.name}: {problem}")
                )
        if self.before_tool_call is not None:
            try:
                decision = as_decision(
                    await maybe_await(self.before_tool_call(call, self.services))
                )
            except Exception as error:  # a hook bug is this call's error, not the turn's
                message = f"before_tool_call failed: {type(error).__name__}: {error}"
                return _Prepared(call, tool, _error(call, message))
            if isinstance(decision, Block):
                result = ToolResult(call.id, call.name, decision.reason, True, decision.terminate)
                self._blocked.add(call.id)
                return _Prepared(call, tool, result)
            if isinstance(decision, Replace):
                call.arguments = dict(decision.arguments)
                problem = self.validator.errors(tool, call.arguments)
                if problem:
                    message = f"invalid arguments for {call.name}: {problem}"
                    return _Prepared(call, tool, _error(call, message))
        return _Prepared(call, tool)

    async def _execute(self, item: _Prepared) -> None:
        from agentcli.runtime.events import ToolExecutionUpdate

        call, tool = item.call, item.tool
        assert tool is not None
        loop = asyncio.get_running_loop()

        def update(data: Any) -> None:
            event = ToolExecutionUpdate(turn_id=self.turn_id, call=call, data=data)
            loop.call_soon_threadsafe(lambda: loop.create_task(self.emit(event)))

        async def call_tool(name: str, arguments: dict[str, Any]) -> ToolResult:
            return await self.call_from(call, name, arguments)

        ctx = ToolContext(call, self.tools_context.get(tool.name), self.services, update, call_tool)
        started = time.perf_counter()
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.name,
            "gen_ai.tool.call.id": call.id,
        }
        with otel.span(f"execute_tool {call.name}", attributes) as traced:
            try:
                value = await call_tool_function(tool.execute, call.arguments, ctx)
            except asyncio.CancelledError:
                raise
            except Exception as error:  # a raising tool is a result the model can react to
                # The model reads the message, as a person would; the class stays in the trace.
                result = _error(call, str(error) or type(error).__name__)
                result.details["error_type"] = type(error).__name__
            else:
                if isinstance(value, ToolResult):
                    value.call_id, value.name = call.id, call.name
                    result = value
                else:
                    result = ToolResult(call.id, call.name, value)
            if result.is_error:
                traced.fail(str(result.content), result.details.get("error_type"))
        await self._finalize(call, result, (time.perf_counter() - started) * 1000)

    async def _finalize(self, call: ToolCall, result: ToolResult, duration_ms: float) -> None:
        from agentcli.runtime.events import ToolBlocked, ToolExecutionEnd, ToolFailed

        if self.after_tool_call is not None:
            try:
                override = await maybe_await(self.after_tool_call(call, result))
            except Exception as error:
                override = {"content": f"after_tool_call failed: {error}", "is_error": True}
            result = apply_override(result, override)
        tool = self.tools.get(call.name)
        if tool is not None and tool.to_model_output is not None and not result.is_error:
            try:
                result.model_content = await maybe_await(tool.to_model_output(result))
            except Exception as error:  # a broken projection must not lose the result
                result.model_content = f"to_model_output failed: {error}"
        self.finished[call.id] = result
        self.pending.discard(call.id)
        if result.is_error:
            # seed 000's tool.blocked / tool.failed, ahead of the call's end
            blocked = call.id in self._blocked
            kind = ToolBlocked if blocked else ToolFailed
            await self.emit(kind(turn_id=self.turn_id, call=call, result=result))
        await self.emit(
            ToolExecutionEnd(
                turn_id=self.turn_id, call=call, result=result, duration_ms=duration_ms
            )
        )


def _error(call: ToolCall, message: str) -> ToolResult:
    return ToolResult(call.id, call.name, message, is_error=True)


async def maybe_await(value: Any) -> Any:
    """``value``, awaited when it is awaitable (hooks may be sync or async)."""
    if inspect.isawaitable(value):
        return await value
    return value

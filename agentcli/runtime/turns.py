"""One turn: steps of (model call -> tool batch) until nothing asks for another step.

A step::

    model context (context.py) -> prepare_step (plugins) -> prepare_request (agent option)
    -> model stream (each part on the "stream" channel; deltas as message_update events)
    -> tool batch (a response cut by length fails its calls instead of running them)
    -> finish_turn (agent option) -> step_end -> joined input recorded
    -> on_step_finish (plugins)

Whether the turn goes on after a step is ``decide.decide_step``, a pure function of what
the step left behind. A turn works on an ``AgentCore`` (core.py) through its public surface.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, get_args

from agentcli import otel
from agentcli.choices import one_of
from agentcli.errors import (
    AgentRuntimeError,
    ModelError,
    ProviderError,
    ToolChoiceViolationError,
    ToolConflictError,
)
from agentcli.models.base import (
    Model,
    ModelSettings,
    ResponseDone,
    TextDelta,
    ThinkingDelta,
    Usage,
)
from agentcli.runtime.channel import AGENT, STREAM
from agentcli.runtime.choice import normalize_choice, tool_choice_problem
from agentcli.runtime.config import DIRECT_TOOL_CALL
from agentcli.runtime.context import model_messages
from agentcli.runtime.decide import StepDecision, StepOutcome, decide_step
from agentcli.runtime.events import (
    ErrorEvent,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    StepEnd,
    ToolExecutionEnd,
    ToolExecutionStart,
    TurnEnd,
    TurnError,
    TurnReason,
    TurnStart,
)
from agentcli.runtime.messages import Message, new_id, system_message, tool_message
from agentcli.runtime.plugins import Step, StepInfo
from agentcli.runtime.tools import Tool, ToolCall, ToolExecutor, ToolResult

if TYPE_CHECKING:
    from agentcli.runtime.core import AgentCore

__all__ = ["FINISH_DECISIONS", "LENGTH_CUT", "FinishDecision", "Turn", "TurnResult"]

log = logging.getLogger("agentcli.runtime")

LENGTH_CUT = (
    "The response was cut off by the length limit before this tool call was complete; "
    "re-issue the call with complete arguments."
)

# what a ``finish_turn`` hook may answer (itself or as ``{"action": ...}``); else no opinion
FinishDecision = Literal["end", "continue"]
FINISH_DECISIONS: tuple[FinishDecision, ...] = get_args(FinishDecision)

_ERROR_KINDS: dict[type[Exception], str] = {
    ToolChoiceViolationError: "tool_choice",
    ToolConflictError: "tool_conflict",
}


@dataclass(slots=True)
class TurnResult:
    """What one turn did."""

    turn_id: str
    reason: TurnReason
    messages: list[Message] = field(default_factory=list)
    tool_results: list[ToolResult] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    steps: int = 0
    error: str | None = None
    error_kind: str | None = None
    abort_reason: str | None = None
    error_info: TurnError | None = None  # {name, message, cause} of a failed turn

    @property
    def text(self) -> str:
        """The last assistant text of the turn."""
        for message in reversed(self.messages):
            if message.role == "assistant" and message.text():
                return message.text()
        return ""

    @property
    def tool_calls(self) -> list[ToolCall]:
        """Every tool call the model made in this turn, in order."""
        return [call for m in self.messages if m.role == "assistant" for call in m.tool_calls]


class _Streaming:
    """The assistant message being streamed and its text so far, kept as pieces: adding
    each delta to ``message.content`` copied the whole text every time (a 5 MB answer took
    minutes). The message's ``content`` and ``thinking`` are set when it ends."""

    __slots__ = ("message", "text", "thinking")

    def __init__(self, message: Message) -> None:
        self.message = message
        self.text: list[str] = []
        self.thinking: list[str] = []

    def settle(self) -> Message:
        """The message with the text streamed so far (an aborted or failed stream)."""
        self.message.content = "".join(self.text)
        self.message.thinking = "".join(self.thinking)
        return self.message


class Turn:
    """A running turn: its steps, joined input, turn-scoped contexts and abort handle."""

    def __init__(self, core: AgentCore, turn_id: str, opening: list[Message]) -> None:
        self.core = core
        self.id = turn_id
        self.result = TurnResult(turn_id=turn_id, reason="done")
        self.opening = opening
        self.closing = False  # past its last step: new input waits for the next turn
        self.ended_by_hook = False  # finish_turn said "end": follow-ups are not polled
        self.joined: list[Message] = []
        self.join_trigger = False
        self.instructions = core.instructions
        self.tools: dict[str, Tool] = core.tools
        self.tools_context: dict[str, Any] = core.config.tools.tools_context
        self.runtime_context: dict[str, Any] = core.config.loop.runtime_context
        self._task: asyncio.Task[TurnReason] | None = None
        self._abort_requested = False
        self._streaming: _Streaming | None = None
        self._executor: ToolExecutor | None = None
        self._open_calls: list[ToolCall] = []
        self._step_tools: dict[str, Tool] = self.tools
        self._declared: tuple[dict[str, Tool] | None, list[dict[str, Any]]] = (None, [])

    def join(self, messages: list[Message], trigger: bool) -> None:
        """Add input to the next step (``trigger`` makes sure there is one)."""
        self.joined.extend(messages)
        self.join_trigger = self.join_trigger or trigger

    def abort(self, reason: str | None = None) -> None:
        """Cancel the model call and every running tool; the turn ends as aborted."""
        self._abort_requested = True
        if reason and self.result.abort_reason is None:
            self.result.abort_reason = reason
        if self._task is not None and not self._task.done():
            self._task.cancel()

    async def run(self) -> TurnResult:
        """Run the turn to its end and return its result (failures are in the result)."""
        core, result = self.core, self.result
        core.error_message = None
        core.record("event", {"type": "turn_start"}, self.id)
        await core.emit(TurnStart(turn_id=self.id))
        try:
            if self._abort_requested:
                raise asyncio.CancelledError
            self._task = asyncio.get_running_loop().create_task(self._body())
            result.reason = await self._task
        except asyncio.CancelledError:
            result.reason = "aborted"
            await self._close("aborted")
            if not self._abort_requested:
                raise
        except Exception as error:  # a model, hook or plugin failure fails the turn only
            await self._close("error")
            result.reason = "failed"
            result.error = str(error) or type(error).__name__
            result.error_kind = _error_kind(error)
            result.error_info = TurnError.from_exception(error)
            core.error_message = result.error
        finally:
            self.closing = True
            self._task = None
            core.streaming_message = None
            core.pending_tool_calls.clear()
        leftover, self.joined = self.joined, []
        await core.append(leftover, self.id)
        if result.error:
            await core.emit(
                ErrorEvent(
                    turn_id=self.id,
                    error=result.error,
                    kind=result.error_kind or "",
                    error_info=result.error_info,
                )
            )
        core.record("event", {"type": "turn_end", "reason": result.reason}, self.id)
        last = next((m for m in reversed(result.messages) if m.role == "assistant"), None)
        await core.emit(
            TurnEnd(
                turn_id=self.id,
                reason=result.reason,
                message=last,
                tool_results=list(result.tool_results),
                usage=result.usage,
                steps=result.steps,
                error=result.error,
                abort_reason=result.abort_reason,
                error_info=result.error_info,
            )
        )
        if core.plugins.has("on_turn_finish"):
            await core.plugins.observe("on_turn_finish", result)
        return result

    async def _body(self) -> TurnReason:
        core = self.core
        if not core.ready:
            await core.ensure_ready(self.id)
        opening, self.opening = self.opening, []
        await core.append(opening, self.id)
        await core.append(core.steering.take(), self.id)
        # assembled once per turn: a plugin whose tools change owns when they change
        self.instructions, self.tools = await core.plugins.assemble(core.instructions, core.tools)
        if core.config.tools.tool_callers:
            _check_callers(core.config.tools.tool_callers, self.tools)
        while True:
            self.result.steps += 1
            reason = await self._step(self.result.steps)
            if reason is not None:
                return reason

    async def _step(self, number: int) -> TurnReason | None:
        core, result = self.core, self.result
        first = len(result.messages)
        response, settings = await self._respond(number)
        calls = response.tool_calls
        problem = tool_choice_problem(settings.tool_choice, calls)
        if problem:
            if calls:  # keep the transcript valid: every call gets a result
                note = f"not executed: {problem}"
                await self._record_results([ToolResult(c.id, c.name, note, True) for c in calls])
            raise ToolChoiceViolationError(problem)
        results = await self._run_tools(response) if calls else []
        finish = await self._finish_turn(response)
        usage = response.usage or Usage()
        await core.emit(
            StepEnd(
                turn_id=self.id,
                step=number,
                usage=usage,
                finish_reason=response.finish_reason,
                message=response,
                tool_results=results,
            )
        )
        joined, triggered = self.joined, self.join_trigger
        self.joined, self.join_trigger = [], False
        await core.append(joined, self.id)
        verdict = None
        if core.plugins.has("on_step_finish"):
            info = StepInfo(
                self.id, number, result.messages[first:], list(calls), results,
                response.finish_reason, usage,
            )  # fmt: skip
            verdict = await core.plugins.step_decision(info)
        decision = decide_step(
            StepOutcome(
                step=number,
                max_steps=core.config.loop.max_steps,
                finish=finish,
                verdict=verdict,
                tool_calls=bool(calls),
                all_terminate=bool(results) and all(r.terminate for r in results),
                joined_trigger=triggered,
                steering=bool(core.steering),
                follow_up=bool(core.follow_ups),
            )
        )
        return await self._after(decision)

    async def _after(self, decision: StepDecision) -> TurnReason | None:
        """Act on the step decision: end the turn (its reason) or prepare the next step."""
        if decision == "end":
            self.ended_by_hook = True  # finish_turn ended it: follow-ups are not polled
            return "done"
        if decision in ("stop", "terminate", "follow_up"):
            return "done"  # a queued follow-up turn makes the request finish_turn asked for
        if decision == "max_steps":
            return "max_steps"
        if decision == "steer":
            await self.core.append(self.core.steering.take(), self.id)
        return None

    async def _respond(self, number: int) -> tuple[Message, ModelSettings]:
        core = self.core
        options = core.config.tools
        settings = core.settings
        choice = options.tool_choice if options.tool_choice is not None else settings.tool_choice
        messages = await model_messages(core)
        model, instructions, active = core.model, self.instructions, options.active_tools
        plugins = core.plugins
        if plugins.has("prepare_step"):
            # the step's own settings: a hook that edits them in place changes this step only
            settings = dataclasses.replace(settings, extra=dict(settings.extra))
            step = Step(
                self.id, number, messages, instructions, model, settings, choice, active,
                self.tools_context, self.runtime_context,
            )  # fmt: skip
            step = await plugins.pipe("prepare_step", step)
            # a new context object stays in force for the rest of the turn
            self.tools_context, self.runtime_context = step.tools_context, step.runtime_context
            messages, instructions, model = step.messages, step.instructions, step.model
            settings, choice, active = step.settings, step.tool_choice, step.active_tools
        self._step_tools = self._active(active)
        choice = normalize_choice(choice)
        if choice != settings.tool_choice:
            settings = dataclasses.replace(settings, tool_choice=choice)
        settings = await self._provider_settings(model, settings)
        if core.config.loop.announce_tools:
            announcement = await self._announce(self._step_tools)
            if announcement is not None:
                messages = [*messages, {"role": "system", "content": announcement}]
        if core.sections:
            sections = "\n\n".join(core.sections.values())
            instructions = f"{instructions}\n\n{sections}" if instructions else sections
        if instructions:
            messages = [{"role": "system", "content": instructions}, *messages]
        request: dict[str, Any] = {
            "messages": messages,
            "tools": self._declarations(self._step_tools),
            "settings": settings,
            "turn_id": self.id,
            "step": number,
            "runtime_context": self.runtime_context,
        }
        if plugins.has("prepare_request"):
            request = await plugins.pipe("prepare_request", request)
        return await self._stream(model, request), request["settings"]

    async def _provider_settings(self, model: Model, settings: ModelSettings) -> ModelSettings:
        """The settings with the agent's thinking level, session id and a fresh API key."""
        provider = self.core.config.provider
        level = provider.thinking_level
        key = None
        if provider.get_api_key is not None:
            key = await provider.get_api_key(model.provider)  # before each request (seed 004)
        if level == "off" and provider.session_id is None and key is None:
            return settings
        return dataclasses.replace(
            settings,
            thinking_level=level if level != "off" else settings.thinking_level,
            thinking_budget=provider.thinking_budgets.get(level, settings.thinking_budget),
            session_id=provider.session_id or settings.session_id,
            api_key=key or settings.api_key,
        )

    async def _announce(self, tools: dict[str, Tool]) -> str | None:
        """Announce a changed tool loadout in a system message (seed 004): the first
        request sets what the transcript declares, later changes are announced."""
        core = self.core
        names = tuple(sorted(self._declared_names(tools)))
        before = core.announced
        if before is None:
            core.announced = names
            return None
        if before == names:
            return None
        added = [n for n in names if n not in before]
        removed = [n for n in before if n not in names]
        parts = []
        if added:
            parts.append(f"now available: {', '.join(added)}")
        if removed:
            parts.append(f"no longer available: {', '.join(removed)}")
        text = "The tools changed; " + "; ".join(parts) + "."
        await core.append([system_message(text, data={"tools": list(names)})], self.id)
        return text

    def _declared_names(self, tools: dict[str, Tool]) -> list[str]:
        callers = self.core.config.tools.tool_callers
        return [n for n in tools if n not in callers or DIRECT_TOOL_CALL in callers[n]]

    def _active(self, active: list[str] | None) -> dict[str, Tool]:
        if active is None:
            return self.tools
        names = set(active)
        return {name: tool for name, tool in self.tools.items() if name in names}

    def _declarations(self, tools: dict[str, Tool]) -> list[dict[str, Any]]:
        if self._declared[0] is not tools:
            callers = self.core.config.tools.tool_callers
            # a tool only reachable from caller tools is hidden from the model (seed 000)
            visible = (tools[n] for n in self._declared_names(tools)) if callers else tools.values()
            self._declared = (tools, [tool.to_openai() for tool in visible])
        return self._declared[1]

    async def _stream(self, model: Model, request: dict[str, Any]) -> Message:
        """One model call, as a GenAI ``chat`` span when telemetry is on."""
        attributes = {
            "gen_ai.operation.name": "chat",
            "gen_ai.system": model.provider,
            "gen_ai.request.model": model.name,
        }
        with otel.span(f"chat {model.name}", attributes) as traced:
            message = await self._stream_message(model, request)
            usage = message.usage
            traced.update(
                {
                    "gen_ai.response.model": message.model,
                    "gen_ai.response.finish_reasons": [message.finish_reason or "stop"],
                    "gen_ai.usage.input_tokens": usage.input_tokens if usage else None,
                    "gen_ai.usage.output_tokens": usage.output_tokens if usage else None,
                    "agentcli.cost_usd": usage.cost if usage else None,
                }
            )
            return message

    async def _stream_message(self, model: Model, request: dict[str, Any]) -> Message:
        core = self.core
        channel = core.channel
        message = Message(role="assistant", content="", provider=model.provider, model=model.name)
        self._streaming = streaming = _Streaming(message)
        core.streaming_message = message
        await core.emit(MessageStart(turn_id=self.id, message=message))
        updates, parts = channel.has(AGENT), channel.has(STREAM)
        response = None
        try:
            async for part in model.stream(
                request["messages"], request["tools"], request["settings"]
            ):
                if parts:
                    await channel.emit(STREAM, part)
                if isinstance(part, TextDelta):
                    streaming.text.append(part.text)
                elif isinstance(part, ThinkingDelta):
                    streaming.thinking.append(part.text)
                elif isinstance(part, ResponseDone):
                    response = part.response
                    continue
                if updates:
                    await core.emit(MessageUpdate(turn_id=self.id, message=message, delta=part))
            if response is None:
                raise ProviderError(f"model {model.name!r} ended its stream without a response")
        except ModelError as error:
            self._streaming = None
            core.streaming_message = None
            streaming.settle()
            message.finish_reason = "error"
            message.error = str(error)
            await self._finish_message(message)
            await self._finish_turn(message)
            raise
        self._streaming = None
        core.streaming_message = None
        message.content = response.content
        message.thinking = response.thinking or "".join(streaming.thinking)
        message.finish_reason = response.finish_reason
        message.usage = response.usage
        message.provider = response.provider or message.provider
        message.model = response.model or message.model
        message.tool_calls = [
            ToolCall(c.id or new_id(), c.name, dict(c.arguments), c.arguments_error)
            for c in response.tool_calls
        ]
        self.result.usage = self.result.usage + response.usage
        await self._finish_message(message)
        return message

    async def _finish_message(self, message: Message) -> None:
        self.core.store([message], self.id)
        await self.core.emit(MessageEnd(turn_id=self.id, message=message))

    async def _run_tools(self, response: Message) -> list[ToolResult]:
        core = self.core
        calls = response.tool_calls
        self._open_calls = list(calls)
        if response.finish_reason == "length":
            # truncated arguments may still parse: none of these calls is safe to run
            results = [ToolResult(c.id, c.name, LENGTH_CUT, is_error=True) for c in calls]
            for call, item in zip(calls, results, strict=True):
                await core.emit(ToolExecutionStart(turn_id=self.id, call=call))
                await core.emit(ToolExecutionEnd(turn_id=self.id, call=call, result=item))
        else:
            options = core.config.tools
            self._executor = ToolExecutor(
                self._step_tools,
                emit=core.emit,
                turn_id=self.id,
                before_tool_call=core.plugins.before_tool_call(),
                after_tool_call=core.plugins.after_tool_call(),
                parallel=options.execution != "sequential",
                services=options.services,
                tools_context=self.tools_context,
                validator=core.validator,
                tool_callers=options.tool_callers,
                pending=core.pending_tool_calls,
            )
            results = await self._executor.run(calls)
        self._open_calls = []
        self._executor = None
        await self._record_results(results)
        return results

    async def _record_results(self, results: list[ToolResult]) -> None:
        self.result.tool_results.extend(results)
        await self.core.append([tool_message(item) for item in results], self.id)

    async def _finish_turn(self, message: Message) -> FinishDecision | None:
        """The ``finish_turn`` decision for this response (ignored for error/aborted ones)."""
        plugins = self.core.plugins
        if not plugins.has("finish_turn"):
            return None
        hard_exit = message.finish_reason in ("error", "aborted")
        try:
            decision = await plugins.finish_decision(self.result, message)
        except Exception:
            if not hard_exit:
                raise
            log.debug("finish_turn failed on a failed response", exc_info=True)
            return None
        if hard_exit:
            return None
        if isinstance(decision, Mapping):
            decision = decision.get("action")
        return one_of(decision, FINISH_DECISIONS)

    async def _close(self, finish_reason: str) -> None:
        """Keep the transcript well formed after an abort or failure: record input that was
        not recorded yet, end the streaming message, give every started call a result."""
        core = self.core
        if self.opening:
            opening, self.opening = self.opening, []
            await core.append(opening, self.id)
        if self._streaming is not None:
            message, self._streaming = self._streaming.settle(), None
            message.finish_reason = finish_reason
            message.tool_calls = []
            await self._finish_message(message)
            await self._finish_turn(message)
        if self._open_calls:
            finished = self._executor.finished if self._executor else {}
            results = []
            for call in self._open_calls:
                item = finished.get(call.id)
                if item is None:
                    item = ToolResult(call.id, call.name, "aborted before the tool finished", True)
                    await core.emit(ToolExecutionEnd(turn_id=self.id, call=call, result=item))
                results.append(item)
            self._open_calls = []
            self._executor = None
            await self._record_results(results)


def _check_callers(callers: dict[str, list[str]], tools: dict[str, Tool]) -> None:
    """A ``tool_callers`` entry naming a caller that is no tool would silently hide its
    tool from everyone: refused, naming it."""
    for name, allowed in callers.items():
        for caller in allowed:
            if caller != DIRECT_TOOL_CALL and caller not in tools:
                raise AgentRuntimeError(
                    f"tool_callers[{name!r}] names {caller!r}, which is not a tool",
                    hint=f"use tool names or DIRECT_TOOL_CALL ({DIRECT_TOOL_CALL!r})",
                )


def _error_kind(error: Exception) -> str:
    if isinstance(error, ModelError):
        return error.kind
    for kind, name in _ERROR_KINDS.items():
        if isinstance(error, kind):
            return name
    return getattr(error, "kind", None) or type(error).__name__

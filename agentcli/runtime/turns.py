"""One turn: steps of (model call -> tool batch) until nothing asks for another step.

A step::

    model context (context.py) -> prepare_step (plugins) -> prepare_request (agent option)
    -> model stream (each part on the "stream" channel; deltas as message_update events)
    -> tool batch (a response cut by length fails its calls instead of running them)
    -> finish_turn (agent option) -> step_end -> joined input recorded
    -> on_step_finish (plugins)

After a step the turn ends when ``finish_turn`` said ``end`` or a plugin said
``continue=False``. Otherwise it goes on when a plugin said ``continue=True``, tool calls
were made (unless every result of the batch carries ``terminate``), input joined with a
trigger, steering is queued, or ``finish_turn`` said ``continue`` (met by a queued
follow-up turn when there is one, else by one context-only request) -- up to ``max_steps``.
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
from agentcli.errors import ModelError, ProviderError, ToolChoiceViolationError, ToolConflictError
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
from agentcli.runtime.context import model_messages
from agentcli.runtime.events import (
    ErrorEvent,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    StepEnd,
    ToolExecutionEnd,
    ToolExecutionStart,
    TurnEnd,
    TurnReason,
    TurnStart,
)
from agentcli.runtime.messages import Message, new_id, tool_message
from agentcli.runtime.plugins import Step, StepInfo, maybe_await
from agentcli.runtime.tools import Tool, ToolCall, ToolExecutor, ToolResult

if TYPE_CHECKING:
    from agentcli.runtime.agent import Agent

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

    def __init__(self, agent: Agent, turn_id: str, opening: list[Message]) -> None:
        self.agent = agent
        self.id = turn_id
        self.result = TurnResult(turn_id=turn_id, reason="done")
        self.opening = opening
        self.closing = False  # past its last step: new input waits for the next turn
        self.ended_by_hook = False  # finish_turn said "end": follow-ups are not polled
        self.joined: list[Message] = []
        self.join_trigger = False
        self.instructions = agent.instructions
        self.tools: dict[str, Tool] = agent.tools
        self.tools_context: dict[str, Any] = agent.tools_context
        self.runtime_context: dict[str, Any] = agent.runtime_context
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
        agent, result = self.agent, self.result
        agent._record("event", {"type": "turn_start"}, self.id)
        await agent._emit(TurnStart(turn_id=self.id))
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
        finally:
            self.closing = True
            self._task = None
        leftover, self.joined = self.joined, []
        await agent._append_all(leftover, self.id)
        if result.error:
            await agent._emit(
                ErrorEvent(turn_id=self.id, error=result.error, kind=result.error_kind or "")
            )
        agent._record("event", {"type": "turn_end", "reason": result.reason}, self.id)
        last = next((m for m in reversed(result.messages) if m.role == "assistant"), None)
        await agent._emit(
            TurnEnd(
                turn_id=self.id,
                reason=result.reason,
                message=last,
                tool_results=list(result.tool_results),
                usage=result.usage,
                steps=result.steps,
                error=result.error,
                abort_reason=result.abort_reason,
            )
        )
        if agent._plugins.has("on_turn_finish"):
            await agent._plugins.observe("on_turn_finish", result)
        return result

    async def _body(self) -> TurnReason:
        agent = self.agent
        if not agent._ready:
            await agent._init(self.id)
        opening, self.opening = self.opening, []
        await agent._append_all(opening, self.id)
        await agent._append_all(agent._steering.take(), self.id)
        # assembled once per turn: a plugin whose tools change owns when they change
        self.instructions, self.tools = await agent._plugins.assemble(
            agent.instructions, agent.tools
        )
        while True:
            self.result.steps += 1
            reason = await self._step(self.result.steps)
            if reason is not None:
                return reason

    async def _step(self, number: int) -> TurnReason | None:
        agent, result = self.agent, self.result
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
        decision = await self._finish_turn(response)
        usage = response.usage or Usage()
        await agent._emit(
            StepEnd(turn_id=self.id, step=number, usage=usage, finish_reason=response.finish_reason)
        )
        joined, triggered = self.joined, self.join_trigger
        self.joined, self.join_trigger = [], False
        await agent._append_all(joined, self.id)
        verdict = None
        if agent._plugins.has("on_step_finish"):
            info = StepInfo(
                self.id, number, result.messages[first:], list(calls), results,
                response.finish_reason, usage,
            )  # fmt: skip
            verdict = await agent._plugins.step_decision(info)
        if decision == "end":
            self.ended_by_hook = True
            return "done"
        if verdict is False:
            return "done"
        more = (
            verdict is True
            or triggered
            or bool(agent._steering)
            or (bool(calls) and not all(r.terminate for r in results))
        )
        if not more and decision == "continue":
            if agent._follow_up:
                return "done"  # the follow-up turn makes the request finish_turn asked for
            more = True
        if not more:
            return "done"
        if number >= agent.max_steps:
            return "max_steps"
        await agent._append_all(agent._steering.take(), self.id)
        return None

    async def _respond(self, number: int) -> tuple[Message, ModelSettings]:
        agent = self.agent
        settings = agent.settings
        choice = agent.tool_choice if agent.tool_choice is not None else settings.tool_choice
        messages = await model_messages(agent)
        model, instructions, active = agent.model, self.instructions, agent.active_tools
        if agent._plugins.has("prepare_step"):
            # the step's own settings: a hook that edits them in place changes this step only
            settings = dataclasses.replace(settings, extra=dict(settings.extra))
            step = Step(
                self.id, number, messages, instructions, model, settings, choice, active,
                self.tools_context, self.runtime_context,
            )  # fmt: skip
            step = await agent._plugins.pipe("prepare_step", step)
            # a new context object stays in force for the rest of the turn
            self.tools_context, self.runtime_context = step.tools_context, step.runtime_context
            messages, instructions, model = step.messages, step.instructions, step.model
            settings, choice, active = step.settings, step.tool_choice, step.active_tools
        self._step_tools = self._active(active)
        choice = normalize_choice(choice)
        if choice != settings.tool_choice:
            settings = dataclasses.replace(settings, tool_choice=choice)
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
        if agent.prepare_request is not None:
            request = await maybe_await(agent.prepare_request(request)) or request
        return await self._stream(model, request), request["settings"]

    def _active(self, active: list[str] | None) -> dict[str, Tool]:
        if active is None:
            return self.tools
        names = set(active)
        return {name: tool for name, tool in self.tools.items() if name in names}

    def _declarations(self, tools: dict[str, Tool]) -> list[dict[str, Any]]:
        if self._declared[0] is not tools:
            self._declared = (tools, [tool.to_openai() for tool in tools.values()])
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
        agent = self.agent
        channel = agent.channel
        message = Message(role="assistant", content="", provider=model.provider, model=model.name)
        self._streaming = streaming = _Streaming(message)
        await agent._emit(MessageStart(turn_id=self.id, message=message))
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
                    await agent._emit(MessageUpdate(turn_id=self.id, message=message, delta=part))
            if response is None:
                raise ProviderError(f"model {model.name!r} ended its stream without a response")
        except ModelError as error:
            self._streaming = None
            streaming.settle()
            message.finish_reason = "error"
            message.error = str(error)
            await self._finish_message(message)
            await self._finish_turn(message)
            raise
        self._streaming = None
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
        self.agent._store([message], self.id)
        await self.agent._emit(MessageEnd(turn_id=self.id, message=message))

    async def _run_tools(self, response: Message) -> list[ToolResult]:
        agent = self.agent
        calls = response.tool_calls
        self._open_calls = list(calls)
        if response.finish_reason == "length":
            # truncated arguments may still parse: none of these calls is safe to run
            results = [ToolResult(c.id, c.name, LENGTH_CUT, is_error=True) for c in calls]
            for call, item in zip(calls, results, strict=True):
                await agent._emit(ToolExecutionStart(turn_id=self.id, call=call))
                await agent._emit(ToolExecutionEnd(turn_id=self.id, call=call, result=item))
        else:
            self._executor = ToolExecutor(
                self._step_tools,
                emit=agent._emit,
                turn_id=self.id,
                before_tool_call=agent._plugins.before_tool_call(agent.before_tool_call),
                after_tool_call=agent._plugins.after_tool_call(agent.after_tool_call),
                parallel=agent.tool_execution != "sequential",
                services=agent.services,
                tools_context=self.tools_context,
                validator=agent._validator,
            )
            results = await self._executor.run(calls)
        self._open_calls = []
        self._executor = None
        await self._record_results(results)
        return results

    async def _record_results(self, results: list[ToolResult]) -> None:
        self.result.tool_results.extend(results)
        await self.agent._append_all([tool_message(item) for item in results], self.id)

    async def _finish_turn(self, message: Message) -> FinishDecision | None:
        """The ``finish_turn`` decision for this response (ignored for error/aborted ones)."""
        hook = self.agent.finish_turn
        if hook is None:
            return None
        hard_exit = message.finish_reason in ("error", "aborted")
        try:
            decision = await maybe_await(hook(self.result, message))
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
        agent = self.agent
        if self.opening:
            opening, self.opening = self.opening, []
            await agent._append_all(opening, self.id)
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
                    await agent._emit(ToolExecutionEnd(turn_id=self.id, call=call, result=item))
                results.append(item)
            self._open_calls = []
            self._executor = None
            await self._record_results(results)


def _error_kind(error: Exception) -> str:
    if isinstance(error, ModelError):
        return error.kind
    for kind, name in _ERROR_KINDS.items():
        if isinstance(error, kind):
            return name
    return getattr(error, "kind", None) or type(error).__name__

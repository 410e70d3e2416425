"""The Agent: turns of steps (model call -> tool calls -> repeat), queues, abort, events.

One turn runs at a time. ``send`` queues a turn (or joins the running one); ``prompt`` sends
and waits for the turn's ``TurnResult``; ``run`` yields the turn's events. ``steer``
delivers a message after the current tool batch, ``follow_up`` when the agent would stop.
``abort`` cancels the model call and every running tool, ends the turn as ``aborted`` and
keeps the queued messages that were not delivered yet.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from agentcli.errors import AgentBusyError, ModelError, ToolChoiceViolationError
from agentcli.models.base import (
    Model,
    ModelSettings,
    ResponseDone,
    TextDelta,
    ThinkingDelta,
    Usage,
)
from agentcli.runtime.events import (
    AgentEnd,
    AgentStart,
    ErrorEvent,
    Event,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    StepEnd,
    ToolExecutionEnd,
    TurnEnd,
    TurnQueued,
    TurnStart,
)
from agentcli.runtime.messages import Message, from_openai, new_id, to_llm_messages, tool_message
from agentcli.runtime.storage import Entry, MemoryStorage, Storage
from agentcli.runtime.tools import (
    AfterToolCall,
    ArgumentValidator,
    BeforeToolCall,
    Tool,
    ToolCall,
    ToolExecutor,
    ToolResult,
)

__all__ = ["Agent", "TurnResult"]

log = logging.getLogger("agentcli.runtime")

Listener = Callable[[Event], Any]
MessageInput = str | Message | list[Message] | dict[str, Any]

LENGTH_CUT = (
    "The response was cut off by the length limit before this tool call was complete; "
    "re-issue the call with complete arguments."
)


@dataclass(slots=True)
class TurnResult:
    """What one turn did."""

    turn_id: str
    reason: str  # done | aborted | failed | max_steps
    messages: list[Message] = field(default_factory=list)
    tool_results: list[ToolResult] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    steps: int = 0
    error: str | None = None
    error_kind: str | None = None

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


@dataclass(slots=True)
class _PendingTurn:
    turn_id: str
    messages: list[Message]
    future: asyncio.Future[TurnResult]


@dataclass(slots=True)
class _TurnState:
    turn_id: str
    result: TurnResult
    streaming: Message | None = None
    executor: ToolExecutor | None = None
    open_calls: list[ToolCall] = field(default_factory=list)


def as_messages(message: MessageInput) -> list[Message]:
    """Normalise what callers pass (text, a Message, an OpenAI dict, a list) to Messages."""
    if isinstance(message, Message):
        return [message]
    if isinstance(message, str):
        return [Message(role="user", content=message)]
    if isinstance(message, dict):
        return [from_openai(message)]
    return [m for item in message for m in as_messages(item)]


class Agent:
    """An agent that runs turns against a model with tools."""

    def __init__(
        self,
        model: Model,
        *,
        instructions: str = "",
        tools: Iterable[Tool] = (),
        settings: ModelSettings | None = None,
        max_steps: int = 20,
        storage: Storage | None = None,
        tool_execution: str = "parallel",
        before_tool_call: BeforeToolCall | None = None,
        after_tool_call: AfterToolCall | None = None,
        transform_context: Callable[[list[Message]], Any] | None = None,
        convert_to_llm: Callable[[list[Message]], Any] | None = None,
        prepare_request: Callable[[dict[str, Any]], Any] | None = None,
        finish_turn: Callable[[TurnResult, Message], Any] | None = None,
        services: Any = None,
        tools_context: dict[str, Any] | None = None,
        steering_mode: str = "one-at-a-time",
        follow_up_mode: str = "one-at-a-time",
        id: str | None = None,
    ) -> None:
        self.id = id or new_id()
        self.model = model
        self.instructions = instructions
        self.tools = {tool.name: tool for tool in tools}
        self.settings = settings or ModelSettings()
        self.max_steps = max_steps
        self.storage: Storage = storage if storage is not None else MemoryStorage()
        self.tool_execution = tool_execution
        self.before_tool_call = before_tool_call
        self.after_tool_call = after_tool_call
        self.transform_context = transform_context
        self.convert_to_llm = convert_to_llm
        self.prepare_request = prepare_request
        self.finish_turn = finish_turn
        self.services = services
        self.tools_context = tools_context or {}
        self.steering_mode = steering_mode
        self.follow_up_mode = follow_up_mode
        self._history: list[Message] | None = None
        self._listeners: list[Listener] = []
        self._inbox: deque[_PendingTurn] = deque()
        self._steering: deque[Message] = deque()
        self._follow_up: deque[Message] = deque()
        self._loop_task: asyncio.Task[None] | None = None
        self._step_task: asyncio.Task[str] | None = None
        self._current: _TurnState | None = None
        self._aborting = False
        self._validator = ArgumentValidator()

    # -- history -----------------------------------------------------------------------

    @property
    def messages(self) -> list[Message]:
        """The conversation so far (loaded from storage on first use)."""
        if self._history is None:
            self._history = [
                Message.from_dict(entry.data)
                for entry in self.storage.read()
                if entry.type == "message"
            ]
        return self._history

    @property
    def is_busy(self) -> bool:
        """True while a turn runs or is queued."""
        return self._loop_task is not None and not self._loop_task.done()

    def _record(self, kind: str, data: Any, turn_id: str | None) -> None:
        self.storage.append(Entry(type=kind, data=data, turn_id=turn_id))

    async def _append(self, message: Message, turn_id: str | None) -> None:
        self.messages.append(message)
        self._record("message", message.to_dict(), turn_id)
        if self._current is not None and turn_id == self._current.turn_id:
            self._current.result.messages.append(message)
        await self._emit(MessageStart(turn_id=turn_id, message=message))
        await self._emit(MessageEnd(turn_id=turn_id, message=message))

    # -- events ------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(event)`` for every event (sync or async); returns unsubscribe."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    async def _emit(self, event: Event) -> None:
        for listener in list(self._listeners):
            try:
                outcome = listener(event)
                if inspect.isawaitable(outcome):
                    await outcome
            except Exception:  # a failing subscriber must never break the loop
                log.debug("event listener failed", exc_info=True)

    # -- sending -----------------------------------------------------------------------

    def send(self, message: MessageInput, *, if_busy: str = "defer") -> str:
        """Queue a turn for ``message`` and return its id (see ``if_busy`` for a busy agent:
        ``defer`` queues a new turn, ``join`` adds it to the running turn, ``reject`` raises
        ``AgentBusyError``)."""
        return self._submit(as_messages(message), if_busy).turn_id

    def _submit(self, messages: list[Message], if_busy: str) -> _PendingTurn:
        if if_busy not in ("defer", "join", "reject"):
            raise ValueError(f"if_busy must be defer, join or reject, not {if_busy!r}")
        future: asyncio.Future[TurnResult] = asyncio.get_running_loop().create_future()
        if self.is_busy and if_busy == "reject":
            raise AgentBusyError("the agent is running a turn", hint="use if_busy='defer'")
        if self.is_busy and if_busy == "join" and self._current is not None:
            self._steering.extend(messages)
            future.set_result(self._current.result)
            return _PendingTurn(self._current.turn_id, messages, future)
        pending = _PendingTurn(new_id(), messages, future)
        self._inbox.append(pending)
        if self.is_busy:
            self._record("event", {"type": "turn_queued"}, pending.turn_id)
            asyncio.get_running_loop().create_task(self._emit(TurnQueued(turn_id=pending.turn_id)))
        else:
            self._loop_task = asyncio.get_running_loop().create_task(self._drain())
        return pending

    async def prompt(self, message: MessageInput) -> TurnResult:
        """Run a turn for ``message`` and return its result (cancelling this call aborts it)."""
        pending = self._submit(as_messages(message), "defer")
        try:
            return await asyncio.shield(pending.future)
        except asyncio.CancelledError:
            if self._current is not None and self._current.turn_id == pending.turn_id:
                self.abort()
            elif pending in self._inbox:
                self._inbox.remove(pending)
            raise

    async def run(self, message: MessageInput) -> AsyncIterator[Event]:
        """Yield the events of the turn that answers ``message``, ending after its
        ``turn_end`` (and the ``agent_end`` that follows it, if any)."""
        queue: asyncio.Queue[Event] = asyncio.Queue()
        unsubscribe = self.subscribe(queue.put_nowait)
        try:
            pending = self._submit(as_messages(message), "defer")
            started = ended = False
            held: Event | None = None
            while True:
                event = await queue.get()
                if ended:
                    # the event right after our turn_end is agent_end or the next turn_start
                    if isinstance(event, AgentEnd):
                        yield event
                    return
                if not started:
                    if isinstance(event, AgentStart):
                        held = event
                    elif isinstance(event, TurnStart) and event.turn_id == pending.turn_id:
                        started = True
                        if held is not None:
                            yield held
                        yield event
                    else:
                        held = None
                    continue
                if event.turn_id == pending.turn_id:
                    yield event
                ended = isinstance(event, TurnEnd) and event.turn_id == pending.turn_id
        finally:
            unsubscribe()

    def steer(self, message: MessageInput) -> None:
        """Deliver ``message`` after the current tool batch (or at the next turn's start)."""
        self._steering.extend(as_messages(message))

    def follow_up(self, message: MessageInput) -> None:
        """Deliver ``message`` when the agent would otherwise stop."""
        self._follow_up.extend(as_messages(message))

    def abort(self) -> None:
        """Cancel the running model call and tools; the turn ends as ``aborted``."""
        if self._step_task is not None and not self._step_task.done():
            self._aborting = True
            self._step_task.cancel()

    def clear(self) -> None:
        """Forget the conversation (storage included)."""
        self.storage.clear()
        self._history = []

    async def wait(self) -> None:
        """Return when the agent is idle."""
        while self._loop_task is not None and not self._loop_task.done():
            await asyncio.shield(self._loop_task)

    # -- the loop ----------------------------------------------------------------------

    async def _drain(self) -> None:
        await self._emit(AgentStart())
        reason = "done"
        try:
            while self._inbox:
                pending = self._inbox.popleft()
                result = await self._run_turn(pending.turn_id, pending.messages)
                reason = result.reason
                if not pending.future.done():
                    pending.future.set_result(result)
                if result.reason == "aborted":
                    continue
                if not self._inbox and self._follow_up:
                    self._inbox.append(self._follow_up_turn())
        finally:
            for pending in self._inbox:
                if not pending.future.done():
                    pending.future.cancel()
            self._inbox.clear()
            await self._emit(AgentEnd(reason=reason))

    def _follow_up_turn(self) -> _PendingTurn:
        messages = _take(self._follow_up, self.follow_up_mode)
        future: asyncio.Future[TurnResult] = asyncio.get_running_loop().create_future()
        return _PendingTurn(new_id(), messages, future)

    async def _run_turn(self, turn_id: str, opening: list[Message]) -> TurnResult:
        state = _TurnState(turn_id, TurnResult(turn_id=turn_id, reason="done"))
        self._current = state
        self._record("event", {"type": "turn_start"}, turn_id)
        await self._emit(TurnStart(turn_id=turn_id))
        for message in opening:
            await self._append(message, turn_id)
        if self._steering:
            for message in _take(self._steering, "all"):
                await self._append(message, turn_id)
        self._aborting = False
        self._step_task = asyncio.get_running_loop().create_task(self._steps(state))
        try:
            state.result.reason = await self._step_task
        except asyncio.CancelledError:
            state.result.reason = "aborted"
            await self._close_aborted(state)
            if not self._aborting:
                raise
        except ModelError as error:
            state.result.reason = "failed"
            state.result.error = str(error)
            state.result.error_kind = error.kind
        except ToolChoiceViolationError as error:
            state.result.reason = "failed"
            state.result.error = str(error)
            state.result.error_kind = "tool_choice"
        except Exception as error:  # a hook or plugin bug fails the turn, not the agent
            await self._close_aborted(state)
            state.result.reason = "failed"
            state.result.error = str(error) or type(error).__name__
            state.result.error_kind = getattr(error, "kind", None) or type(error).__name__
        finally:
            self._step_task = None
            self._current = None
        result = state.result
        if result.error:
            await self._emit(
                ErrorEvent(turn_id=turn_id, error=result.error, kind=result.error_kind or "")
            )
        self._record("event", {"type": "turn_end", "reason": result.reason}, turn_id)
        last = next((m for m in reversed(result.messages) if m.role == "assistant"), None)
        await self._emit(
            TurnEnd(
                turn_id=turn_id,
                reason=result.reason,
                message=last,
                tool_results=list(result.tool_results),
                usage=result.usage,
                steps=result.steps,
                error=result.error,
            )
        )
        return result

    async def _close_aborted(self, state: _TurnState) -> None:
        """Keep the transcript well formed after an abort: end the streaming message and
        give every started tool call a result."""
        if state.streaming is not None:
            message, state.streaming = state.streaming, None
            message.finish_reason = "aborted"
            message.tool_calls = []
            self.messages.append(message)
            self._record("message", message.to_dict(), state.turn_id)
            state.result.messages.append(message)
            await self._emit(MessageEnd(turn_id=state.turn_id, message=message))
        if state.open_calls:
            finished = state.executor.finished if state.executor else {}
            for call in state.open_calls:
                result = finished.get(call.id)
                if result is None:
                    result = ToolResult(
                        call.id, call.name, "aborted before the tool finished", True
                    )
                    await self._emit(
                        ToolExecutionEnd(turn_id=state.turn_id, call=call, result=result)
                    )
                state.result.tool_results.append(result)
                await self._append(tool_message(result), state.turn_id)
            state.open_calls = []

    async def _steps(self, state: _TurnState) -> str:
        result = state.result
        while True:
            result.steps += 1
            response = await self._model_step(state)
            calls = response.tool_calls
            results: list[ToolResult] = []
            if calls:
                results = await self._run_tools(state, response, calls)
            await self._emit(
                StepEnd(
                    turn_id=state.turn_id,
                    step=result.steps,
                    usage=response.usage or Usage(),
                    finish_reason=response.finish_reason,
                )
            )
            decision = None
            if self.finish_turn is not None:
                decision = await _maybe_await(self.finish_turn(result, response))
            if decision == "end":
                return "done"
            wants_more = bool(self._steering) or decision == "continue"
            if calls and not all(r.terminate for r in results):
                wants_more = True
            if not wants_more:
                return "done"
            if result.steps >= self.max_steps:
                return "max_steps"
            if self._steering:
                for message in _take(self._steering, self.steering_mode):
                    await self._append(message, state.turn_id)

    async def _model_step(self, state: _TurnState) -> Message:
        history = self.messages
        if self.transform_context is not None:
            history = await _maybe_await(self.transform_context(list(history)))
        convert = self.convert_to_llm or to_llm_messages
        llm_messages = await _maybe_await(convert(history))
        if self.instructions:
            llm_messages = [{"role": "system", "content": self.instructions}, *llm_messages]
        request: dict[str, Any] = {
            "messages": llm_messages,
            "tools": [tool.to_openai() for tool in self.tools.values()],
            "settings": self.settings,
        }
        if self.prepare_request is not None:
            request = await _maybe_await(self.prepare_request(request)) or request
        model = self.model
        message = Message(role="assistant", content="", provider=model.provider, model=model.name)
        state.streaming = message
        await self._emit(MessageStart(turn_id=state.turn_id, message=message))
        try:
            response = None
            async for part in model.stream(
                request["messages"], request["tools"], request["settings"]
            ):
                if isinstance(part, TextDelta):
                    message.content += part.text
                elif isinstance(part, ThinkingDelta):
                    message.thinking += part.text
                elif isinstance(part, ResponseDone):
                    response = part.response
                    continue
                await self._emit(MessageUpdate(turn_id=state.turn_id, message=message, delta=part))
            if response is None:
                from agentcli.errors import ProviderError

                raise ProviderError(f"model {model.name!r} ended its stream without a response")
        except ModelError as error:
            state.streaming = None
            message.finish_reason = "error"
            message.error = str(error)
            await self._finish_message(state, message)
            raise
        state.streaming = None
        message.content = response.content
        message.thinking = response.thinking or message.thinking
        message.finish_reason = response.finish_reason
        message.usage = response.usage
        message.provider = response.provider or message.provider
        message.model = response.model or message.model
        message.tool_calls = [
            ToolCall(c.id or new_id(), c.name, dict(c.arguments), c.arguments_error)
            for c in response.tool_calls
        ]
        state.result.usage = state.result.usage + response.usage
        await self._finish_message(state, message)
        _check_tool_choice(request["settings"], message)
        return message

    async def _finish_message(self, state: _TurnState, message: Message) -> None:
        self.messages.append(message)
        self._record("message", message.to_dict(), state.turn_id)
        state.result.messages.append(message)
        await self._emit(MessageEnd(turn_id=state.turn_id, message=message))

    async def _run_tools(
        self, state: _TurnState, response: Message, calls: list[ToolCall]
    ) -> list[ToolResult]:
        state.open_calls = list(calls)
        if response.finish_reason == "length":
            results = [ToolResult(c.id, c.name, LENGTH_CUT, is_error=True) for c in calls]
        else:
            state.executor = ToolExecutor(
                self.tools,
                emit=self._emit,
                turn_id=state.turn_id,
                before_tool_call=self.before_tool_call,
                after_tool_call=self.after_tool_call,
                parallel=self.tool_execution != "sequential",
                services=self.services,
                tools_context=self.tools_context,
                validator=self._validator,
            )
            results = await state.executor.run(calls)
        state.open_calls = []
        state.executor = None
        for item in results:
            state.result.tool_results.append(item)
            await self._append(tool_message(item), state.turn_id)
        return results


def _take(queue: deque[Message], mode: str) -> list[Message]:
    if mode == "all":
        items = list(queue)
        queue.clear()
        return items
    return [queue.popleft()] if queue else []


def _check_tool_choice(settings: ModelSettings, message: Message) -> None:
    choice = settings.tool_choice
    if choice in (None, "auto", "none"):
        return
    names = {call.name for call in message.tool_calls}
    if choice == "required" and not names:
        raise ToolChoiceViolationError("tool_choice is 'required' but the model called no tool")
    if isinstance(choice, dict):
        wanted = (choice.get("function") or {}).get("name") or choice.get("name")
        if wanted and wanted not in names:
            raise ToolChoiceViolationError(
                f"tool_choice requires {wanted!r} but the model called {sorted(names) or 'nothing'}"
            )


async def _maybe_await(value: Awaitable[Any] | Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value

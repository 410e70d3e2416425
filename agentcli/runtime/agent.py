"""The Agent: one turn at a time, fed by sends, queues and the pending wake.

* ``send`` submits a turn (``if_busy``: ``defer`` queues it, ``join`` adds the message to the
  running turn's next step, ``reject`` raises ``AgentBusyError``); ``trigger=False`` only
  records the message. ``prompt`` sends and returns the ``TurnResult``; ``run`` yields the
  turn's events. ``continue_`` starts a turn or merges into the single pending wake.
* ``steer`` delivers after the current tool batch, ``follow_up`` when the agent would stop.
* ``abort`` cancels the running turn and keeps everything queued; ``interrupt`` also drops
  the queued turns, the queues and the pending wake; ``stop`` interrupts and stops plugins.

Turns live in ``turns.py``, the queue pump in ``pump.py``; both work on the ``AgentCore``
(core.py) this facade owns, through its public surface. Options are grouped in an
``AgentConfig`` (config.py); the flat keyword arguments still work.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, Unpack, get_args

from agentcli.errors import AgentBusyError, AgentRuntimeError, AgentWaitTimeout
from agentcli.models.base import Model, ModelSettings
from agentcli.runtime.channel import AGENT, Channel, Listener
from agentcli.runtime.config import (
    DEFAULT_MAX_STEPS,
    AgentConfig,
    AgentOptions,
    ApiKeyFunction,
    Option,
    ThinkingLevel,
    ToolExecution,
    build_config,
)
from agentcli.runtime.core import AgentCore, tool_table
from agentcli.runtime.events import Event, MessageEnd, MessageStart, TurnQueued, turn_events
from agentcli.runtime.messages import Message, MessageInput, as_messages, image_parts, new_id
from agentcli.runtime.pump import drain, settle, wake_opening
from agentcli.runtime.queues import PendingTurn, QueueMode, Wake
from agentcli.runtime.state import AgentState
from agentcli.runtime.storage import MemoryStorage, Storage
from agentcli.runtime.tools import AfterToolCall, BeforeToolCall, Tool
from agentcli.runtime.turns import LENGTH_CUT, TurnResult

__all__ = [
    "DEFAULT_MAX_STEPS",
    "LENGTH_CUT",
    "Agent",
    "IfBusy",
    "ToolExecution",
    "TurnResult",
    "as_messages",
]

# what ``send``/``run`` do with input that arrives while a turn runs
IfBusy = Literal["defer", "join", "reject"]
_IF_BUSY: tuple[IfBusy, ...] = get_args(IfBusy)


class Agent:
    """An agent that runs turns against a model with tools.

    ``Agent(model, instructions=..., tools=[...], settings=..., storage=..., plugins=[...],
    initial_state=..., id=..., config=AgentConfig(...), **options)``: the options are the
    fields of the config's groups by their flat names (``tool_execution``,
    ``before_tool_call``, ``finish_turn``, ``thinking_level``, ... -- ``AgentOptions``), and
    each is also an attribute of the agent that reads and writes its config.
    """

    # the grouped options as attributes (agent.finish_turn is agent.config.loop.finish_turn)
    tool_execution: Option[ToolExecution] = Option("tool_execution")
    before_tool_call: Option[BeforeToolCall | None] = Option("before_tool_call", "_refresh")
    after_tool_call: Option[AfterToolCall | None] = Option("after_tool_call", "_refresh")
    services: Option[Any] = Option("services")
    tools_context: Option[dict[str, Any]] = Option("tools_context")
    tool_choice: Option[Any] = Option("tool_choice")
    active_tools: Option[list[str] | None] = Option("active_tools")
    tool_callers: Option[dict[str, list[str]]] = Option("tool_callers")
    max_steps: Option[int] = Option("max_steps")
    transform_context: Option[Callable[[list[Message]], Any] | None] = Option(
        "transform_context", "_refresh"
    )
    convert_to_llm: Option[Callable[[list[Message]], Any] | None] = Option(
        "convert_to_llm", "_refresh"
    )
    prepare_request: Option[Callable[[dict[str, Any]], Any] | None] = Option(
        "prepare_request", "_refresh"
    )
    finish_turn: Option[Callable[[TurnResult, Message], Any] | None] = Option(
        "finish_turn", "_refresh"
    )
    runtime_context: Option[dict[str, Any]] = Option("runtime_context")
    announce_tools: Option[bool] = Option("announce_tools")
    thinking_level: Option[ThinkingLevel] = Option("thinking_level")
    thinking_budgets: Option[dict[str, int]] = Option("thinking_budgets")
    session_id: Option[str | None] = Option("session_id")
    get_api_key: Option[ApiKeyFunction | None] = Option("get_api_key")

    def __init__(
        self,
        model: Model,
        *,
        instructions: str = "",
        tools: Iterable[Tool] = (),
        settings: ModelSettings | None = None,
        storage: Storage | None = None,
        plugins: Iterable[object] = (),
        initial_state: Mapping[str, Any] | None = None,
        id: str | None = None,
        config: AgentConfig | None = None,
        **options: Unpack[AgentOptions],
    ) -> None:
        self.id = id or new_id()
        self.config = build_config(config, options)
        self._initial_state = dict(initial_state) if initial_state else None
        self._core = AgentCore(
            config=self.config,
            model=model,
            instructions=instructions,
            tools=tool_table(tools),
            settings=settings or ModelSettings(),
            storage=storage if storage is not None else MemoryStorage(),
            plugins=plugins,
            initial_state=initial_state,
        )
        self._core.adopt(self)
        self._stopping = False

    def _refresh(self) -> None:
        """A callback changed: gather the plugin hooks again."""
        self._core.plugins.refresh()

    # -- what the agent holds ----------------------------------------------------------

    @property
    def model(self) -> Model:
        """The model of the next step."""
        return self._core.model

    @model.setter
    def model(self, model: Model) -> None:
        self._core.model = model

    @property
    def instructions(self) -> str:
        """The system prompt, joined with the plugins' instructions."""
        return self._core.instructions

    @instructions.setter
    def instructions(self, text: str) -> None:
        self._core.instructions = text

    @property
    def tools(self) -> dict[str, Tool]:
        """The agent's tools by name (plugins add theirs per turn)."""
        return self._core.tools

    @tools.setter
    def tools(self, tools: Mapping[str, Tool] | Iterable[Tool]) -> None:
        self._core.tools = dict(tools) if isinstance(tools, Mapping) else tool_table(tools)

    @property
    def settings(self) -> ModelSettings:
        """Sampling and limits for every step."""
        return self._core.settings

    @settings.setter
    def settings(self, settings: ModelSettings) -> None:
        self._core.settings = settings

    @property
    def storage(self) -> Storage:
        """Where the entries go."""
        return self._core.storage

    @property
    def channel(self) -> Channel:
        """The agent's pub-sub: ``agent`` (events), ``stream`` (model parts), ``state``."""
        return self._core.channel

    @property
    def messages(self) -> list[Message]:
        """The conversation so far (loaded from storage on first use)."""
        return self._core.messages

    @messages.setter
    def messages(self, messages: Sequence[Message]) -> None:
        """Replace the conversation (seed 004's ``state.messages = [...]``): storage is
        rewritten with the new messages."""
        self._check_idle("replace the messages")
        state = self.state.get()
        self._core.forget()
        self._core.store(list(messages), None)
        if state:
            self._core.record("state", state, None)

    @property
    def state(self) -> AgentState:
        """The persistent state (restored from storage, else ``initial_state``)."""
        if self._core.history is None:
            self._core.load()
        return self._core.state

    @property
    def plugins(self) -> tuple[object, ...]:
        """The plugins in the order their hooks run (the built-in callbacks plugin, which
        runs first, is not listed)."""
        return self._core.plugins.plugins

    @property
    def is_busy(self) -> bool:
        """True while a turn runs or is queued."""
        return self._core.busy

    @property
    def is_streaming(self) -> bool:
        """True from a send until the run has settled, awaited ``agent_end`` listeners
        included (seed 004's ``state.isStreaming``)."""
        return self._core.busy

    @property
    def streaming_message(self) -> Message | None:
        """The assistant message being streamed, if any (its text is set at its end)."""
        return self._core.streaming_message

    @property
    def pending_tool_calls(self) -> frozenset[str]:
        """The ids of the tool calls started and not finalized yet."""
        return frozenset(self._core.pending_tool_calls)

    @property
    def error_message(self) -> str | None:
        """Why the last turn failed (None once a turn starts again)."""
        return self._core.error_message

    @property
    def active_turn_id(self) -> str | None:
        """The id of the running turn, if any."""
        return self._core.active_turn_id

    @property
    def steering_mode(self) -> QueueMode:
        """How many steering messages join at once: ``one-at-a-time`` or ``all``."""
        return self._core.steering.mode

    @steering_mode.setter
    def steering_mode(self, mode: QueueMode) -> None:
        self._core.steering.mode = mode
        self.config.queues.steering_mode = mode

    @property
    def follow_up_mode(self) -> QueueMode:
        """How many follow-up messages open a turn: ``one-at-a-time`` or ``all``."""
        return self._core.follow_ups.mode

    @follow_up_mode.setter
    def follow_up_mode(self, mode: QueueMode) -> None:
        self._core.follow_ups.mode = mode
        self.config.queues.follow_up_mode = mode

    # -- events ------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(event)`` for every event (sync or async); returns unsubscribe."""
        return self._core.channel.subscribe(AGENT, listener)

    # -- sending -----------------------------------------------------------------------

    def send(
        self, message: MessageInput, *, if_busy: IfBusy = "defer", trigger: bool = True
    ) -> str | None:
        """Submit ``message`` and return its turn id. While a turn runs, ``if_busy`` decides:
        ``defer`` queues a new turn, ``join`` adds it to the running turn's next step,
        ``reject`` raises ``AgentBusyError``. ``trigger=False`` records it without asking
        for a turn (a join is seen by the next step, a defer by the next turn) -> None."""
        self._check_open()
        if if_busy not in _IF_BUSY:
            raise ValueError(f"if_busy must be defer, join or reject, not {if_busy!r}")
        messages = as_messages(message)
        if trigger:
            return self._submit(messages, if_busy).turn_id
        core = self._core
        if not core.busy:
            core.store(messages, None)
            for item in messages:
                core.emit_nowait(MessageStart(message=item))
                core.emit_nowait(MessageEnd(message=item))
        elif if_busy == "reject":
            raise AgentBusyError("the agent is running a turn", hint="use if_busy='defer'")
        elif if_busy == "join" and core.current is not None and not core.current.closing:
            core.current.join(messages, trigger=False)
        else:
            core.deferred.extend(messages)
        return None

    def _submit(self, messages: list[Message], if_busy: IfBusy) -> PendingTurn:
        core = self._core
        busy = core.busy
        if busy and if_busy == "reject":
            raise AgentBusyError("the agent is running a turn", hint="use if_busy='defer'")
        current = core.current
        if busy and if_busy == "join" and current is not None and not current.closing:
            current.join(messages, trigger=True)
            return PendingTurn(current.id, messages, joined=True)
        loop = asyncio.get_running_loop()
        pending = PendingTurn(new_id(), messages, loop.create_future())
        core.inbox.append(pending)
        if busy:
            core.record("event", {"type": "turn_queued"}, pending.turn_id)
            core.emit_nowait(TurnQueued(turn_id=pending.turn_id))
        else:
            core.loop_task = loop.create_task(drain(core))
        return pending

    async def prompt(
        self, message: MessageInput, images: Sequence[Mapping[str, Any]] | None = None
    ) -> TurnResult:
        """Run a turn for ``message`` and return its result once the run has settled
        (awaited ``agent_end`` listeners included); ``images`` go with a text prompt as
        image parts. Cancelling this call aborts the turn."""
        self._check_open()
        if images:
            if not isinstance(message, str):
                raise TypeError("images= goes with a text prompt: prompt('...', images=[...])")
            message = Message(role="user", content=image_parts(message, images))
        pending = self._submit(as_messages(message), "defer")
        assert pending.future is not None
        core = self._core
        try:
            return await asyncio.shield(pending.future)
        except asyncio.CancelledError:
            if core.current is not None and core.current.id == pending.turn_id:
                self.abort()
            elif pending in core.inbox:
                core.inbox.remove(pending)
            raise

    async def run(
        self, message: MessageInput, *, if_busy: IfBusy = "defer"
    ) -> AsyncIterator[Event]:
        """Yield the events of the turn that answers ``message`` (from now on, for a join),
        ending after its ``turn_end`` and the ``agent_end`` right after it, if any."""
        queue: asyncio.Queue[Event] = asyncio.Queue()
        unsubscribe = self.subscribe(queue.put_nowait)
        try:
            self._check_open()
            if if_busy not in _IF_BUSY:
                raise ValueError(f"if_busy must be defer, join or reject, not {if_busy!r}")
            pending = self._submit(as_messages(message), if_busy)
            async for event in turn_events(queue, pending.turn_id, started=pending.joined):
                yield event
        finally:
            unsubscribe()

    def continue_(self, prompt: str | None = None) -> str | None:
        """Request a turn: start one now (returning its id; ``prompt`` becomes its opening
        user message), or, while busy, merge into the single pending wake -> None."""
        self._check_open()
        core = self._core
        if core.busy:
            if core.wake is None:
                core.wake = Wake()
            if prompt:
                core.wake.prompts.append(prompt)
            return None
        opening = wake_opening(core, Wake([prompt] if prompt else []))
        if opening is None:
            raise AgentRuntimeError(
                "nothing to continue: the conversation is empty",
                hint="pass a prompt: agent.continue_('...')",
            )
        return self._submit(opening, "defer").turn_id

    def steer(self, message: MessageInput) -> None:
        """Deliver ``message`` after the current tool batch (or at the next turn's start)."""
        self._core.steering.push(as_messages(message))

    def follow_up(self, message: MessageInput) -> None:
        """Deliver ``message`` when the agent would otherwise stop."""
        self._core.follow_ups.push(as_messages(message))

    def peek_queued_messages(self) -> list[Message]:
        """The next queued batch (steering first, else follow-up), without taking it."""
        return self._core.steering.peek() or self._core.follow_ups.peek()

    def has_queued_messages(self) -> bool:
        """Whether a steering or follow-up message is waiting."""
        return bool(self._core.steering) or bool(self._core.follow_ups)

    def clear_steering_queue(self) -> None:
        """Drop the queued steering messages."""
        self._core.steering.clear()

    def clear_follow_up_queue(self) -> None:
        """Drop the queued follow-up messages."""
        self._core.follow_ups.clear()

    def clear_all_queues(self) -> None:
        """Drop every queued steering and follow-up message."""
        self._core.steering.clear()
        self._core.follow_ups.clear()

    # -- control -----------------------------------------------------------------------

    def abort(self) -> None:
        """Cancel the running model call and tools (the turn ends as ``aborted``); queued
        turns, messages and the pending wake are kept."""
        if self._core.current is not None:
            self._core.current.abort()

    def interrupt(self, reason: str | None = None) -> None:
        """Abort the running turn and drop everything queued: deferred turns (their
        ``prompt`` calls return an aborted result), steering, follow-ups, the pending wake."""
        core = self._core
        core.wake = None
        self.clear_all_queues()
        while core.inbox:
            settle(core.inbox.popleft(), reason)
        if core.current is not None:
            core.current.abort(reason or "interrupted")

    async def stop(self) -> None:
        """Interrupt, wait until idle, then stop the plugins in reverse order."""
        if self._stopping:
            return
        self._stopping = True
        try:
            self.interrupt("agent stopped")
            await self.wait()
            if self._core.ready:
                self._core.ready = False
                await self._core.plugins.stop()
        finally:
            self._stopping = False

    async def init(self) -> None:
        """Restore history and state, report repaired tool results, run plugin ``init``
        hooks (lazily done by the first turn)."""
        await self._core.ensure_ready(None)

    async def wait(self, timeout: float | None = None) -> None:
        """Return when the agent is idle (and everything recorded is in storage). With
        ``timeout`` (seconds), raise ``AgentWaitTimeout`` if it is still busy by then;
        cancelling the wait (or its timing out) leaves the running turn alone."""
        core = self._core
        try:
            async with asyncio.timeout(timeout):
                while core.loop_task is not None and not core.loop_task.done():
                    await asyncio.shield(core.loop_task)
                await core.plugins.flush()
        except TimeoutError:
            raise AgentWaitTimeout(
                f"the agent was still busy after {timeout:g}s",
                hint="wait longer, or abort() / interrupt() the running turn",
            ) from None

    def clear(self) -> None:
        """Forget the conversation (storage included); ``state`` is kept."""
        self._check_idle("clear")
        state = self.state.get()
        self._core.forget()
        if state:
            self._core.record("state", state, None)

    def reset(self) -> None:
        """Start over (seed 004): drop the conversation (storage included), the queues, the
        pending wake and the last error; ``state`` goes back to ``initial_state``."""
        self._check_idle("reset")
        core = self._core
        core.wake = None
        core.deferred = []
        self.clear_all_queues()
        core.forget()
        core.error_message = None
        core.streaming_message = None
        core.state.set(self._initial_state or {})

    def set_model(self, model: Model) -> None:
        """Use ``model`` from the next step on (each response records its provider/model)."""
        self._core.model = model

    def _check_idle(self, what: str) -> None:
        if self.is_busy:
            raise AgentBusyError(f"cannot {what} while a turn runs", hint="await agent.wait()")

    def _check_open(self) -> None:
        if self._stopping:
            raise AgentRuntimeError("Agent is stopping", hint="wait for stop() to finish")

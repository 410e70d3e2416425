"""The Agent: one turn at a time, fed by sends, queues and the pending wake.

* ``send`` submits a turn (``if_busy``: ``defer`` queues it, ``join`` adds the message to the
  running turn's next step, ``reject`` raises ``AgentBusyError``); ``trigger=False`` only
  records the message. ``prompt`` sends and returns the ``TurnResult``; ``run`` yields the
  turn's events. ``continue_`` starts a turn or merges into the single pending wake.
* ``steer`` delivers after the current tool batch, ``follow_up`` when the agent would stop.
* ``abort`` cancels the running turn and keeps everything queued; ``interrupt`` also drops
  the queued turns, the queues and the pending wake; ``stop`` interrupts and stops plugins.

Turns themselves live in ``turns.py``; the model context pipeline in ``context.py``.
"""

from __future__ import annotations

import asyncio
import weakref
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from typing import Any, Literal, get_args

from agentcli.errors import AgentBusyError, AgentRuntimeError
from agentcli.models.base import Model, ModelSettings
from agentcli.runtime.channel import AGENT, STATE, Channel, Listener, deliver
from agentcli.runtime.choice import ToolChoice
from agentcli.runtime.events import (
    Event,
    MessageEnd,
    MessageStart,
    ToolResultRepaired,
    TurnQueued,
    turn_events,
)
from agentcli.runtime.history import load_history
from agentcli.runtime.messages import Message, MessageInput, as_messages, new_id
from agentcli.runtime.plugins import PluginSet
from agentcli.runtime.pump import drain, settle, wake_opening
from agentcli.runtime.queues import MessageQueue, PendingTurn, QueueMode, Wake
from agentcli.runtime.state import AgentState
from agentcli.runtime.storage import Entry, EntryType, MemoryStorage, Storage
from agentcli.runtime.tools import AfterToolCall, ArgumentValidator, BeforeToolCall, Tool, ToolCall
from agentcli.runtime.turns import LENGTH_CUT, Turn, TurnResult

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
ToolExecution = Literal["parallel", "sequential"]
DEFAULT_MAX_STEPS = 20  # model calls per turn unless the agent is given another limit


class Agent:
    """An agent that runs turns against a model with tools.

    Options beyond the model, instructions, tools and settings: ``max_steps`` per turn,
    ``storage`` (memory by default), ``tool_execution`` (``parallel`` | ``sequential``),
    the tool hooks ``before_tool_call`` / ``after_tool_call``, the turn-control hooks
    ``transform_context``, ``convert_to_llm``, ``prepare_request``, ``finish_turn``,
    ``services`` (the ``ctx`` tools receive), ``tools_context``, ``runtime_context``,
    ``tool_choice``, ``active_tools``, ``plugins``, ``initial_state`` and the queue modes.
    """

    def __init__(
        self,
        model: Model,
        *,
        instructions: str = "",
        tools: Iterable[Tool] = (),
        settings: ModelSettings | None = None,
        max_steps: int = DEFAULT_MAX_STEPS,
        storage: Storage | None = None,
        tool_execution: ToolExecution = "parallel",
        before_tool_call: BeforeToolCall | None = None,
        after_tool_call: AfterToolCall | None = None,
        transform_context: Callable[[list[Message]], Any] | None = None,
        convert_to_llm: Callable[[list[Message]], Any] | None = None,
        prepare_request: Callable[[dict[str, Any]], Any] | None = None,
        finish_turn: Callable[[TurnResult, Message], Any] | None = None,
        services: Any = None,
        tools_context: dict[str, Any] | None = None,
        steering_mode: QueueMode = "one-at-a-time",
        follow_up_mode: QueueMode = "one-at-a-time",
        id: str | None = None,
        plugins: Iterable[object] = (),
        initial_state: Mapping[str, Any] | None = None,
        runtime_context: dict[str, Any] | None = None,
        tool_choice: ToolChoice = None,
        active_tools: Iterable[str] | None = None,
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
        self.runtime_context = runtime_context or {}
        self.tool_choice = tool_choice
        self.active_tools = list(active_tools) if active_tools is not None else None
        self.channel = Channel()
        self._plugins = PluginSet(plugins)
        record = weakref.WeakMethod(self._record_state)  # no agent <-> state cycle

        def on_change(value: dict[str, Any]) -> None:
            method = record()
            if method is not None:  # once the agent is gone there is nothing to record in
                method(value)

        self._state = AgentState(initial_state, on_change)
        self._steering = MessageQueue(steering_mode)
        self._follow_up = MessageQueue(follow_up_mode)
        self._inbox: deque[PendingTurn] = deque()
        self._deferred: list[Message] = []  # trigger=False input waiting for the turn to end
        self._wake: Wake | None = None
        self._loop_task: asyncio.Task[None] | None = None
        self._current: Turn | None = None
        self._history: list[Message] | None = None
        self._repaired: list[ToolCall] = []
        self._ready = False
        self._stopping = False
        self._init_lock = asyncio.Lock()
        self._validator = ArgumentValidator()

    # -- what the agent holds ----------------------------------------------------------

    @property
    def messages(self) -> list[Message]:
        """The conversation so far (loaded from storage on first use)."""
        if self._history is None:
            self._load()
        assert self._history is not None
        return self._history

    @property
    def state(self) -> AgentState:
        """The persistent state (restored from storage, else ``initial_state``)."""
        if self._history is None:
            self._load()
        return self._state

    @property
    def plugins(self) -> tuple[object, ...]:
        """The plugins in the order their hooks run."""
        return self._plugins.plugins

    @property
    def is_busy(self) -> bool:
        """True while a turn runs or is queued."""
        return self._loop_task is not None and not self._loop_task.done()

    @property
    def active_turn_id(self) -> str | None:
        """The id of the running turn, if any."""
        return self._current.id if self._current is not None else None

    @property
    def steering_mode(self) -> QueueMode:
        """How many steering messages join at once: ``one-at-a-time`` or ``all``."""
        return self._steering.mode

    @steering_mode.setter
    def steering_mode(self, mode: QueueMode) -> None:
        self._steering.mode = mode

    @property
    def follow_up_mode(self) -> QueueMode:
        """How many follow-up messages open a turn: ``one-at-a-time`` or ``all``."""
        return self._follow_up.mode

    @follow_up_mode.setter
    def follow_up_mode(self, mode: QueueMode) -> None:
        self._follow_up.mode = mode

    def _load(self) -> None:
        loaded = load_history(self.storage.read())
        self._history = loaded.messages
        self._repaired = loaded.repaired
        if loaded.state is not None:
            self._state.restore(loaded.state)

    def _record(self, kind: EntryType, data: Any, turn_id: str | None) -> None:
        self._plugins.record(Entry(type=kind, data=data, turn_id=turn_id), self.storage)

    def _record_state(self, value: dict[str, Any]) -> None:
        self._record("state", value, self.active_turn_id)
        self.channel.emit_nowait(STATE, dict(value))

    def _store(self, messages: list[Message], turn_id: str | None) -> None:
        history = self.messages
        current = self._current
        in_turn = current.result.messages if current and current.id == turn_id else None
        for message in messages:
            history.append(message)
            self._record("message", message.to_dict(), turn_id)
            if in_turn is not None:
                in_turn.append(message)

    async def _append_all(self, messages: list[Message], turn_id: str | None) -> None:
        if not messages:
            return
        self._store(messages, turn_id)  # all recorded before any listener runs
        if self.channel.has(AGENT):
            for message in messages:
                await self._emit(MessageStart(turn_id=turn_id, message=message))
                await self._emit(MessageEnd(turn_id=turn_id, message=message))

    # -- events ------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(event)`` for every event (sync or async); returns unsubscribe."""
        return self.channel.subscribe(AGENT, listener)

    async def _emit(self, event: Event) -> None:
        listeners = self.channel.listeners(AGENT)
        if listeners:
            await deliver(listeners, event, AGENT)

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
        if not self.is_busy:
            self._store(messages, None)
            for item in messages:
                self.channel.emit_nowait(AGENT, MessageStart(message=item))
                self.channel.emit_nowait(AGENT, MessageEnd(message=item))
        elif if_busy == "reject":
            raise AgentBusyError("the agent is running a turn", hint="use if_busy='defer'")
        elif if_busy == "join" and self._current is not None and not self._current.closing:
            self._current.join(messages, trigger=False)
        else:
            self._deferred.extend(messages)
        return None

    def _submit(self, messages: list[Message], if_busy: IfBusy) -> PendingTurn:
        busy = self.is_busy
        if busy and if_busy == "reject":
            raise AgentBusyError("the agent is running a turn", hint="use if_busy='defer'")
        current = self._current
        if busy and if_busy == "join" and current is not None and not current.closing:
            current.join(messages, trigger=True)
            return PendingTurn(current.id, messages, joined=True)
        loop = asyncio.get_running_loop()
        pending = PendingTurn(new_id(), messages, loop.create_future())
        self._inbox.append(pending)
        if busy:
            self._record("event", {"type": "turn_queued"}, pending.turn_id)
            self.channel.emit_nowait(AGENT, TurnQueued(turn_id=pending.turn_id))
        else:
            self._loop_task = loop.create_task(drain(self))
        return pending

    async def prompt(self, message: MessageInput) -> TurnResult:
        """Run a turn for ``message`` and return its result (cancelling this call aborts it)."""
        self._check_open()
        pending = self._submit(as_messages(message), "defer")
        assert pending.future is not None
        try:
            return await asyncio.shield(pending.future)
        except asyncio.CancelledError:
            if self._current is not None and self._current.id == pending.turn_id:
                self.abort()
            elif pending in self._inbox:
                self._inbox.remove(pending)
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
        if self.is_busy:
            if self._wake is None:
                self._wake = Wake()
            if prompt:
                self._wake.prompts.append(prompt)
            return None
        opening = wake_opening(self, Wake([prompt] if prompt else []))
        if opening is None:
            raise AgentRuntimeError(
                "nothing to continue: the conversation is empty",
                hint="pass a prompt: agent.continue_('...')",
            )
        return self._submit(opening, "defer").turn_id

    def steer(self, message: MessageInput) -> None:
        """Deliver ``message`` after the current tool batch (or at the next turn's start)."""
        self._steering.push(as_messages(message))

    def follow_up(self, message: MessageInput) -> None:
        """Deliver ``message`` when the agent would otherwise stop."""
        self._follow_up.push(as_messages(message))

    def peek_queued_messages(self) -> list[Message]:
        """The next queued batch (steering first, else follow-up), without taking it."""
        return self._steering.peek() or self._follow_up.peek()

    def has_queued_messages(self) -> bool:
        """Whether a steering or follow-up message is waiting."""
        return bool(self._steering) or bool(self._follow_up)

    def clear_steering_queue(self) -> None:
        """Drop the queued steering messages."""
        self._steering.clear()

    def clear_follow_up_queue(self) -> None:
        """Drop the queued follow-up messages."""
        self._follow_up.clear()

    def clear_all_queues(self) -> None:
        """Drop every queued steering and follow-up message."""
        self._steering.clear()
        self._follow_up.clear()

    # -- control -----------------------------------------------------------------------

    def abort(self) -> None:
        """Cancel the running model call and tools (the turn ends as ``aborted``); queued
        turns, messages and the pending wake are kept."""
        if self._current is not None:
            self._current.abort()

    def interrupt(self, reason: str | None = None) -> None:
        """Abort the running turn and drop everything queued: deferred turns (their
        ``prompt`` calls return an aborted result), steering, follow-ups, the pending wake."""
        self._wake = None
        self.clear_all_queues()
        while self._inbox:
            settle(self._inbox.popleft(), reason)
        if self._current is not None:
            self._current.abort(reason or "interrupted")

    async def stop(self) -> None:
        """Interrupt, wait until idle, then stop the plugins in reverse order."""
        if self._stopping:
            return
        self._stopping = True
        try:
            self.interrupt("agent stopped")
            await self.wait()
            if self._ready:
                self._ready = False
                await self._plugins.stop()
        finally:
            self._stopping = False

    async def init(self) -> None:
        """Restore history and state, report repaired tool results, run plugin ``init``
        hooks (lazily done by the first turn)."""
        await self._init(None)

    async def _init(self, turn_id: str | None) -> None:
        async with self._init_lock:
            if self._ready:
                return
            if self._history is None:
                self._load()
            repaired, self._repaired = self._repaired, []
            for call in repaired:
                await self._emit(ToolResultRepaired(turn_id=turn_id, call=call))
            await self._plugins.init(self)
            self._ready = True

    async def wait(self) -> None:
        """Return when the agent is idle (and everything recorded is in storage)."""
        while self._loop_task is not None and not self._loop_task.done():
            await asyncio.shield(self._loop_task)
        await self._plugins.flush()

    def clear(self) -> None:
        """Forget the conversation (storage included); ``state`` is kept."""
        if self.is_busy:
            raise AgentBusyError("cannot clear while a turn runs", hint="await agent.wait()")
        state = self.state.get()
        self.storage.clear()
        self._history = []
        self._repaired = []
        if state:
            self._record("state", state, None)

    def set_model(self, model: Model) -> None:
        """Use ``model`` from the next step on (each response records its provider/model)."""
        self.model = model

    def _check_open(self) -> None:
        if self._stopping:
            raise AgentRuntimeError("Agent is stopping", hint="wait for stop() to finish")

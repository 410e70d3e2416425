"""The agent core: what the turn machinery works on, behind the ``Agent`` facade.

``Agent`` (agent.py) is the public object; ``AgentCore`` holds everything a turn reads
and changes -- configuration, model, tools, history, storage, plugins, queues, the running
turn -- and offers it as a public surface, so ``turns.py``, ``pump.py`` and ``context.py``
never reach into private state. ``agent_loop`` (loop.py) runs the same core without an
``Agent`` around it.
"""

from __future__ import annotations

import asyncio
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from agentcli.errors import ToolConflictError
from agentcli.models.base import Model, ModelSettings
from agentcli.runtime.callbacks import CallbackPlugin
from agentcli.runtime.channel import AGENT, STATE, Channel, deliver
from agentcli.runtime.config import AgentConfig
from agentcli.runtime.events import Event, MessageEnd, MessageStart, ToolResultRepaired
from agentcli.runtime.history import load_history
from agentcli.runtime.messages import Message
from agentcli.runtime.plugins import PluginSet
from agentcli.runtime.queues import MessageQueue, PendingTurn, Wake
from agentcli.runtime.state import AgentState
from agentcli.runtime.storage import Entry, EntryType, Storage
from agentcli.runtime.tools import ArgumentValidator, Tool, ToolCall

if TYPE_CHECKING:
    from agentcli.runtime.turns import Turn

__all__ = ["AgentCore", "tool_table"]


def tool_table(tools: Iterable[Tool]) -> dict[str, Tool]:
    """Tools by name; a name given twice is a ``ToolConflictError`` (seed 000), not a
    silent replacement of the first tool."""
    table: dict[str, Tool] = {}
    for tool in tools:
        if tool.name in table:
            raise ToolConflictError(
                f"tool {tool.name!r} is given twice in Agent(tools=[...])",
                hint="rename one of the tools or drop one of them",
            )
        table[tool.name] = tool
    return table


class AgentCore:
    """An agent's working state, shared by the facade and the turn machinery."""

    def __init__(
        self,
        *,
        config: AgentConfig,
        model: Model,
        instructions: str,
        tools: dict[str, Tool],
        settings: ModelSettings,
        storage: Storage,
        plugins: Iterable[object],
        initial_state: Mapping[str, Any] | None,
    ) -> None:
        self.config = config
        self.model = model
        self.instructions = instructions
        self.tools = tools
        self.settings = settings
        self.storage = storage
        self.channel = Channel()
        self.plugins = PluginSet(plugins, builtin=CallbackPlugin(config))
        record = weakref.WeakMethod(self.record_state)  # no core <-> state cycle

        def on_change(value: dict[str, Any]) -> None:
            method = record()
            if method is not None:  # once the core is gone there is nothing to record in
                method(value)

        self.state = AgentState(initial_state, on_change)
        self.steering = MessageQueue(config.queues.steering_mode)
        self.follow_ups = MessageQueue(config.queues.follow_up_mode)
        self.inbox: deque[PendingTurn] = deque()
        self.deferred: list[Message] = []  # trigger=False input waiting for the turn to end
        self.wake: Wake | None = None
        self.loop_task: asyncio.Task[None] | None = None
        self.current: Turn | None = None
        self.history: list[Message] | None = None  # loaded from storage on first use
        self.repaired: list[ToolCall] = []
        self.ready = False
        self.init_lock = asyncio.Lock()
        self.validator = ArgumentValidator()
        # seed 004's state fields
        self.streaming_message: Message | None = None
        self.pending_tool_calls: set[str] = set()
        self.error_message: str | None = None
        # system-message sections replayed from the history, and the announced tool loadout
        self.sections: dict[str, str] = {}
        self.announced: tuple[str, ...] | None = None
        self.owner: Callable[[], object | None] = lambda: None  # the Agent, for plugin init

    def adopt(self, owner: object) -> None:
        """Name the object plugins' ``init`` receives (weakly: the Agent owns the core)."""
        self.owner = weakref.ref(owner)

    # -- history -----------------------------------------------------------------------

    @property
    def messages(self) -> list[Message]:
        """The conversation so far (loaded from storage on first use)."""
        if self.history is None:
            self.load()
        assert self.history is not None
        return self.history

    def load(self) -> None:
        """Read the history, the latest state and the repairs from storage."""
        loaded = load_history(self.storage.read())
        self.history = loaded.messages
        self.repaired = loaded.repaired
        self.sections, self.announced = {}, None
        for message in self.history:
            self._replay(message)
        if loaded.state is not None:
            self.state.restore(loaded.state)

    def forget(self) -> None:
        """Drop the conversation (storage included)."""
        self.storage.clear()
        self.history = []
        self.repaired = []
        self.sections, self.announced = {}, None

    def _replay(self, message: Message) -> None:
        if message.role != "system":
            return
        if message.sections:
            for name, text in message.sections.items():
                if text is None:
                    self.sections.pop(name, None)
                else:
                    self.sections[name] = text
        if isinstance(message.data, dict) and isinstance(message.data.get("tools"), list):
            self.announced = tuple(message.data["tools"])

    # -- recording ---------------------------------------------------------------------

    @property
    def active_turn_id(self) -> str | None:
        """The id of the running turn, if any."""
        return self.current.id if self.current is not None else None

    @property
    def busy(self) -> bool:
        """True while a turn runs or is queued."""
        return self.loop_task is not None and not self.loop_task.done()

    def record(self, kind: EntryType, data: Any, turn_id: str | None) -> None:
        """Append an entry to storage (through the plugins' ``on_append`` chain)."""
        self.plugins.record(Entry(type=kind, data=data, turn_id=turn_id), self.storage)

    def record_state(self, value: dict[str, Any]) -> None:
        """Persist a state change and publish it on the ``state`` channel."""
        self.record("state", value, self.active_turn_id)
        self.channel.emit_nowait(STATE, dict(value))

    def store(self, messages: list[Message], turn_id: str | None) -> None:
        """Add ``messages`` to the history, storage and the running turn's result."""
        history = self.messages
        current = self.current
        in_turn = current.result.messages if current and current.id == turn_id else None
        for message in messages:
            history.append(message)
            if message.role == "system":
                self._replay(message)
            self.record("message", message.to_dict(), turn_id)
            if in_turn is not None:
                in_turn.append(message)

    async def append(self, messages: list[Message], turn_id: str | None) -> None:
        """Store ``messages``, then emit their ``message_start`` / ``message_end``."""
        if not messages:
            return
        self.store(messages, turn_id)  # all recorded before any listener runs
        if self.channel.has(AGENT):
            for message in messages:
                await self.emit(MessageStart(turn_id=turn_id, message=message))
                await self.emit(MessageEnd(turn_id=turn_id, message=message))

    async def emit(self, event: Event) -> None:
        """Deliver ``event`` to the ``agent`` channel's listeners, awaiting each."""
        listeners = self.channel.listeners(AGENT)
        if listeners:
            await deliver(listeners, event, AGENT)

    def emit_nowait(self, event: Event) -> None:
        """Deliver ``event`` without waiting (from code that is not async)."""
        self.channel.emit_nowait(AGENT, event)

    async def ensure_ready(self, turn_id: str | None) -> None:
        """Restore history and state, report repaired tool results, run plugin ``init``
        hooks -- once (again after ``stop``)."""
        async with self.init_lock:
            if self.ready:
                return
            if self.history is None:
                self.load()
            repaired, self.repaired = self.repaired, []
            for call in repaired:
                await self.emit(ToolResultRepaired(turn_id=turn_id, call=call))
            owner = self.owner()
            await self.plugins.init(owner if owner is not None else self)  # type: ignore[arg-type]
            self.ready = True

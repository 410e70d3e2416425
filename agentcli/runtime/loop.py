"""The low-level loop (seed 004's ``agentLoop`` / ``agentLoopContinue``): the agent's turn
machinery as an async generator of events, without an ``Agent`` around it.

Both run the same pump as ``Agent`` (``pump.drain`` over an ``AgentCore``) on the
``AgentContext`` given: its ``messages`` list is the history, so it holds the new messages
when the loop ends. The stream is observational, as in the seed: events are yielded in
order, but the loop does not wait for the consumer before it goes on (use ``Agent`` and
``subscribe`` for listeners that act as barriers).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from typing import Any

from agentcli.errors import AgentRuntimeError
from agentcli.models.base import Model, ModelSettings
from agentcli.runtime.channel import AGENT
from agentcli.runtime.config import AgentConfig
from agentcli.runtime.core import AgentCore, tool_table
from agentcli.runtime.events import Event
from agentcli.runtime.messages import Message, MessageInput, as_messages, new_id
from agentcli.runtime.pump import drain
from agentcli.runtime.queues import PendingTurn
from agentcli.runtime.storage import MemoryStorage
from agentcli.runtime.tools import Tool

__all__ = ["AgentContext", "AgentLoopConfig", "agent_loop", "agent_loop_continue"]


@dataclass(slots=True)
class AgentContext:
    """What the loop runs on: the system prompt, the history (extended in place) and the
    tools."""

    system_prompt: str = ""
    messages: list[Message] = field(default_factory=list)
    tools: list[Tool] = field(default_factory=list)


@dataclass(slots=True)
class AgentLoopConfig:
    """The model and everything else an ``Agent`` would be given."""

    model: Model
    settings: ModelSettings = field(default_factory=ModelSettings)
    options: AgentConfig = field(default_factory=AgentConfig)  # tool hooks, turn control, ...
    plugins: Iterable[object] = ()


def agent_loop(
    messages: MessageInput, context: AgentContext, config: AgentLoopConfig
) -> AsyncIterator[Event]:
    """Add ``messages`` to the context and run the loop: ``agent_start`` ...
    ``agent_end``."""
    return _run(as_messages(messages), context, config)


def agent_loop_continue(context: AgentContext, config: AgentLoopConfig) -> AsyncIterator[Event]:
    """Run the loop on the context as it is (its last message is a user message or tool
    results); an empty context or one ending in an assistant message has nothing to
    continue."""
    tail = next((m for m in reversed(context.messages) if m.role != "system"), None)
    if tail is None:
        raise AgentRuntimeError("nothing to continue: the context has no messages")
    if tail.role == "assistant":
        raise AgentRuntimeError(
            "cannot continue from an assistant message",
            hint="add a user message: agent_loop([...], context, config)",
        )
    return _run([], context, config)


async def _run(
    opening: list[Message], context: AgentContext, config: AgentLoopConfig
) -> AsyncIterator[Event]:
    core = AgentCore(
        config=config.options,
        model=config.model,
        instructions=context.system_prompt,
        tools=tool_table(context.tools),
        settings=config.settings,
        storage=MemoryStorage(),
        plugins=config.plugins,
        initial_state=None,
    )
    core.history = context.messages  # the context's list is the live history
    queue: asyncio.Queue[Any] = asyncio.Queue()
    done = object()
    core.channel.subscribe(AGENT, queue.put_nowait)
    core.inbox.append(PendingTurn(new_id(), opening))
    task = asyncio.get_running_loop().create_task(drain(core))
    task.add_done_callback(lambda _: queue.put_nowait(done))
    try:
        while (event := await queue.get()) is not done:
            yield event
        await task  # a failure of the loop itself (not of a turn) surfaces here
    finally:
        if not task.done():  # the consumer left early: abort the turn and let it close
            if core.current is not None:
                core.current.abort("the loop's consumer stopped")
            await asyncio.wait({task})

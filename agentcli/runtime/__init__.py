"""The agent runtime: turns of model calls and tool calls, events, queues, plugins, state,
channels and storage. See docs/runtime.md."""

from __future__ import annotations

from agentcli.runtime.agent import Agent, TurnResult
from agentcli.runtime.channel import Channel
from agentcli.runtime.config import (
    DIRECT_TOOL_CALL,
    AgentConfig,
    LoopConfig,
    ProviderConfig,
    QueueConfig,
    ToolConfig,
)
from agentcli.runtime.decide import StepOutcome, decide_step
from agentcli.runtime.events import TurnError
from agentcli.runtime.loop import AgentContext, AgentLoopConfig, agent_loop, agent_loop_continue
from agentcli.runtime.messages import (
    Message,
    as_messages,
    assistant_message,
    custom_message,
    image_parts,
    system_message,
    to_llm_messages,
    user_message,
)
from agentcli.runtime.plugins import Plugin, Step, StepInfo
from agentcli.runtime.state import AgentState
from agentcli.runtime.storage import Entry, JsonlStorage, MemoryStorage
from agentcli.runtime.tools import Block, Replace, Tool, ToolCall, ToolContext, ToolResult
from agentcli.runtime.vocabulary import per_model_call, seed_000_name

__all__ = [
    "DIRECT_TOOL_CALL",
    "Agent",
    "AgentConfig",
    "AgentContext",
    "AgentLoopConfig",
    "AgentState",
    "Block",
    "Channel",
    "Entry",
    "JsonlStorage",
    "LoopConfig",
    "MemoryStorage",
    "Message",
    "Plugin",
    "ProviderConfig",
    "QueueConfig",
    "Replace",
    "Step",
    "StepInfo",
    "StepOutcome",
    "Tool",
    "ToolCall",
    "ToolConfig",
    "ToolContext",
    "ToolResult",
    "TurnError",
    "TurnResult",
    "agent_loop",
    "agent_loop_continue",
    "as_messages",
    "assistant_message",
    "custom_message",
    "decide_step",
    "image_parts",
    "per_model_call",
    "seed_000_name",
    "system_message",
    "to_llm_messages",
    "user_message",
]

"""The agent runtime: turns of model calls and tool calls, events, queues, plugins, state,
channels and storage. See docs/runtime.md."""

from __future__ import annotations

from agentcli.runtime.agent import Agent, TurnResult
from agentcli.runtime.channel import Channel
from agentcli.runtime.messages import (
    Message,
    as_messages,
    assistant_message,
    custom_message,
    system_message,
    to_llm_messages,
    user_message,
)
from agentcli.runtime.plugins import Plugin, Step, StepInfo
from agentcli.runtime.state import AgentState
from agentcli.runtime.storage import Entry, JsonlStorage, MemoryStorage
from agentcli.runtime.tools import Block, Replace, Tool, ToolCall, ToolContext, ToolResult

__all__ = [
    "Agent",
    "AgentState",
    "Block",
    "Channel",
    "Entry",
    "JsonlStorage",
    "MemoryStorage",
    "Message",
    "Plugin",
    "Replace",
    "Step",
    "StepInfo",
    "Tool",
    "ToolCall",
    "ToolContext",
    "ToolResult",
    "TurnResult",
    "as_messages",
    "assistant_message",
    "custom_message",
    "system_message",
    "to_llm_messages",
    "user_message",
]

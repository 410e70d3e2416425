"""The agent runtime: turns of model calls and tool calls, events, queues, storage."""

from __future__ import annotations

from agentcli.runtime.agent import Agent, TurnResult
from agentcli.runtime.messages import Message, custom_message, system_message, user_message
from agentcli.runtime.storage import Entry, JsonlStorage, MemoryStorage
from agentcli.runtime.tools import Block, Replace, Tool, ToolCall, ToolContext, ToolResult

__all__ = [
    "Agent",
    "Block",
    "Entry",
    "JsonlStorage",
    "MemoryStorage",
    "Message",
    "Replace",
    "Tool",
    "ToolCall",
    "ToolContext",
    "ToolResult",
    "TurnResult",
    "custom_message",
    "system_message",
    "user_message",
]

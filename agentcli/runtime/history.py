"""Rebuilding an agent's history from stored entries.

A session may have been cut off between a tool call and its result (a crash, a killed
process). Providers reject a history with an unanswered tool call, so every such call gets an
error result, inserted where the result belongs; the caller reports each repair as a
``tool_result_repaired`` event. Repairs are not written back: the stored entries stay what
actually happened, and loading them again repairs them the same way.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from agentcli.runtime.messages import Message
from agentcli.runtime.storage import Entry
from agentcli.runtime.tools import ToolCall

__all__ = ["MISSING_RESULT", "Loaded", "load_history", "repair_tool_results"]

MISSING_RESULT = "Tool result was not recorded"


@dataclass(slots=True)
class Loaded:
    """What stored entries hold: messages (repaired), the latest state, the repairs."""

    messages: list[Message] = field(default_factory=list)
    state: dict[str, Any] | None = None
    repaired: list[ToolCall] = field(default_factory=list)


def load_history(entries: Iterable[Entry]) -> Loaded:
    """Messages and the latest state from ``entries``, unanswered tool calls repaired."""
    messages: list[Message] = []
    state = None
    for entry in entries:
        if entry.type == "message":
            messages.append(Message.from_dict(entry.data))
        elif entry.type == "state" and isinstance(entry.data, dict):
            state = entry.data
    messages, repaired = repair_tool_results(messages)
    return Loaded(messages, state, repaired)


def repair_tool_results(messages: list[Message]) -> tuple[list[Message], list[ToolCall]]:
    """``messages`` with an error result for every tool call left without one, and those
    calls (the same list object when nothing was missing)."""
    pending: dict[str, ToolCall] = {}
    missing: list[ToolCall] = []
    repaired: list[Message] | None = None

    for index, message in enumerate(messages):
        if message.role in ("user", "system", "assistant") and pending:
            if repaired is None:
                repaired = messages[:index]
            _flush(pending, missing, repaired)
        if repaired is not None:
            repaired.append(message)
        if message.role == "assistant":
            for call in message.tool_calls:
                pending[call.id] = call
        elif message.role == "tool" and message.tool_call_id:
            pending.pop(message.tool_call_id, None)
    if pending:
        if repaired is None:
            repaired = list(messages)
        _flush(pending, missing, repaired)
    return (messages if repaired is None else repaired), missing


def _flush(pending: dict[str, ToolCall], missing: list[ToolCall], out: list[Message]) -> None:
    for call in pending.values():
        missing.append(call)
        out.append(
            Message(
                role="tool",
                content=MISSING_RESULT,
                tool_call_id=call.id,
                name=call.name,
                is_error=True,
            )
        )
    pending.clear()

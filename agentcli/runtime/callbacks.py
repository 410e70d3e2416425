"""The agent's own callbacks as one built-in plugin, so there is one extension path.

``before_tool_call`` / ``after_tool_call``, ``transform_context``, ``convert_to_llm``,
``prepare_request`` and ``finish_turn`` given to ``Agent`` (or set on it later) are the
hooks of ``CallbackPlugin``, which runs ahead of every other plugin. Each hook is present
only while its callback is set, so an agent without callbacks keeps the fast paths of an
agent without plugins; setting a callback later refreshes the plugin set.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentcli.runtime.config import AgentConfig
from agentcli.runtime.plugins import Hook
from agentcli.runtime.tools import ToolCall, ToolResult

__all__ = ["CALLBACK_HOOKS", "CallbackPlugin"]

# the plugin hooks this plugin may have, each fed by one agent callback
CALLBACK_HOOKS: tuple[Hook, ...] = (
    "before_tool_call",
    "after_tool_call",
    "transform_context",
    "convert_to_llm",
    "prepare_request",
    "finish_turn",
)


class CallbackPlugin:
    """The agent's callbacks (read from its config at each call) as plugin hooks."""

    name = "agent-callbacks"
    enforce = "pre"

    def __init__(self, config: AgentConfig) -> None:
        self.config = config

    def hooks(self) -> list[tuple[Hook, Callable[..., Any]]]:
        """The hooks whose callbacks are set (what ``PluginSet.refresh`` gathers; read
        field by field because it runs for every agent built)."""
        tools, loop = self.config.tools, self.config.loop
        found: list[tuple[Hook, Callable[..., Any]]] = []
        if tools.before_tool_call is not None and (before := self.before_tool_call):
            found.append(("before_tool_call", before))
        if tools.after_tool_call is not None:
            found.append(("after_tool_call", tools.after_tool_call))
        for hook in ("transform_context", "convert_to_llm", "prepare_request", "finish_turn"):
            function = getattr(loop, hook)
            if function is not None:
                found.append((hook, function))
        return found

    # Each property is the hook, or None while the callback is unset (no hook at all).

    @property
    def before_tool_call(self) -> Callable[[ToolCall, Any], Any] | None:
        tools = self.config.tools
        if tools.before_tool_call is None:
            return None

        def before(call: ToolCall, decision: Any) -> Any:
            # the agent's hook sees the host's services, as it always did (seed 004)
            hook = tools.before_tool_call
            return hook(call, tools.services) if hook is not None else None

        return before

    @property
    def after_tool_call(self) -> Callable[[ToolCall, ToolResult], Any] | None:
        return self.config.tools.after_tool_call

    @property
    def transform_context(self) -> Callable[..., Any] | None:
        return self.config.loop.transform_context

    @property
    def convert_to_llm(self) -> Callable[..., Any] | None:
        return self.config.loop.convert_to_llm

    @property
    def prepare_request(self) -> Callable[..., Any] | None:
        return self.config.loop.prepare_request

    @property
    def finish_turn(self) -> Callable[..., Any] | None:
        return self.config.loop.finish_turn

    def __repr__(self) -> str:
        return "<Plugin 'agent-callbacks'>"

"""The model context of a step: from the agent's history to OpenAI-style messages.

Before every model call, in this order::

    history                      (or the stored entries, when a plugin has transform_entries)
    -> transform_entries         plugins, chained
    -> transform_messages        plugins, chained
    -> transform_context         the agent's option (seed 004), then plugins', chained
    -> convert_to_llm            the agent's option or a plugin's (first answer wins); by
                                 default standard messages are converted and ``custom``
                                 ones are projected by the plugins' to_model_messages
                                 (first answer wins) or dropped
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentcli.runtime.history import repair_tool_results
from agentcli.runtime.messages import Message, to_llm_messages
from agentcli.runtime.plugins import PluginSet

if TYPE_CHECKING:
    from agentcli.runtime.core import AgentCore

__all__ = ["model_messages", "project"]


async def model_messages(core: AgentCore) -> list[dict[str, Any]]:
    """The messages the next model call sees (without the instructions)."""
    plugins = core.plugins
    if not plugins.active:
        return to_llm_messages(core.messages)
    transforms = plugins.has("transform_messages") or plugins.has("transform_context")
    if plugins.has("transform_entries"):
        await plugins.flush()
        entries = await plugins.pipe("transform_entries", core.storage.read())
        history, _ = repair_tool_results(
            [Message.from_dict(entry.data) for entry in entries if entry.type == "message"]
        )
    else:
        # the live history is only copied when a hook may rearrange it
        history = list(core.messages) if transforms else core.messages
    if plugins.has("transform_messages"):
        history = await plugins.pipe("transform_messages", history)
    if plugins.has("transform_context"):
        history = await plugins.pipe("transform_context", history)
    if plugins.has("convert_to_llm"):
        converted = await plugins.first("convert_to_llm", history)
        if converted is not None:
            return list(converted)
    return await project(history, plugins)


async def project(messages: list[Message], plugins: PluginSet) -> list[dict[str, Any]]:
    """Standard messages converted, ``custom`` ones projected by the plugins (or dropped)."""
    if not plugins.has("to_model_messages"):
        return to_llm_messages(messages)
    out: list[dict[str, Any]] = []
    run: list[Message] = []
    for message in messages:
        if message.role != "custom":
            run.append(message)
            continue
        if run:
            out += to_llm_messages(run)
            run = []
        out += _model_messages(await plugins.first("to_model_messages", message))
    out += to_llm_messages(run)
    return out


def _model_messages(value: Any) -> list[dict[str, Any]]:
    if value is None:
        return []
    if isinstance(value, dict | Message):
        value = [value]
    out: list[dict[str, Any]] = []
    for item in value:
        if isinstance(item, Message):
            out += to_llm_messages([item])
        else:
            out.append(item)
    return out

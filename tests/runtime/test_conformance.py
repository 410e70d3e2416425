"""Conformance: every name in each runtime seed's documented API has its counterpart here.

Each row is (the seed's name, where it lives in agentcli). Where forms:
``Agent.x`` an attribute of an agent; ``Agent(x)`` a keyword of the constructor;
``runtime.x`` / ``errors.x`` a name of that module; ``hook:x`` a plugin hook;
``event:x`` an event type; ``Tool.x`` / ``ToolResult.x`` / ``Entry.x`` /
``AgentContext.x`` / ``ToolContext.x`` / ``state.x`` a field or method of that class.
The names are those of the seeds' READMEs (000: @yesimagent/core, 004: pi-agent-core).
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import get_args

import pytest

import agentcli.errors
import agentcli.runtime
from agentcli.models.offline import EchoModel
from agentcli.runtime import Agent, AgentContext, Entry, Tool, ToolContext, ToolResult
from agentcli.runtime.agent import AgentOptions
from agentcli.runtime.events import EventType
from agentcli.runtime.plugins import HOOKS
from agentcli.runtime.state import AgentState

SEED_000 = [
    ("createAgent", "runtime.Agent"),
    ("createUserMessage", "runtime.user_message"),
    ("createSystemMessage", "runtime.system_message"),
    ("createAssistantMessage", "runtime.assistant_message"),
    ("createToolMessage", "runtime.tool_message"),
    ("createCustomMessage", "runtime.custom_message"),
    ("createMemoryStorage", "runtime.MemoryStorage"),
    ("createJsonlStorage", "runtime.JsonlStorage"),
    ("DIRECT_TOOL_CALL", "runtime.DIRECT_TOOL_CALL"),
    # AgentConfig
    ("id", "Agent(id)"),
    ("model", "Agent(model)"),
    ("instructions", "Agent(instructions)"),
    ("tools", "Agent(tools)"),
    ("runtimeContext", "Agent(runtime_context)"),
    ("toolsContext", "Agent(tools_context)"),
    ("toolChoice", "Agent(tool_choice)"),
    ("activeTools", "Agent(active_tools)"),
    ("toolCallers", "Agent(tool_callers)"),
    ("settings", "Agent(settings)"),
    ("storage", "Agent(storage)"),
    ("plugins", "Agent(plugins)"),
    ("maxSteps", "Agent(max_steps)"),
    ("initialState", "Agent(initial_state)"),
    # driving it and its lifecycle
    ("send", "Agent.send"),
    ("run", "Agent.run"),
    ("continue", "Agent.continue_"),
    ("init", "Agent.init"),
    ("stop", "Agent.stop"),
    ("wait", "Agent.wait"),
    ("interrupt", "Agent.interrupt"),
    ("clear", "Agent.clear"),
    ("setModel", "Agent.set_model"),
    ("channel", "Agent.channel"),
    ("channel.subscribe", "Channel.subscribe"),
    ("channel.emit", "Channel.emit"),
    ("state", "Agent.state"),
    ("state.update", "state.update"),
    ("state.set", "state.set"),
    ("state.get", "state.get"),
    # entries
    ("AgentEntry.type", "Entry.type"),
    ("AgentEntry.data", "Entry.data"),
    ("AgentEntry.id", "Entry.id"),
    ("AgentEntry.timestamp", "Entry.timestamp"),
    ("AgentEntry.turnId", "Entry.turn_id"),
    # events
    ("turn.queued", "event:turn_queued"),
    ("turn.start", "event:turn_start"),
    ("turn.step", "event:step_end"),
    ("turn.done", "event:turn_end"),
    ("turn.failed", "event:turn_end"),
    ("turn.aborted", "event:turn_end"),
    ("tool.start", "event:tool_execution_start"),
    ("tool.done", "event:tool_execution_end"),
    ("tool.failed", "event:tool_failed"),
    ("tool.blocked", "event:tool_blocked"),
    ("turn.failed error {name, message, cause}", "runtime.TurnError"),
    # tools
    ("toModelOutput", "Tool.to_model_output"),
    ("contextSchema", "Tool.context_schema"),
    ("execute", "Tool.execute"),
    ("execute's context", "ToolContext.context"),
    ("bound tool call (code mode)", "ToolContext.call_tool"),
    # plugins
    ("name", "Plugin.name"),
    ("enforce", "Plugin.enforce"),
    ("init", "hook:init"),
    ("stop", "hook:stop"),
    ("extendInstructions", "hook:extend_instructions"),
    ("extendTools", "hook:extend_tools"),
    ("onAppend", "hook:on_append"),
    ("transformEntries", "hook:transform_entries"),
    ("transformMessages", "hook:transform_messages"),
    ("toModelMessages", "hook:to_model_messages"),
    ("prepareStep", "hook:prepare_step"),
    ("beforeToolCall", "hook:before_tool_call"),
    ("afterToolCall", "hook:after_tool_call"),
    ("onStepFinish", "hook:on_step_finish"),
    ("onTurnFinish", "hook:on_turn_finish"),
    # errors
    ("AgentBusyError", "errors.AgentBusyError"),
    ("ToolConflictError", "errors.ToolConflictError"),
    ("AgentRuntimeError", "errors.AgentRuntimeError"),
    ("ToolChoiceViolationError", "errors.ToolChoiceViolationError"),
]

SEED_004 = [
    ("Agent", "runtime.Agent"),
    # options
    ("initialState.systemPrompt", "Agent(instructions)"),
    ("initialState.model", "Agent(model)"),
    ("initialState.thinkingLevel", "Agent(thinking_level)"),
    ("initialState.tools", "Agent(tools)"),
    ("initialState.messages", "Agent.messages"),
    ("convertToLlm", "Agent(convert_to_llm)"),
    ("transformContext", "Agent(transform_context)"),
    ("steeringMode", "Agent(steering_mode)"),
    ("followUpMode", "Agent(follow_up_mode)"),
    ("streamFn", "Agent(model)"),
    ("sessionId", "Agent(session_id)"),
    ("getApiKey", "Agent(get_api_key)"),
    ("toolExecution", "Agent(tool_execution)"),
    ("beforeToolCall", "Agent(before_tool_call)"),
    ("afterToolCall", "Agent(after_tool_call)"),
    ("prepareRequest", "Agent(prepare_request)"),
    ("finishTurn", "Agent(finish_turn)"),
    ("thinkingBudgets", "Agent(thinking_budgets)"),
    # state
    ("state.model", "Agent.model"),
    ("state.thinkingLevel", "Agent.thinking_level"),
    ("state.tools", "Agent.tools"),
    ("state.messages", "Agent.messages"),
    ("state.isStreaming", "Agent.is_streaming"),
    ("state.streamingMessage", "Agent.streaming_message"),
    ("state.pendingToolCalls", "Agent.pending_tool_calls"),
    ("state.errorMessage", "Agent.error_message"),
    ("state.systemPrompt", "Agent.instructions"),
    ("system message sections", "runtime.system_message"),
    # methods and settable fields
    ("prompt", "Agent.prompt"),
    ("continue", "Agent.continue_"),
    ("subscribe", "Agent.subscribe"),
    ("steer", "Agent.steer"),
    ("followUp", "Agent.follow_up"),
    ("clearSteeringQueue", "Agent.clear_steering_queue"),
    ("clearFollowUpQueue", "Agent.clear_follow_up_queue"),
    ("clearAllQueues", "Agent.clear_all_queues"),
    ("peekQueuedMessages", "Agent.peek_queued_messages"),
    ("reset", "Agent.reset"),
    ("abort", "Agent.abort"),
    ("waitForIdle", "Agent.wait"),
    ("sessionId", "Agent.session_id"),
    ("thinkingBudgets", "Agent.thinking_budgets"),
    ("steeringMode", "Agent.steering_mode"),
    ("followUpMode", "Agent.follow_up_mode"),
    ("toolExecution", "Agent.tool_execution"),
    ("agent.beforeToolCall", "Agent.before_tool_call"),
    ("agent.afterToolCall", "Agent.after_tool_call"),
    ("agent.prepareRequest", "Agent.prepare_request"),
    ("agent.finishTurn", "Agent.finish_turn"),
    # events
    ("agent_start", "event:agent_start"),
    ("agent_end", "event:agent_end"),
    ("turn_start", "event:turn_start"),
    ("turn_end", "event:turn_end"),
    ("turn_start/turn_end per model call", "runtime.per_model_call"),
    ("message_start", "event:message_start"),
    ("message_update", "event:message_update"),
    ("message_end", "event:message_end"),
    ("tool_execution_start", "event:tool_execution_start"),
    ("tool_execution_update", "event:tool_execution_update"),
    ("tool_execution_end", "event:tool_execution_end"),
    # tools
    ("AgentTool.name", "Tool.name"),
    ("AgentTool.label", "Tool.label"),
    ("AgentTool.description", "Tool.description"),
    ("AgentTool.parameters", "Tool.parameters"),
    ("AgentTool.executionMode", "Tool.sequential"),
    ("AgentTool.execute", "Tool.execute"),
    ("onUpdate", "ToolContext.update"),
    ("terminate", "ToolResult.terminate"),
    ("details", "ToolResult.details"),
    ("isError", "ToolResult.is_error"),
    # low-level API
    ("agentLoop", "runtime.agent_loop"),
    ("agentLoopContinue", "runtime.agent_loop_continue"),
    ("AgentContext.messages", "AgentContext.messages"),
    ("AgentContext.tools", "AgentContext.tools"),
    ("AgentLoopConfig", "runtime.AgentLoopConfig"),
]

_CLASSES = {
    "Tool": Tool,
    "ToolResult": ToolResult,
    "ToolContext": ToolContext,
    "Entry": Entry,
    "AgentContext": AgentContext,
    "Plugin": agentcli.runtime.Plugin,
    "Channel": agentcli.runtime.Channel,
    "state": AgentState,
}


def present(where: str) -> bool:
    """Whether ``where`` names something that exists."""
    kind, _, name = where.partition(":")
    if name:
        return name in (HOOKS if kind == "hook" else get_args(EventType))
    owner, _, attribute = where.partition(".")
    if where.startswith("Agent(") and where.endswith(")"):
        keyword = where[len("Agent(") : -1]
        parameters = inspect.signature(Agent.__init__).parameters
        return keyword in parameters or keyword in AgentOptions.__annotations__
    if owner == "runtime":
        import agentcli.runtime.messages as messages

        return hasattr(agentcli.runtime, attribute) or hasattr(messages, attribute)
    if owner == "errors":
        return hasattr(agentcli.errors, attribute)
    if owner == "Agent":
        return hasattr(Agent(EchoModel()), attribute)
    cls = _CLASSES[owner]
    if dataclasses.is_dataclass(cls):
        return attribute in {f.name for f in dataclasses.fields(cls)} or hasattr(cls, attribute)
    return hasattr(cls, attribute)


@pytest.mark.parametrize(("seed", "where"), SEED_000, ids=[name for name, _ in SEED_000])
def test_seed_000_api(seed: str, where: str) -> None:
    assert present(where), f"@yesimagent/core's {seed} has no counterpart at {where}"


@pytest.mark.parametrize(("seed", "where"), SEED_004, ids=[name for name, _ in SEED_004])
def test_seed_004_api(seed: str, where: str) -> None:
    assert present(where), f"pi-agent-core's {seed} has no counterpart at {where}"


def test_the_check_fails_for_a_missing_name() -> None:
    assert not present("Agent.wait_for_idle")
    assert not present("Agent(stream_fn)")
    assert not present("hook:on_append_entry")
    assert not present("event:turn.step")
    assert not present("runtime.createAgent")

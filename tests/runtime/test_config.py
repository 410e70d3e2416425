"""Grouped configuration: AgentConfig groups, the documented flat keywords, attributes."""

from __future__ import annotations

import pytest

from agentcli.models.offline import EchoModel
from agentcli.runtime import Agent, AgentConfig, LoopConfig, ProviderConfig, ToolConfig
from agentcli.runtime.config import FLAT_OPTIONS, AgentOptions


def finish(result, message):
    return "end"


def test_flat_keywords_land_in_their_groups() -> None:
    agent = Agent(
        EchoModel(),
        tool_execution="sequential",
        finish_turn=finish,
        max_steps=3,
        steering_mode="all",
        thinking_level="high",
        tools_context={"t": 1},
    )
    config = agent.config
    assert config.tools.execution == "sequential"
    assert config.tools.tools_context == {"t": 1}
    assert (config.loop.finish_turn, config.loop.max_steps) == (finish, 3)
    assert config.queues.steering_mode == "all" and agent.steering_mode == "all"
    assert config.provider.thinking_level == "high"


def test_a_config_object_and_keywords_combine() -> None:
    config = AgentConfig(
        tools=ToolConfig(execution="sequential"),
        loop=LoopConfig(max_steps=2),
        provider=ProviderConfig(session_id="s-1"),
    )
    agent = Agent(EchoModel(), config=config, max_steps=5)
    assert agent.config is config
    assert (agent.tool_execution, agent.max_steps, agent.session_id) == ("sequential", 5, "s-1")


def test_every_flat_option_is_an_attribute_that_writes_its_group() -> None:
    agent = Agent(EchoModel())
    for name, (group, field) in FLAT_OPTIONS.items():
        value = getattr(agent, name)
        assert value == getattr(getattr(agent.config, group), field), name
    agent.max_steps = 7
    assert agent.config.loop.max_steps == 7
    agent.before_tool_call = hook = lambda call, services: None
    assert agent.config.tools.before_tool_call is hook
    assert set(FLAT_OPTIONS) == set(AgentOptions.__annotations__)


def test_unknown_keywords_and_bad_values_are_refused() -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument 'max_step'"):
        Agent(EchoModel(), max_step=3)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="thinking_level must be one of off, minimal"):
        Agent(EchoModel(), thinking_level="huge")  # type: ignore[typeddict-item]
    with pytest.raises(ValueError, match="tool_execution must be parallel or sequential"):
        Agent(EchoModel(), tool_execution="random")  # type: ignore[typeddict-item]

"""The agent's callbacks are one built-in plugin: the same hook path as every plugin."""

from __future__ import annotations

from agentcli.runtime import Agent, Block, Plugin, Tool
from agentcli.runtime.callbacks import CallbackPlugin

from .conftest import ScriptModel, call


async def test_the_agents_hook_runs_first_then_the_plugins_see_its_decision() -> None:
    seen = []

    def agent_hook(tool_call, services):
        seen.append(("agent", services))
        return Block("agent says no")

    def plugin_hook(tool_call, decision):
        seen.append(("plugin", decision))
        return None

    agent = Agent(
        ScriptModel(call("echo", text="x"), "done"),
        tools=[Tool("echo", lambda args: args)],
        before_tool_call=agent_hook,
        services="host",
        plugins=[Plugin("watch", enforce="pre", before_tool_call=plugin_hook)],
    )
    result = await agent.prompt("go")
    assert seen == [("agent", "host"), ("plugin", Block("agent says no"))]
    assert result.tool_results[0].content == "agent says no"
    assert [type(p).__name__ for p in agent.plugins] == ["Plugin"]  # the built-in is not listed


async def test_a_callback_set_later_takes_effect_and_unset_it_is_no_hook() -> None:
    requests = []
    agent = Agent(ScriptModel("a", "b"))
    plugin = CallbackPlugin(agent.config)
    assert plugin.prepare_request is None and plugin.before_tool_call is None
    await agent.prompt("one")
    agent.prepare_request = lambda request: requests.append(request["step"]) or request
    await agent.prompt("two")
    assert requests == [1]
    agent.prepare_request = None
    await agent.prompt("three")
    assert requests == [1]


async def test_plugins_may_use_the_turn_control_hooks_too() -> None:
    order = []

    def plugin_finish(result, message):
        order.append("plugin")
        return "end"

    def agent_finish(result, message):
        order.append("agent")
        return None  # no opinion: the plugin's answer decides

    agent = Agent(
        ScriptModel(call("echo", text="x"), "never"),
        tools=[Tool("echo", lambda args: args)],
        finish_turn=agent_finish,
        plugins=[Plugin("ender", finish_turn=plugin_finish)],
    )
    result = await agent.prompt("go")
    assert order == ["agent", "plugin"]
    assert result.steps == 1  # "end" stopped the turn although tools were called

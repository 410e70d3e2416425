"""Tool choice per step, active tools, per-tool context and the turn's runtime context."""

from __future__ import annotations

from typing import Any

from agentcli.models.base import ModelSettings
from agentcli.runtime.agent import Agent
from agentcli.runtime.plugins import Plugin, Step
from agentcli.runtime.tools import Tool, ToolContext

from .conftest import ScriptModel, call, calls

LOOKUP = Tool("lookup", lambda args: "found")
NOTIFY = Tool("notify", lambda args: "sent")


def declared(model: ScriptModel, index: int = 0) -> list[str]:
    return [tool["function"]["name"] for tool in model.calls[index][1]]


async def test_an_ignored_required_choice_fails_the_turn():
    model = ScriptModel("I refuse to use tools")
    agent = Agent(model, tools=[LOOKUP], tool_choice="required")
    result = await agent.prompt("look it up")
    assert (result.reason, result.error_kind) == ("failed", "tool_choice")
    assert "tool_choice is 'required' but the model called no tool" in result.error
    assert model.calls[0][2].tool_choice == "required"


async def test_an_ignored_named_choice_fails_the_turn_and_answers_the_other_calls():
    model = ScriptModel(call("notify"))
    agent = Agent(model, tools=[LOOKUP, NOTIFY], settings=ModelSettings(tool_choice="lookup"))
    result = await agent.prompt("go")
    assert result.reason == "failed"
    assert "requires 'lookup' but the model called ['notify']" in result.error
    # a bare name is sent in the OpenAI form
    assert model.calls[0][2].tool_choice == {"type": "function", "function": {"name": "lookup"}}
    (skipped,) = result.tool_results
    assert skipped.is_error and skipped.content.startswith("not executed: tool_choice")
    assert [m.role for m in agent.messages] == ["user", "assistant", "tool"]  # still valid


async def test_a_honoured_choice_passes_and_prepare_step_relaxes_it_per_step():
    def relax(step: Step) -> Step:
        if step.number > 1:
            step.tool_choice = "auto"
        return step

    model = ScriptModel(call("lookup"), "answer")
    agent = Agent(
        model,
        tools=[LOOKUP],
        tool_choice="required",
        plugins=[Plugin("relax", prepare_step=relax)],
    )
    result = await agent.prompt("go")
    assert (result.reason, result.text) == ("done", "answer")
    assert [c[2].tool_choice for c in model.calls] == ["required", "auto"]


async def test_active_tools_limit_what_is_declared_and_what_runs():
    model = ScriptModel(calls(("lookup", {}), ("notify", {})), "done")
    agent = Agent(model, tools=[LOOKUP, NOTIFY], active_tools=["lookup"])
    result = await agent.prompt("go")
    assert declared(model) == ["lookup"]
    found, refused = result.tool_results
    assert found.content == "found"
    assert refused.is_error and refused.content == "unknown tool 'notify' (available: lookup)"


async def test_prepare_step_may_change_active_tools_for_its_step():
    def only_notify_later(step: Step) -> None:
        if step.number == 2:
            step.active_tools = ["notify"]

    model = ScriptModel(call("lookup"), "done")
    agent = Agent(
        model,
        tools=[LOOKUP, NOTIFY],
        plugins=[Plugin("p", prepare_step=only_notify_later)],
    )
    await agent.prompt("go")
    assert declared(model, 0) == ["lookup", "notify"]
    assert declared(model, 1) == ["notify"]


class Bot:
    """A host service that is not JSON: it must reach the tool untouched."""

    def __init__(self) -> None:
        self.sent: list[str] = []


async def test_tools_context_hands_each_tool_its_own_entry():
    bot = Bot()

    def send(args: dict[str, Any], ctx: ToolContext) -> str:
        ctx.context["bot"].sent.append(args["text"])
        return "ok"

    def peek(args: dict[str, Any], ctx: ToolContext) -> Any:
        return ctx.context

    model = ScriptModel(calls(("send", {"text": "hi"}), ("peek", {})), "done")
    agent = Agent(
        model,
        tools=[Tool("send", send), Tool("peek", peek)],
        tools_context={"send": {"bot": bot}},
    )
    result = await agent.prompt("go")
    assert bot.sent == ["hi"]
    assert [r.content for r in result.tool_results] == ["ok", None]


async def test_a_tools_context_entry_is_validated_against_the_tools_context_schema():
    schema = {
        "type": "object",
        "properties": {"channel": {"type": "string"}},
        "required": ["channel"],
    }
    tool = Tool(
        "post", lambda args, ctx: f"posted to {ctx.context['channel']}", context_schema=schema
    )
    model = ScriptModel(call("post"), "done")
    bad = Agent(model, tools=[tool], tools_context={"post": {"chanel": "typo"}})
    (result,) = (await bad.prompt("go")).tool_results
    assert result.is_error
    assert result.content == "invalid context for post: 'channel' is a required property"

    good = Agent(
        ScriptModel(call("post"), "done"),
        tools=[tool],
        tools_context={"post": {"channel": "#general"}},
    )
    (result,) = (await good.prompt("go")).tool_results
    assert (result.is_error, result.content) == (False, "posted to #general")


async def test_prepare_step_may_replace_tools_context_for_the_rest_of_the_turn():
    seen: list[Any] = []

    def read(args: dict[str, Any], ctx: ToolContext) -> str:
        seen.append(ctx.context)
        return "ok"

    def prepare(step: Step) -> None:
        if step.number == 1:
            step.tools_context = {"read": "from prepare_step"}

    model = ScriptModel(call("read"), call("read"), "done")
    agent = Agent(
        model,
        tools=[Tool("read", read)],
        tools_context={"read": "configured"},
        plugins=[Plugin("p", prepare_step=prepare)],
    )
    await agent.prompt("go")
    assert seen == ["from prepare_step", "from prepare_step"]
    assert agent.tools_context == {"read": "configured"}


async def test_runtime_context_is_turn_scoped_and_tools_never_see_it():
    contexts: list[dict[str, Any]] = []
    requests: list[dict[str, Any]] = []
    tool_views: list[ToolContext] = []

    def prepare(step: Step) -> Step:
        contexts.append(step.runtime_context)
        seen = step.runtime_context.get("seen", [])
        step.runtime_context = {"seen": [*seen, step.number]}
        return step

    def tool(args: dict[str, Any], ctx: ToolContext) -> str:
        tool_views.append(ctx)
        return "ok"

    model = ScriptModel(call("t"), "done")
    agent = Agent(
        model,
        tools=[Tool("t", tool)],
        runtime_context={"seen": []},
        plugins=[Plugin("turn-state", prepare_step=prepare)],
        prepare_request=lambda request: requests.append(request) or request,
    )
    await agent.prompt("one")
    assert contexts == [{"seen": []}, {"seen": [1]}]
    assert requests[1]["runtime_context"] == {"seen": [1, 2]}
    await agent.prompt("two")  # a new turn starts again from the configured value
    assert contexts[2] == {"seen": []}
    (view,) = tool_views
    assert "seen" not in repr(view)  # neither the tool's context nor its services hold it
    assert not hasattr(view, "runtime_context")

"""Plugins: ordering, lifecycle with rollback, assembly, the history pipeline, prepare_step,
tool hooks, step decisions and turn observers; sync and async hooks."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentcli.errors import ToolConflictError
from agentcli.runtime.agent import Agent
from agentcli.runtime.messages import Message, custom_message
from agentcli.runtime.plugins import Plugin, PluginSet, Step, StepInfo
from agentcli.runtime.storage import Entry
from agentcli.runtime.tools import Block, Replace, Tool, ToolCall, ToolResult

from .conftest import ScriptModel, call, calls, user_texts


def echo_tool(name: str = "echo") -> Tool:
    return Tool(name, lambda args: args.get("text", name))


async def test_hooks_run_pre_then_registration_order_then_post():
    order: list[str] = []

    def plugin(name: str, enforce: str | None = None) -> Plugin:
        return Plugin(name, enforce=enforce, on_turn_finish=lambda result: order.append(name))

    plugins = [plugin("a"), plugin("late", "post"), plugin("b"), plugin("early", "pre")]
    agent = Agent(ScriptModel("ok"), plugins=plugins)
    assert [p.name for p in agent.plugins] == ["early", "a", "b", "late"]
    await agent.prompt("hi")
    assert order == ["early", "a", "b", "late"]


def test_a_plugin_with_an_unknown_hook_or_enforce_is_refused():
    with pytest.raises(TypeError, match="unknown plugin hook 'prepare_steps'"):
        Plugin("typo", prepare_steps=lambda step: step)
    with pytest.raises(ValueError, match="enforce must be 'pre', 'post' or None"):
        Agent(ScriptModel("ok"), plugins=[Plugin("bad", enforce="first")])


async def test_init_runs_once_lazily_and_stop_runs_in_reverse_order():
    log: list[str] = []

    class Tracked(Plugin):
        async def init(self, agent: Agent) -> None:
            log.append(f"init {self.name}")

        def stop(self) -> None:
            log.append(f"stop {self.name}")

    agent = Agent(ScriptModel("ok"), plugins=[Tracked("a"), Tracked("b")])
    assert log == []
    await agent.prompt("one")
    await agent.prompt("two")
    assert log == ["init a", "init b"]
    await agent.stop()
    assert log == ["init a", "init b", "stop b", "stop a"]


async def test_a_failing_init_rolls_back_started_plugins_and_fails_the_turn():
    log: list[str] = []

    class Good(Plugin):
        def init(self, agent: Agent) -> None:
            log.append(f"init {self.name}")

        def stop(self) -> None:
            log.append(f"stop {self.name}")

    class Broken(Plugin):
        name = "broken"

        def init(self, agent: Agent) -> None:
            raise RuntimeError("no database")

        def stop(self) -> None:
            log.append("stop broken")

    agent = Agent(ScriptModel("ok"), plugins=[Good("a"), Good("b"), Broken(), Good("c")])
    result = await agent.prompt("hi")
    assert result.reason == "failed"
    assert result.error == "no database"
    assert log == ["init a", "init b", "stop b", "stop a"]
    assert [m.content for m in agent.messages] == ["hi"]  # the input is kept
    with pytest.raises(RuntimeError, match="no database"):
        await agent.init()  # a later init tries again, and rolls back again
    assert log[-4:] == ["init a", "init b", "stop b", "stop a"]


async def test_instructions_and_tools_are_assembled_once_per_turn():
    counts = {"instructions": 0, "tools": 0}

    def instructions() -> str:
        counts["instructions"] += 1
        return "Recall memories first."

    async def tools() -> list[Tool]:
        counts["tools"] += 1
        return [echo_tool("memory_search")]

    plugin = Plugin("memory", extend_instructions=instructions, extend_tools=tools)
    model = ScriptModel(call("memory_search", text="found"), "done")
    agent = Agent(model, instructions="Be brief.", plugins=[plugin])
    result = await agent.prompt("hi")

    assert counts == {"instructions": 1, "tools": 1}  # two steps, one assembly
    assert result.tool_results[0].content == "found"
    messages, declared, _ = model.calls[0]
    assert messages[0] == {"role": "system", "content": "Be brief.\n\nRecall memories first."}
    assert [t["function"]["name"] for t in declared] == ["memory_search"]
    await agent.prompt("again")
    assert counts == {"instructions": 2, "tools": 2}


async def test_a_tool_name_given_twice_is_a_tool_conflict():
    plugin = Plugin("dup", extend_tools=lambda: {"echo": echo_tool()})
    agent = Agent(ScriptModel("ok"), tools=[echo_tool()], plugins=[plugin])
    result = await agent.prompt("hi")
    assert (result.reason, result.error_kind) == ("failed", "tool_conflict")
    assert "tool 'echo' from plugin 'dup' is already registered by the agent" in result.error
    with pytest.raises(ToolConflictError):
        await PluginSet([plugin]).assemble("", {"echo": echo_tool()})


async def test_on_append_rewrites_drops_and_never_loses_entries():
    def redact(entry: Entry) -> Any:
        if entry.type == "event":
            return []  # drop lifecycle events
        if entry.type == "message" and "secret" in str(entry.data.get("content")):
            entry.data = {**entry.data, "content": "[redacted]"}
            return entry
        return None

    def broken(entry: Entry) -> Any:
        raise ValueError("bug")

    agent = Agent(ScriptModel("the secret is 42"), plugins=[Plugin("r", on_append=redact)])
    await agent.prompt("tell me the secret")
    stored = agent.storage.read()
    assert [e.type for e in stored] == ["message", "message"]
    assert [e.data["content"] for e in stored] == ["[redacted]", "[redacted]"]
    assert agent.messages[-1].content == "the secret is 42"  # the live history is untouched

    agent = Agent(ScriptModel("ok"), plugins=[Plugin("b", on_append=broken)])
    await agent.prompt("hi")
    assert [e.type for e in agent.storage.read()].count("message") == 2


async def test_async_on_append_keeps_the_order_of_entries():
    async def slow_tag(entry: Entry) -> Entry:
        await asyncio.sleep(0.001 if entry.type == "event" else 0)
        entry.data = {**entry.data, "tagged": True} if isinstance(entry.data, dict) else entry.data
        return entry

    agent = Agent(ScriptModel("ok"), plugins=[Plugin("tag", on_append=slow_tag)])
    await agent.prompt("hi")
    await agent.wait()
    stored = agent.storage.read()
    assert [e.type for e in stored] == ["event", "message", "message", "event"]
    assert all(e.data["tagged"] for e in stored)


async def test_transforms_chain_in_plugin_order_then_the_agent_options():
    trail: list[str] = []

    def tagger(name: str) -> Plugin:
        def transform(messages: list[Message]) -> list[Message]:
            trail.append(name)
            return [*messages, Message(role="user", content=name)]

        return Plugin(name, transform_messages=transform)

    def entries(items: list[Entry]) -> None:
        trail.append("entries")  # None: keep the value

    def transform_context(messages: list[Message]) -> list[Message]:
        trail.append("transform_context")
        return [*messages, Message(role="user", content="context")]

    model = ScriptModel("ok")
    agent = Agent(
        model,
        plugins=[tagger("b"), tagger("a"), Plugin("e", enforce="pre", transform_entries=entries)],
        transform_context=transform_context,
    )
    await agent.prompt("hi")
    assert trail == ["entries", "b", "a", "transform_context"]
    assert user_texts(model.seen[0]) == ["hi", "b", "a", "context"]
    assert [m.content for m in agent.messages] == ["hi", "ok"]  # history itself unchanged


async def test_transform_entries_sees_stored_entries_and_can_trim_them():
    def last_two(entries: list[Entry]) -> list[Entry]:
        messages = [e for e in entries if e.type == "message"]
        return messages[-2:]

    model = ScriptModel(lambda m: f"saw {len(m)}")
    agent = Agent(model, plugins=[Plugin("window", transform_entries=last_two)])
    for text in ("one", "two", "three"):
        await agent.prompt(text)
    assert [len(m) for m in model.seen] == [1, 2, 2]


async def test_custom_messages_are_projected_by_the_first_answer_or_dropped():
    seen_by: list[str] = []

    def first(message: Message) -> Any:
        seen_by.append("first")
        if message.custom_type == "note":
            return {"role": "user", "content": f"(note) {message.data}"}
        return None

    def second(message: Message) -> Any:
        seen_by.append("second")
        return Message(role="user", content="never used for notes")

    model = ScriptModel("ok")
    plugins = [Plugin("one", to_model_messages=first), Plugin("two", to_model_messages=second)]
    agent = Agent(model, plugins=plugins)
    agent.send(custom_message("note", "remember milk"), trigger=False)
    agent.send(custom_message("other", 1), trigger=False)
    await agent.prompt("hi")
    assert user_texts(model.seen[0]) == ["(note) remember milk", "never used for notes", "hi"]
    assert seen_by == ["first", "first", "second"]

    plain = ScriptModel("ok")
    agent = Agent(plain)
    agent.send(custom_message("note", "x"), trigger=False)
    await agent.prompt("hi")
    assert plain.seen[0] == [{"role": "user", "content": "hi"}]


async def test_prepare_step_changes_the_request_for_its_step():
    steps: list[Step] = []

    def prepare(step: Step) -> Step:
        steps.append(step)
        step.messages = [*step.messages, {"role": "user", "content": f"step {step.number}"}]
        step.instructions += " (prepared)"
        step.settings.temperature = 0.1
        return step

    model = ScriptModel(call("echo", text="x"), "done")
    agent = Agent(model, tools=[echo_tool()], plugins=[Plugin("p", prepare_step=prepare)])
    await agent.prompt("hi")
    assert [s.number for s in steps] == [1, 2]
    assert steps[0].turn_id == steps[1].turn_id
    messages, _, settings = model.calls[1]
    assert messages[0]["content"].endswith("(prepared)")
    assert messages[-1] == {"role": "user", "content": "step 2"}
    assert settings.temperature == 0.1
    assert agent.settings.temperature is None  # the step's copy was changed, not the agent's


async def test_prepare_step_can_swap_the_model_for_a_step():
    other = ScriptModel("from other", name="other")
    plugin = Plugin("router", prepare_step=lambda step: setattr(step, "model", other))
    agent = Agent(ScriptModel("from default", name="default"), plugins=[plugin])
    result = await agent.prompt("hi")
    assert (result.text, result.messages[-1].model) == ("from other", "other")


async def test_plugin_tool_hooks_chain_after_the_agents_own():
    def agent_before(call_: ToolCall, services: Any) -> Any:
        return Replace({"text": "agent"}) if call_.name == "echo" else None

    def plugin_before(call_: ToolCall, decision: Any) -> Any:
        if call_.name == "danger":
            return Block("not here")
        if isinstance(decision, Replace):
            return Replace({"text": decision.arguments["text"] + "+plugin"})
        return None

    def agent_after(call_: ToolCall, result: ToolResult) -> Any:
        return {"details": {"agent": True}}

    async def plugin_after(call_: ToolCall, result: ToolResult) -> Any:
        return {"content": f"<{result.content}>"}

    plugin = Plugin("guard", before_tool_call=plugin_before, after_tool_call=plugin_after)
    model = ScriptModel(calls(("echo", {"text": "model"}), ("danger", {})), "done")
    agent = Agent(
        model,
        tools=[echo_tool(), Tool("danger", lambda a: pytest.fail("blocked tool ran"))],
        plugins=[plugin],
        before_tool_call=agent_before,
        after_tool_call=agent_after,
    )
    result = await agent.prompt("go")
    echoed, blocked = result.tool_results
    assert (echoed.content, echoed.details) == ("<agent+plugin>", {"agent": True})
    assert (blocked.content, blocked.is_error) == ("<not here>", True)


async def test_a_raising_before_tool_call_is_an_error_result():
    def broken(call_: ToolCall, decision: Any) -> Any:
        raise KeyError("policy")

    agent = Agent(
        ScriptModel(call("echo"), "ok"),
        tools=[echo_tool()],
        plugins=[Plugin("b", before_tool_call=broken)],
    )
    result = await agent.prompt("go")
    assert result.reason == "done"
    assert result.tool_results[0].is_error
    assert result.tool_results[0].content == "before_tool_call failed: KeyError: 'policy'"


async def test_on_step_finish_first_decision_wins_and_a_raising_plugin_has_no_opinion():
    observed: list[str] = []

    def raising(info: StepInfo) -> Any:
        observed.append("raising")
        raise RuntimeError("bug")

    def stopper(info: StepInfo) -> Any:
        observed.append("stopper")
        sent = [r for r in info.tool_results if r.name == "send" and not r.is_error]
        return {"continue": False} if sent else None

    def keep_going(info: StepInfo) -> Any:
        observed.append("keep_going")
        return {"continue": True}

    model = ScriptModel(call("send"), "never reached")
    plugins = [
        Plugin("raising", on_step_finish=raising),
        Plugin("stopper", on_step_finish=stopper),
        Plugin("keep_going", on_step_finish=keep_going),
    ]
    agent = Agent(model, tools=[Tool("send", lambda a: {"ok": True})], plugins=plugins)
    result = await agent.prompt("send it")
    assert (result.reason, result.steps) == ("done", 1)  # tool calls made, turn ended anyway
    assert observed == ["raising", "stopper", "keep_going"]  # every plugin observes


async def test_on_step_finish_sees_the_steps_messages_and_can_ask_for_more():
    infos: list[StepInfo] = []

    def once_more(info: StepInfo) -> Any:
        infos.append(info)
        return {"continue": True} if info.number == 1 else None

    model = ScriptModel("first", "second")
    agent = Agent(model, plugins=[Plugin("more", on_step_finish=once_more)])
    result = await agent.prompt("hi")
    assert [m.content for m in result.messages] == ["hi", "first", "second"]
    assert [[m.content for m in i.messages] for i in infos] == [["first"], ["second"]]
    assert infos[0].finish_reason == "stop"


async def test_on_turn_finish_observes_and_its_errors_are_swallowed():
    results: list[str] = []

    async def observe(result: Any) -> None:
        results.append(result.reason)
        raise RuntimeError("observer bug")

    agent = Agent(ScriptModel("ok"), plugins=[Plugin("o", on_turn_finish=observe)])
    result = await agent.prompt("hi")
    assert result.reason == "done" and results == ["done"]

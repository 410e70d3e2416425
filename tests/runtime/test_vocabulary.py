"""Events in both seeds' vocabularies: seed 000 names, pi-agent-core turns per model call."""

from __future__ import annotations

from agentcli.runtime import Agent, Tool, per_model_call, seed_000_name

from .conftest import ScriptModel, call


async def test_pi_code_sees_turn_start_and_turn_end_per_model_call() -> None:
    seen = []
    agent = Agent(ScriptModel(call("read", path="config.json"), "It says hi."),
                  tools=[Tool("read", lambda args: "hi")])  # fmt: skip
    agent.subscribe(per_model_call(lambda e: seen.append(e)))
    await agent.prompt("Read config.json")
    assert [e.type for e in seen if e.type != "message_update"] == [
        "agent_start",
        "turn_start",
        "message_start",
        "message_end",  # the user message
        "message_start",
        "message_end",  # the assistant message with the call
        "tool_execution_start",
        "tool_execution_end",
        "message_start",
        "message_end",  # the tool result
        "turn_end",  # { message, toolResults: [result] }
        "turn_start",  # the next model call
        "message_start",
        "message_end",
        "turn_end",
        "agent_end",
    ]  # fmt: skip, the sequence of the seed's README
    first_end, last_end = (e for e in seen if e.type == "turn_end")
    assert [r.content for r in first_end.tool_results] == ["hi"]
    assert first_end.message.tool_calls[0].name == "read"
    assert (last_end.message.content, last_end.tool_results) == ("It says hi.", [])


async def test_a_turn_that_fails_before_a_step_ends_still_ends_for_pi_code() -> None:
    seen = []
    agent = Agent(ScriptModel(RuntimeError("down")))
    agent.subscribe(per_model_call(lambda e: seen.append(e.type)))
    await agent.prompt("hi")
    assert seen.count("turn_start") == seen.count("turn_end") == 1


async def test_seed_000_names() -> None:
    names = []
    agent = Agent(ScriptModel(call("read"), "ok", RuntimeError("down")),
                  tools=[Tool("read", lambda args: 1 / 0)])  # fmt: skip
    agent.subscribe(lambda e: names.append(seed_000_name(e)))
    await agent.prompt("one")
    await agent.prompt("two")
    assert [n for n in names if n] == [
        "turn.start", "tool.start", "tool.failed", "tool.done", "turn.step", "turn.step",
        "turn.done",
        "turn.start", "turn.failed",
    ]  # fmt: skip

"""The interceptor of a task (agentcli/assistant/interception.py) and what it leaves in the
reply: a `ctx.mcp` call a case's stub answers is marked on the call (its answer is the plain
value) and listed, marked stubbed, among the reply's tool calls in the order it was made, so
trajectory and `tool_called` assertions see it; a `ctx.mcp` call no stub answers is not.
Against the weather example's real stdio MCP server, through `agent eval`."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentcli.assistant.interception import FAULT, STUBBED, InterceptedCall
from agentcli.cli.main import _register, app
from agentcli.errors import ToolError
from agentcli.eval.cases.world import CaseTools, ToolStub
from agentcli.eval.reports import read_results
from agentcli.eval.run.tool_world import ToolWorld
from agentcli.faults import FaultPlan

ROOT = Path(__file__).resolve().parents[2]
WEATHER = ROOT / "assistants" / "weather"

_register()
runner = CliRunner()


def world(*stubs: ToolStub, faults: FaultPlan | None = None) -> ToolWorld:
    return ToolWorld(CaseTools(stubs), faults, "case", 1)


async def live() -> Any:
    return {"city": "Paris", "summary": "real"}


def test_a_ctx_mcp_call_a_stub_answers_is_marked_on_the_call():
    box = world(
        ToolStub("get_forecast", {"city": "Atlantis"}, True, result={"summary": "canned"}),
        ToolStub("list_cities", error="down"),
    )
    answered = InterceptedCall("weather", "get_forecast", {"city": "Atlantis"}, True)
    assert asyncio.run(box.call(answered, live)) == {"summary": "canned"}
    assert answered.marks == {STUBBED: True}
    failed = InterceptedCall("weather", "list_cities", {}, True)
    with pytest.raises(ToolError, match="down"):
        asyncio.run(box.call(failed, live))
    assert failed.marks == {STUBBED: True}
    ran = InterceptedCall("weather", "get_forecast", {"city": "Paris"}, True)
    assert asyncio.run(box.call(ran, live)) == {"city": "Paris", "summary": "real"}
    assert ran.marks == {}  # the real tool answered: nothing to mark


def test_a_garbled_stubbed_ctx_mcp_answer_is_marked_with_its_fault_too():
    plan = FaultPlan(rate=1.0, kinds=("malformed",), seed=0)
    box = world(ToolStub("get_forecast", result={"summary": "canned"}), faults=plan)
    call = InterceptedCall("weather", "get_forecast", {}, True)
    assert asyncio.run(box.call(call, live)) == '{"summary"'
    assert call.marks == {STUBBED: True, FAULT: "malformed"}


# Create asks for the cities (stubbed), the model asks for Paris (the real server), Next
# asks for Atlantis (stubbed, failing) and for Tokyo (no stub: the real server, not listed).
HOOKS = """
def Create(ctx, messages):
    ctx.mcp.call_tool("weather", "list_cities", {})
    return None

def Next(ctx, payload):
    try:
        ctx.mcp.call_tool("weather", "get_forecast", {"city": "Atlantis"})
    except Exception as error:
        failed = str(error)
    tokyo = ctx.mcp.call_tool("weather", "get_forecast", {"city": "Tokyo"})
    return {"data": {"failed": failed, "tokyo": tokyo["city"], "text": payload["completion"]["content"]}}
"""
STUBS = [
    {"name": "list_cities", "result": {"cities": ["Atlantis"]}},
    {"name": "get_forecast", "arguments": {"city": "Atlantis"}, "error": "no forecasts under the sea"},
]  # fmt: skip


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """A copy of the weather example (its stdio MCP server) with the hooks above."""
    package = tmp_path / "assistants" / "weather"
    shutil.copytree(WEATHER, package, ignore=shutil.ignore_patterns("tests"))
    (package / "src").mkdir()
    (package / "src/index.py").write_text(HOOKS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AGENT_ROOT", raising=False)
    return tmp_path


def evaluate(project: Path, case: dict[str, Any], *args: str) -> tuple[Any, Any]:
    (project / "cases.jsonl").write_text(json.dumps(case) + "\n")
    ran = runner.invoke(
        app, ["eval", "weather", "@cases.jsonl", "-o", "out.jsonl", *args], catch_exceptions=False
    )
    (result,) = read_results(project / "out.jsonl").results
    return ran, result


def test_stubbed_ctx_mcp_calls_are_in_the_trace_in_order_marked_stubbed(project):
    trajectory = [
        {"name": "list_cities", "result": {"cities": ["Atlantis"]}},
        {"name": "get_forecast", "arguments": {"city": "Paris"}},
        {"name": "get_forecast", "arguments": {"city": "Atlantis"}},
    ]
    case = {
        "id": "hooks",
        "input": "What's the weather in Paris?",
        "tools": {"stubs": STUBS},
        "assert": [
            {"type": "trajectory", "value": trajectory, "mode": "exact"},
            {"type": "tool_called", "value": {"name": "get_forecast", "times": 2}},
            {"type": "tool_called", "value": {"name": "list_cities", "times": 1}},
        ],
    }
    ran, result = evaluate(project, case, "-v")
    assert result.status == "passed", ran.output
    assert result.output["failed"] == "no forecasts under the sea"
    assert result.output["tokyo"] == "Tokyo"  # the real server answered the unstubbed call
    assert result.output["text"].startswith("The forecast for Paris:")
    listed = [call.to_dict() for call in result.trace.tool_calls]
    assert [{k: c.get(k) for k in ("server", "tool", "stubbed")} for c in listed] == [
        {"server": "weather", "tool": "list_cities", "stubbed": True},
        {"server": "weather", "tool": "get_forecast", "stubbed": None},
        {"server": "weather", "tool": "get_forecast", "stubbed": True},
    ]
    assert listed[0]["result"] == {"cities": ["Atlantis"]} and listed[0]["error"] is None
    assert listed[2]["arguments"] == {"city": "Atlantis"}
    assert listed[2]["error"] == "no forecasts under the sea" and listed[2]["result"] is None
    assert (
        "  │ tool weather/list_cities [stub] → OK (args: {})\n"
        '  │ tool weather/get_forecast → OK (args: {"city": "Paris"})\n'
        "  │ tool weather/get_forecast [stub] → ERR: no forecasts under the sea"
        ' (args: {"city": "Atlantis"})\n'
    ) in ran.output


def test_without_stubs_a_hooks_ctx_mcp_calls_are_not_listed(project):
    case = {
        "id": "plain",
        "input": "What's the weather in Paris?",
        "tools": {"stubs": [{"name": "list_cities", "arguments": {"x": 1}, "result": {}}]},
        "assert": {"type": "trajectory", "value": [{"name": "get_forecast"}], "mode": "exact"},
    }
    ran, result = evaluate(project, case)
    # list_cities ran for real (the stub wants other arguments), Atlantis failed for real
    assert result.status == "passed", ran.output
    assert "unknown city" in result.output["failed"]
    assert [c.tool for c in result.trace.tool_calls] == ["get_forecast"]
    assert not result.trace.tool_calls[0].stubbed

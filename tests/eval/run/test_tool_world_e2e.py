"""Tool stubs and seeded faults end to end (issue 17 items 3-4): `agent eval` with the
scripted model against the weather example's real stdio MCP server and the expense
example's process tools; stubs answer the model's calls of both and a hook's `ctx.mcp`
calls; `once`, `delay` and `unmatched: error`; a fault run is the same under the same seed
and different under another; under --runs the report gives pass^k under faults."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentcli.cli.main import _register, app
from agentcli.eval.reports import read_results

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "assistants"

_register()
runner = CliRunner()

ATLANTIS = {"city": "Atlantis", "days": [], "summary": "stubbed sunshine"}


@pytest.fixture
def project(tmp_path, monkeypatch):
    """Copies of the weather and expense examples (their tests left out); cwd is the project."""
    for name in ("weather", "expense"):
        shutil.copytree(
            EXAMPLES / name, tmp_path / "assistants" / name, ignore=shutil.ignore_patterns("tests")
        )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AGENT_ROOT", raising=False)
    return tmp_path


def write_cases(project: Path, items: list[dict[str, Any]], name: str = "cases.jsonl") -> str:
    path = project / name
    path.write_text("".join(json.dumps(item) + "\n" for item in items))
    return f"@{name}"


def evaluate(assistant: str, cases: str, *args: str, output: str = "out.jsonl"):
    result = runner.invoke(
        app, ["eval", assistant, cases, "-o", output, *args], catch_exceptions=False
    )
    if not output.endswith(".jsonl"):
        return result, {}
    return result, {r.id: r for r in read_results(Path(output)).results}


def calls(result) -> list[dict[str, Any]]:
    return [call.to_dict() for call in result.trace.tool_calls]


def test_a_stub_answers_a_stdio_mcp_tool_and_other_calls_reach_the_server(project):
    stub = {
        "name": "get_forecast",
        "arguments": {"city": "regex:(?i)^atlantis$"},
        "result": ATLANTIS,
    }
    cases = write_cases(
        project,
        [
            {
                "id": "atlantis",
                "input": "What's the weather in Atlantis?",
                "tools": {"stubs": [stub]},
                "assert": {"type": "contains", "value": "The forecast for Atlantis: stubbed sunshine"},
            },
            {  # the same stub does not match Paris: the real server answers
                "id": "paris",
                "input": "What's the weather in Paris?",
                "tools": {"stubs": [stub]},
                "assert": [
                    {"type": "tool_result", "value": {"tool": "get_forecast", "result": {"city": "Paris"}}},
                    {"type": "tool_args_valid"},
                ],
            },
        ],
    )  # fmt: skip
    outcome, results = evaluate("weather", cases)
    assert outcome.exit_code == 0, outcome.output
    [atlantis] = calls(results["atlantis"])
    assert atlantis["stubbed"] is True and atlantis["server"] == "weather"
    assert atlantis["result"] == ATLANTIS
    [paris] = calls(results["paris"])
    assert "stubbed" not in paris and paris["result"]["city"] == "Paris"


def test_without_the_stub_the_real_server_says_the_city_is_unknown(project):
    cases = write_cases(project, [{"id": "a", "input": "What's the weather in Atlantis?"}])
    _, results = evaluate("weather", cases)
    [call] = calls(results["a"])
    assert "unknown city" in call["error"] and "stubbed" not in call


HOOK = """
def Next(ctx, payload):
    forecast = ctx.mcp.call_tool("weather", "get_forecast", {"city": "Atlantis"})
    return {"data": {"hook_saw": forecast["summary"]}}
"""


def test_a_stub_answers_a_hooks_ctx_mcp_call(project):
    (project / "assistants/weather/src").mkdir()
    (project / "assistants/weather/src/index.py").write_text(HOOK)
    stub = {"name": "weather__get_forecast", "arguments": {"city": "Atlantis"}, "result": ATLANTIS}
    cases = write_cases(
        project,
        [
            {
                "id": "hook",
                "input": "Hi",
                "tools": {"stubs": [stub]},
                "assert": {"type": "equals", "value": {"hook_saw": "stubbed sunshine"}},
            },
            {"id": "no-stub", "input": "Hi"},  # the real server refuses Atlantis
        ],
    )
    outcome, results = evaluate("weather", cases)
    assert results["hook"].status == "passed", outcome.output
    assert results["no-stub"].status == "error"
    assert "unknown city" in (results["no-stub"].error or "")


def test_a_file_defaults_stub_answers_a_process_tool_which_then_never_runs(project):
    stub = {
        "name": "submit_expense",
        "arguments": {"category": "travel"},
        "result": {"id": "EXP-STUB", "amount": 480, "category": "travel", "status": "stubbed"},
    }
    cases = write_cases(
        project,
        [
            {"defaults": {"tools": {"stubs": [stub]}}},
            {"id": "stubbed", "input": "Submit a travel expense of $480 for the Berlin trip",
             "assert": {"type": "contains", "value": "Submitted expense EXP-STUB"}},
            # Not travel: the real tool runs, and it is the first expense it ever stored.
            {"id": "real", "input": "submit $25 for lunch",
             "assert": {"type": "contains", "value": "Submitted expense EXP-0001"}},
        ],
    )  # fmt: skip
    outcome, results = evaluate("expense", cases)
    assert outcome.exit_code == 0, outcome.output
    [stubbed] = calls(results["stubbed"])
    assert stubbed["stubbed"] is True and stubbed["server"] == "expense"
    assert "stubbed" not in calls(results["real"])[0]


def test_once_lets_the_second_matching_call_through(project):
    (project / "assistants/weather/src").mkdir()
    (project / "assistants/weather/src/index.py").write_text(
        "def Next(ctx, payload):\n"
        "    first = ctx.mcp.call_tool('weather', 'get_forecast', {'city': 'Paris'})\n"
        "    second = ctx.mcp.call_tool('weather', 'get_forecast', {'city': 'Paris'})\n"
        "    return {'data': [first['summary'], second['city']]}\n"
    )
    stub = {"name": "get_forecast", "once": True, "result": {"summary": "from the stub"}}
    cases = write_cases(project, [{"id": "once", "input": "Hi", "tools": {"stubs": [stub]}}])
    outcome, results = evaluate("weather", cases)
    assert results["once"].output == ["from the stub", "Paris"], outcome.output


def test_a_delayed_stub_answers_after_its_delay(project):
    stub = {"name": "list_cities", "delay": "300ms", "result": {"cities": ["Atlantis"]}}
    cases = write_cases(
        project,
        [
            {
                "id": "slow",
                "input": "Which cities do you know?",
                "tools": {"stubs": [stub]},
                "assert": {"type": "contains", "value": "Atlantis"},
            }
        ],
    )
    started = time.perf_counter()
    outcome, results = evaluate("weather", cases)
    assert results["slow"].status == "passed", outcome.output
    assert results["slow"].duration_ms >= 300
    assert time.perf_counter() - started >= 0.3


def test_unmatched_error_fails_calls_no_stub_answers(project):
    cases = write_cases(
        project,
        [
            {
                "id": "offline",
                "input": "What's the weather in Paris?",
                "tools": {"unmatched": "error", "stubs": [{"name": "list_cities", "result": {}}]},
            }
        ],
    )
    _, results = evaluate("weather", cases)
    [call] = calls(results["offline"])
    assert call["error"].startswith("no stub of this case matches weather/get_forecast")
    assert call["error_type"] == "UnmatchedToolCall" and "stubbed" not in call


def test_an_mcp_tools_arguments_are_checked_against_its_schema(project):
    """tool_args_valid on a stdio MCP tool: the server's own input schema judges the call."""
    scripted = project / "assistants/weather/scripted.yml"
    scripted.write_text(
        scripted.read_text().replace(
            "rules:\n",
            'rules:\n  - when: {user: "(?i)forecast without a city"}\n'
            "    call: {name: get_forecast, arguments: {days: 3}}\n",
        )
    )
    cases = write_cases(
        project,
        [
            {"id": "valid", "input": "What's the weather in Paris?", "assert": "tool_args_valid"},
            {"id": "invalid", "input": "a forecast without a city", "assert": "tool_args_valid"},
        ],
    )
    _, results = evaluate("weather", cases)
    assert results["valid"].status == "passed"
    assert results["invalid"].status == "failed"
    message = results["invalid"].assertions[0].message or ""
    assert "get_forecast" in message and "city" in message


# -- faults --------------------------------------------------------------------------------

FAULT_CASES = [
    {"id": f"paris-{n}", "input": "What's the weather in Paris?",
     "assert": {"type": "contains", "value": "The forecast for Paris"}}
    for n in range(8)
]  # fmt: skip


def fault_marks(results) -> dict[str, Any]:
    return {case_id: [c.get("fault") for c in calls(r)] for case_id, r in results.items()}


def test_faults_are_the_same_under_the_same_seed_and_differ_under_another(project):
    cases = write_cases(project, FAULT_CASES)
    faults = "rate=0.5,kinds=timeout|error|malformed,seed={}"
    _, first = evaluate("weather", cases, "--faults", faults.format(42), output="a.jsonl")
    _, again = evaluate("weather", cases, "--faults", faults.format(42), "--parallel", "4",
                        output="b.jsonl")  # fmt: skip
    _, other = evaluate("weather", cases, "--faults", faults.format(7), output="c.jsonl")
    marks = fault_marks(first)
    assert marks == fault_marks(again)
    assert marks != fault_marks(other)
    assert {r.status for r in first.values()} == {"passed", "failed"}
    kinds = {kind for found in marks.values() for kind in found if kind}
    assert kinds <= {"timeout", "error", "malformed"} and kinds
    for result in first.values():
        [call] = calls(result)
        if call.get("fault") == "timeout":
            assert call["error"] == "weather/get_forecast timed out after 30s"
        elif call.get("fault") == "malformed":
            assert isinstance(call["result"], str) and not call["result"].endswith("}")
    header = json.loads(Path("a.jsonl").read_text().splitlines()[0])
    assert header["metadata"]["options"]["faults"] == faults.format(42)


def test_a_cases_faults_win_over_the_runs(project):
    cases = write_cases(
        project,
        [
            {"id": "always", "input": "What's the weather in Paris?",
             "tools": {"faults": "rate=1,kinds=error"}},
            {"id": "never", "input": "What's the weather in Paris?", "tools": {"faults": {"rate": 0}}},
        ],
    )  # fmt: skip
    _, results = evaluate("weather", cases, "--faults", "rate=1,kinds=timeout")
    assert [c["fault"] for c in calls(results["always"])] == ["error"]
    assert (
        calls(results["always"])[0]["error"] == "weather/get_forecast failed: service unavailable"
    )
    assert "fault" not in calls(results["never"])[0]


def test_runs_under_faults_report_pass_hat_k_as_robustness(project):
    cases = write_cases(project, FAULT_CASES[:2])
    outcome, _ = evaluate(
        "weather", cases, "--faults", "rate=0.5,seed=1", "--runs", "3", output="runs.md"
    )
    assert "pass^k under faults: k=1:" in outcome.output
    assert "| pass^k under faults |" in Path("runs.md").read_text()
    plain, _ = evaluate("weather", cases, "--runs", "3", output="plain.jsonl")
    assert "under faults" not in plain.output
    assert '"faults"' not in Path("plain.jsonl").read_text()


def test_the_expense_examples_world_cases_pass_and_are_marked(tmp_path, monkeypatch):
    """assistants/expense/tests/world.jsonl (the docs' stubs and faults) as shipped."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    output = str(tmp_path / "world.jsonl")
    outcome, results = evaluate("expense", "@assistants/expense/tests/world.jsonl", output=output)
    assert outcome.exit_code == 0, outcome.output
    assert all(result.status == "passed" for result in results.values())
    marks = {(c["tool"], c.get("stubbed", False), c.get("fault"))
             for result in results.values() for c in calls(result)}  # fmt: skip
    assert ("list_expenses", True, None) in marks  # the file's defaults stub
    assert ("submit_expense", True, None) in marks
    assert ("submit_expense", False, "timeout") in marks
    assert ("setup", False, "timeout") in marks  # seeded-faults: rate=0.5, seed=2

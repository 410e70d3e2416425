"""Step limits and tool execution set by package.yao, the case, the CLI and the Create hook
(issue 23), end to end through `agent eval` and `agent run` with the `steps` fixture: a task
of N `step` tool calls, one per model call, then the answer (N + 1 model calls)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentcli.cli.main import _register, app
from agentcli.eval.reports import read_results

ROOT = Path(__file__).resolve().parents[3]
STEPS = ROOT / "fixtures" / "assistants" / "steps"

_register()
runner = CliRunner()


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project with assistants/steps; cwd is the project."""
    shutil.copytree(STEPS, tmp_path / "assistants" / "steps")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AGENT_ROOT", raising=False)
    return tmp_path


def package(project: Path, **fields: Any) -> None:
    """Rewrite package.yao with ``fields`` beside the name and connector."""
    data = {"name": "Steps", "connector": "python:model:reply", **fields}
    (project / "assistants/steps/package.yao").write_text(json.dumps(data, indent=1))


def cases(project: Path, *items: dict[str, Any]) -> str:
    (project / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in items))
    return "@cases.jsonl"


def evaluate(*args: str):
    return runner.invoke(app, ["eval", "steps", *args, "-o", "out.jsonl"], catch_exceptions=False)


def results(project: Path):
    return read_results(project / "out.jsonl").results


LONG = {"id": "long", "input": "do 59 steps", "assert": {"type": "contains", "value": "finished"}}


def test_a_60_step_task_stops_visibly_at_20_and_passes_with_max_steps_60(project):
    ran = evaluate(cases(project, LONG))
    assert ran.exit_code == 1
    (cut,) = results(project)
    message = (
        "stopped at the step limit after 20 model calls (max_steps) before answering; "
        "the last 3 of 20 tool calls: step, step, step"
    )
    # the limit is the agent's failure (not an error of the harness), said under the case
    assert cut.status == "failed" and cut.error == message
    assert f"  └─ {message}" in ran.output
    assert (cut.trace.steps, cut.trace.stop_reason) == (20, "max_steps")
    saved = json.loads((project / "out.jsonl").read_text().splitlines()[1])["trace"]
    assert (saved["steps"], saved["stop_reason"]) == (20, "max_steps")

    package(project, max_steps=60)  # exactly the 60 model calls the task needs
    ran = evaluate(cases(project, LONG))
    assert ran.exit_code == 0, ran.output
    (done,) = results(project)
    assert done.status == "passed" and done.output == "finished 59 steps"
    assert (done.trace.steps, done.trace.stop_reason) == (60, None)  # "done" is not written


@pytest.mark.parametrize(
    ("levels", "steps"),
    [
        ({}, 20),  # the default
        ({"package": 5}, 5),
        ({"package": 5, "case": 7}, 7),  # the case over the package
        ({"package": 5, "case": 7, "cli": 9}, 9),  # the CLI over the case
        ({"package": 5, "case": 7, "cli": 9, "create": 11}, 11),  # the hook over everything
        ({"create": 3}, 3),
    ],
)
def test_each_level_overrides_the_step_limit_below_it(project, levels, steps):
    if "package" in levels:
        package(project, max_steps=levels["package"])
    case: dict[str, Any] = {"id": "long", "input": "do 30 steps"}
    if "case" in levels:
        case["options"] = {"max_steps": levels["case"]}
    if "create" in levels:
        case["metadata"] = {"create_max_steps": levels["create"]}
    flags = ["--max-steps", str(levels["cli"])] if "cli" in levels else []
    ran = evaluate(cases(project, case), *flags)
    assert ran.exit_code == 1, ran.output
    (cut,) = results(project)
    assert (cut.trace.steps, cut.trace.stop_reason) == (steps, "max_steps")
    assert f"after {steps} model calls" in (cut.error or "")


def test_the_cli_limit_is_shown_with_the_run_settings(project):
    ran = evaluate(cases(project, LONG), "--max-steps", "60")
    assert ran.exit_code == 0 and "ℹ Max steps: 60 per turn" in ran.output


def test_steps_and_stop_reason_assertions_judge_a_turn_cut_by_the_limit(project):
    expects_the_limit = {
        "id": "cut",
        "input": "do 30 steps",
        "options": {"max_steps": 4},
        "assert": [
            {"type": "stop_reason", "value": "max_steps"},
            {"type": "steps", "min": 4, "max": 4},
        ],
    }
    too_many = {"id": "many", "input": "do 5 steps", "assert": {"type": "steps", "max": 3}}
    answered = {
        "id": "ok",
        "input": "do 2 steps",
        "assert": [{"type": "stop_reason", "value": ["done"]}, {"type": "steps", "min": 3}],
    }
    ran = evaluate(cases(project, expects_the_limit, too_many, answered))
    assert ran.exit_code == 1
    cut, many, ok = results(project)
    assert cut.status == "passed", cut.error  # its assertions decide, not the limit
    assert [a.message for a in cut.assertions] == [
        'the turn ended with "max_steps"',
        "the turn made 4 model calls and stopped at the step limit",
    ]
    assert many.status == "failed"
    assert many.error == "expected at most 3 model calls; the turn made 6 model calls"
    assert ok.status == "passed"


@pytest.mark.parametrize(
    ("where", "value", "message"),
    [
        ("package", 0, "package.yao:4: field 'max_steps' must be at least 1, got 0"),
        ("package", "many", "package.yao:4: field 'max_steps' must be an integer, got a string"),
        ("case", 0, "cases.jsonl:1: options.max_steps: must be at least 1"),
        ("case", 2.5, "cases.jsonl:1: options.max_steps: must be an integer"),
    ],
)
def test_a_bad_step_limit_is_exit_2_with_its_file_and_line(project, where, value, message):
    case: dict[str, Any] = {"id": "x", "input": "do 1 steps"}
    if where == "package":
        package(project, max_steps=value)
    else:
        case["options"] = {"max_steps": value}
    ran = evaluate(cases(project, case))
    assert ran.exit_code == 2
    assert message in ran.output, ran.output


def test_a_bad_cli_limit_or_step_assertion_is_exit_2(project):
    assert evaluate(cases(project, LONG), "--max-steps", "0").exit_code == 2
    bad = [
        {"id": "a", "input": "do 1 steps", "assert": {"type": "steps"}},
        {"id": "b", "input": "do 1 steps", "assert": {"type": "steps", "min": 3, "max": 2}},
        {"id": "c", "input": "do 1 steps", "assert": {"type": "stop_reason", "value": "limit"}},
    ]
    ran = evaluate(cases(project, *bad))
    assert ran.exit_code == 2
    for problem in (
        'steps needs "min" and/or "max"',
        'steps "min" (3) is more than "max" (2)',
        'stop_reason "value" must be one of done, max_steps, failed, aborted (or a list); got "limit"',
    ):
        assert problem in ran.output, ran.output


def test_a_create_hook_limit_below_1_is_the_case_error(project):
    case = {"id": "x", "input": "do 1 steps", "metadata": {"create_max_steps": 0}}
    ran = evaluate(cases(project, case))
    assert ran.exit_code == 1
    (failed,) = results(project)
    assert failed.status == "error"
    assert "max_steps must be a positive integer, got 0" in (failed.error or "")


def test_agent_run_takes_max_steps(project):
    ran = runner.invoke(app, ["run", "steps", "do 30 steps", "--max-steps", "5"])
    assert ran.exit_code == 1
    assert "(stopped after 5 steps: max_steps reached)" in ran.output
    ran = runner.invoke(app, ["run", "steps", "do 30 steps", "--max-steps", "40"])
    assert ran.exit_code == 0 and "finished 30 steps" in ran.output


def _slow_order(project: Path, monkeypatch) -> list[str]:
    """The start/end order of three `slow` calls the model asks for at once."""
    log = project / "slow.log"
    monkeypatch.setenv("STEPS_LOG", str(log))
    ran = evaluate(cases(project, {"id": "slow", "input": "three slow"}))
    assert ran.exit_code == 0, ran.output
    return log.read_text().split("\n")[:-1]


def test_tools_run_at_once_unless_package_yao_asks_for_sequential(project, monkeypatch):
    assert _slow_order(project, monkeypatch) == [
        "start 0", "start 1", "start 2", "end 0", "end 1", "end 2",
    ]  # fmt: skip
    (project / "slow.log").unlink()
    package(project, tool_execution="sequential")
    assert _slow_order(project, monkeypatch) == [
        "start 0", "end 0", "start 1", "end 1", "start 2", "end 2",
    ]  # fmt: skip


def test_a_tool_named_sequential_in_its_mcp_yao_runs_its_batch_in_order(project, monkeypatch):
    server = project / "assistants/steps/mcps/work.mcp.yao"
    definition = json.loads(server.read_text())
    server.write_text(json.dumps({**definition, "sequential": ["slow"]}))
    assert _slow_order(project, monkeypatch) == [
        "start 0", "end 0", "start 1", "end 1", "start 2", "end 2",
    ]  # fmt: skip


def test_event_order_of_agent_run_follows_the_execution_mode(project):
    package(project, tool_execution="sequential")
    ran = runner.invoke(app, ["run", "steps", "three slow", "--json"])
    assert ran.exit_code == 0, ran.output
    events = [json.loads(line) for line in ran.output.splitlines() if line.startswith("{")]
    order = [
        f"{e['type'].rsplit('_', 1)[-1]} {e['call']['arguments']['n']}"
        for e in events
        if e["type"] in ("tool_execution_start", "tool_execution_end")
    ]
    assert order == ["start 0", "end 0", "start 1", "end 1", "start 2", "end 2"]


def test_bad_tool_execution_settings_are_exit_2(project):
    package(project, tool_execution="serial")
    ran = evaluate(cases(project, LONG))
    assert ran.exit_code == 2
    assert "field 'tool_execution' must be one of parallel, sequential, got \"serial\"" in (
        ran.output
    )
    package(project)
    server = project / "assistants/steps/mcps/work.mcp.yao"
    definition = json.loads(server.read_text())
    server.write_text(json.dumps({**definition, "sequential": ["slwo"]}))
    ran = evaluate(cases(project, LONG))
    assert ran.exit_code == 2
    assert "`sequential` names 'slwo', which is not a tool of server 'work'" in ran.output
    assert "did you mean 'slow'?" in ran.output


def test_a_raising_tool_shows_the_model_its_message_and_keeps_the_class(project):
    ran = evaluate(cases(project, {"id": "lookup", "input": "lookup"}))
    assert ran.exit_code == 0, ran.output
    (result,) = results(project)
    assert result.output == "saw: Order not found"  # not "ValueError: Order not found"
    (call,) = result.trace.tool_calls
    assert (call.error, call.error_type) == ("Order not found", "ValueError")


def test_a_dynamic_turn_cut_at_the_limit_ends_the_conversation_as_failed(project):
    shutil.copytree(ROOT / "fixtures/assistants/sim", project / "assistants/sim")
    case = {
        "id": "talk",
        "input": "do 1 steps",
        "options": {"max_steps": 3},
        "simulator": {"use": "sim.user", "options": {"metadata": {"default": "do 9 steps"}}},
        "checkpoints": [{"id": "nine", "assert": {"type": "contains", "value": "finished 9"}}],
        "max_turns": 4,
    }
    ran = evaluate(cases(project, case))
    assert ran.exit_code == 1
    (talk,) = results(project)
    assert talk.status == "failed"
    assert talk.error == (
        "agent turn 2 stopped at the step limit after 3 model calls (max_steps) before "
        "answering; tool calls: step, step, step"
    )
    assert talk.turns[-1].error == talk.error.removeprefix("agent turn 2 ")

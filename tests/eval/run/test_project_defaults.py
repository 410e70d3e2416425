"""The project config under the command line: a value of agentcli.yml that turns out wrong
when the run uses it (an unknown assistant, an unknown judge connector) is an error at the
line of agentcli.yml that gives it, exit 2; the same value given by a flag or by a case is
told where it was given."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcli.cli.main import _register, app

ROOT = Path(__file__).resolve().parents[3]
PROBE = ROOT / "fixtures" / "assistants" / "probe"

_register()
runner = CliRunner()

PLAIN = {"id": "hi", "input": "hello", "assert": {"type": "contains", "value": "Hello"}}
JUDGED = {
    "id": "judged",
    "input": "hello",
    "assert": {"type": "agent", "use": "agents:builtin.validator", "value": "it greets"},
}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """assistants/probe, and case files outside any package (so the project's assistant:
    is their target)."""
    shutil.copytree(PROBE, tmp_path / "assistants" / "probe")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PROBE_LOG", str(tmp_path / "hooks.log"))
    for name in ("AGENT_ROOT", "AGENT_ASSISTANT", "AGENT_JUDGE_CONNECTOR", "AGENT_CONNECTOR"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "tests").mkdir()
    for name, case in (("plain", PLAIN), ("judged", JUDGED)):
        (tmp_path / "tests" / f"{name}.jsonl").write_text(json.dumps(case) + "\n", "utf-8")
    return tmp_path


def config(project: Path, text: str) -> Path:
    path = project / "agentcli.yml"
    path.write_text("assistants: assistants\n" + text, encoding="utf-8")
    return path


def invoke(*args: str):
    return runner.invoke(app, ["eval", *args], catch_exceptions=False)


def test_an_unknown_project_assistant_is_told_at_its_line(project: Path) -> None:
    path = config(project, "suites: {main: tests/plain.jsonl}\nassistant: prob\n")
    result = invoke()
    assert result.exit_code == 2, result.output
    assert result.output == (
        f"error: {path}:3: assistant: unknown assistant 'prob'\n"
        f"  hint: did you mean probe? (searched {project / 'assistants'})\n"
    )
    result = invoke("@tests/plain.jsonl")  # a case file given, the project's assistant too
    assert result.exit_code == 2
    assert result.output.startswith(f"error: {path}:3: assistant: unknown assistant 'prob'\n")


def test_a_project_assistant_path_that_does_not_exist_is_told_at_its_line(project: Path) -> None:
    path = config(project, "assistant: ./nowhere\n")
    result = invoke("@tests/plain.jsonl")
    assert result.exit_code == 2
    assert result.output == (
        f"error: {path}:2: assistant: no assistant at path ./nowhere "
        f"({project / 'nowhere'} does not exist)\n"
    )


def test_the_environment_s_assistant_is_told_as_the_variable(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config(project, "")
    monkeypatch.setenv("AGENT_ASSISTANT", "prob")
    result = invoke("@tests/plain.jsonl")
    assert result.exit_code == 2
    assert result.output.startswith("error: env AGENT_ASSISTANT: unknown assistant 'prob'\n")


def test_a_broken_package_of_the_project_assistant_names_its_own_file(project: Path) -> None:
    package = project / "assistants" / "probe" / "package.yao"
    package.write_text('{"name": "p",\n "sort": "x"}', encoding="utf-8")
    config(project, "assistant: probe\n")
    result = invoke("@tests/plain.jsonl")
    assert result.exit_code == 2
    assert result.output.startswith(f"error: {package}:2: field 'sort' must be an integer")


def test_an_unknown_project_judge_connector_is_told_at_its_line(project: Path) -> None:
    path = config(project, "assistant: probe\njudge_connector: nope\n")
    result = invoke("@tests/judged.jsonl")
    assert result.exit_code == 2, result.output
    first = result.output.splitlines()[0]
    assert first.startswith(f"error: {path}:3: judge_connector: unknown connector 'nope'; ")
    assert first.endswith(
        "(the connector of the judge 'builtin.validator' of tests/judged.jsonl:1: case judged)"
    )


def test_the_environment_s_judge_connector_is_told_as_the_variable(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config(project, "assistant: probe\n")
    monkeypatch.setenv("AGENT_JUDGE_CONNECTOR", "nope")
    result = invoke("@tests/judged.jsonl")
    assert result.exit_code == 2
    assert result.output.startswith("error: env AGENT_JUDGE_CONNECTOR: unknown connector 'nope'; ")


def test_a_judge_connector_flag_or_a_case_s_own_is_told_at_the_case(project: Path) -> None:
    config(project, "assistant: probe\njudge_connector: nope\n")
    result = invoke("@tests/judged.jsonl", "--judge-connector", "flagged")
    assert result.exit_code == 2
    assert result.output.startswith(
        "error: tests/judged.jsonl:1: case judged: judge 'builtin.validator': "
        "unknown connector 'flagged'; "
    )
    case = {**JUDGED, "assert": {**JUDGED["assert"], "options": {"connector": "own"}}}
    (project / "tests" / "own.jsonl").write_text(json.dumps(case) + "\n", encoding="utf-8")
    result = invoke("@tests/own.jsonl")
    assert result.exit_code == 2
    assert result.output.startswith(
        "error: tests/own.jsonl:1: case judged: judge 'builtin.validator': "
        "unknown connector 'own'; "
    )


def test_a_good_project_judge_connector_runs(project: Path) -> None:
    # echo answers the validator with text that is no verdict: the case runs (and fails)
    config(project, "assistant: probe\njudge_connector: echo\n")
    result = invoke("@tests/judged.jsonl")
    assert result.exit_code in (0, 1), result.output
    assert "judge_connector" not in result.output


DYNAMIC = {
    "id": "talk",
    "input": "hello",
    "checkpoints": [{"id": "greets", "assert": {"type": "contains", "value": "Hello"}}],
}


def test_an_unknown_project_simulator_is_told_at_its_line(project: Path) -> None:
    (project / "tests" / "talk.jsonl").write_text(json.dumps(DYNAMIC) + "\n", "utf-8")
    path = config(project, "assistant: probe\nsimulator: nope\n")
    result = invoke("@tests/talk.jsonl")
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"error: {path}:3: simulator: simulator 'nope': ")
    own = {**DYNAMIC, "simulator": {"use": "nope-either"}}  # a case's own: told as before
    (project / "tests" / "own.jsonl").write_text(json.dumps(own) + "\n", "utf-8")
    result = invoke("@tests/own.jsonl")
    assert result.exit_code == 2
    assert result.output.startswith("error: simulator 'nope-either': ")

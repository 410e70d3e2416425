"""`agent eval` refuses before any case runs (exit 2, ``file:line``) what a case file gets
wrong and was once found only as it ran, or not at all: numbers JSON does not allow, seeded
sandbox paths that leave the workdir, state fixtures of data models the package lacks,
and non-text values of the assertions that look for text."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcli.cli.main import _register, app

ROOT = Path(__file__).resolve().parents[2]
PROBE = ROOT / "fixtures" / "assistants" / "probe"

_register()
runner = CliRunner()


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """assistants/probe (and the repository's shop, which has data models) in tmp_path."""
    shutil.copytree(PROBE, tmp_path / "assistants" / "probe")
    shutil.copytree(ROOT / "assistants" / "shop", tmp_path / "assistants" / "shop")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AGENT_ROOT", raising=False)
    monkeypatch.delenv("AGENT_CONNECTOR", raising=False)
    return tmp_path


def refused(project: Path, name: str, text: str, assistant: str = "probe") -> str:
    """The output of an eval of the case file ``name`` holding ``text``, checked to be
    refused with exit 2 before anything ran."""
    (project / name).write_text(text, encoding="utf-8")
    result = runner.invoke(
        app, ["eval", assistant, f"@{name}", "-o", "out.jsonl"], catch_exceptions=False
    )
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert not (project / "out.jsonl").exists()
    return result.output


@pytest.mark.parametrize(
    ("name", "text", "where", "token"),
    [
        (
            "a.jsonl",
            '{"id":"ok","input":"hi"}\n{"id":"x","input":"hi","assert":{"type":"latency","value":NaN}}\n',
            "a.jsonl:2: assert.value:",
            "NaN",
        ),
        (
            "a.jsonl",
            '{"id":"x","input":"hi","assert":{"type":"cost","value":Infinity}}\n',
            "a.jsonl:1: assert.value:",
            "Infinity",
        ),
        (
            "a.jsonl",
            '{"id":"x","input":"hi","timeout":-Infinity}\n',
            "a.jsonl:1: timeout:",
            "-Infinity",
        ),
        (
            "a.jsonl",
            '{"id":"x","input":"hi","expected":{"$approx":NaN}}\n',
            "a.jsonl:1: expected.$approx:",
            "NaN",
        ),
        ("a.jsonl", '{"id":"x","input":"hi","timeout":1e999}\n', "a.jsonl:1: timeout:", "1e999"),
        (
            "a.json",
            '[\n  {"id": "ok", "input": "hi"},\n  {"id": "x", "input": "hi",\n   "timeout": NaN}\n]\n',
            "a.json:3: timeout:",
            "NaN",
        ),
        (
            "a.json",
            '{"id": "x", "input": "hi", "timeout": Infinity}\n',
            "a.json:1: timeout:",
            "Infinity",
        ),
        (
            "a.yaml",
            "- id: ok\n  input: hi\n- id: x\n  input: hi\n  assert:\n    type: latency\n    value: .nan\n",
            "a.yaml:7: assert.value:",
            ".nan",
        ),
        ("a.yaml", "id: x\ninput: hi\ntimeout: -.inf\n", "a.yaml:3: timeout:", "-.inf"),
    ],
)
def test_a_number_json_does_not_allow_is_refused_at_its_line(project, name, text, where, token):
    output = refused(project, name, text)
    assert f"{where} {token} is " in output
    assert "JSON" in output and "write a finite number" in output


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("../../escape.txt", "has a '..' part"),
        ("/tmp/abs.txt", "is outside the workspace"),
        (".", "is the workdir itself"),
    ],
)
def test_a_seeded_sandbox_path_outside_the_workdir_is_refused_at_load(project, path, message):
    case = {"id": "x", "input": "hi", "sandbox": {"files": {path: "x"}}}
    output = refused(project, "s.jsonl", json.dumps(case) + "\n")
    assert f"s.jsonl:1: sandbox.files: sandbox path {path!r} {message}" in output
    assert "relative to the workdir" in output


def test_state_models_of_a_package_without_data_models_are_refused_before_the_run(project):
    case = {"id": "x", "input": "hi", "state": {"before": {"models": {"nope": [{"a": 1}]}}}}
    output = refused(project, "m.jsonl", json.dumps(case) + "\n")
    assert "m.jsonl:1: case x: state.before.models: probe has no data models" in output


def test_an_unknown_data_model_in_state_before_is_refused_before_the_run(project):
    case = {"id": "x", "input": "hi", "state": {"before": {"models": {"ordr": []}}}}
    output = refused(project, "m.jsonl", json.dumps(case) + "\n", assistant="shop")
    assert "m.jsonl:1: case x: state.before.models: unknown data model 'ordr'" in output


@pytest.mark.parametrize(
    ("assertion", "problem"),
    [
        ({"type": "contains", "value": 1}, 'contains "value" must be a string, got 1'),
        ({"type": "icontains", "value": True}, 'icontains "value" must be a string, got true'),
        ({"type": "not_contains", "value": 1}, 'not_contains "value" must be a string, got 1'),
        ({"type": "starts_with", "value": 2.5}, 'starts_with "value" must be a string, got 2.5'),
        (
            {"type": "contains_all", "value": ["a", 2]},
            'contains_all "value" items must be strings, got 2',
        ),
        ({"type": "agent", "value": 1}, 'agent assertion "value" must be the criteria as text'),
    ],
)
def test_a_non_text_value_of_a_text_assertion_is_refused(project, assertion, problem):
    case = {"id": "x", "input": "hi", "assert": assertion}
    output = refused(project, "t.jsonl", json.dumps(case) + "\n")
    assert f"t.jsonl:1: assert: {problem}" in output
    assert "put it in quotes" in output

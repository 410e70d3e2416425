"""`agent config`: every setting, its value and where it came from, as text and JSON."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from agentcli.cli.main import _register, app

_register()
runner = CliRunner()


@pytest.fixture
def clean_env(monkeypatch):
    for name in ("AGENT_ROOT", "AGENT_PARALLEL", "AGENT_TIMEOUT", "AGENT_EXCLUDE_TAGS"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_prints_each_value_and_its_source(tmp_path, clean_env):
    (tmp_path / "agentcli.yml").write_text(
        "# the project\nassistant: expense\nsuites:\n  smoke: tests/*.jsonl\nparallel: 4\n"
        "exclude_tags: [slow]\n",
        encoding="utf-8",
    )
    clean_env.chdir(tmp_path)
    clean_env.setenv("AGENT_TIMEOUT", "90s")
    result = runner.invoke(app, ["config"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert result.output == (
        f"Project: {tmp_path / 'agentcli.yml'}\n"
        "\n"
        "assistants       -               default\n"
        "connectors       -               default\n"
        "assistant        expense         agentcli.yml:2\n"
        "suites           smoke           agentcli.yml:3\n"
        "parallel         4               agentcli.yml:5\n"
        "timeout          90s             env AGENT_TIMEOUT\n"
        "retries          0               default\n"
        "runs_folder      .agentcli/runs  default\n"
        "output           runs            default\n"
        "simulator        -               default\n"
        "judge_connector  -               default\n"
        "exclude_tags     slow            agentcli.yml:6\n"
        "\n"
        "Suites:\n"
        "  smoke  tests/*.jsonl  (agentcli.yml:4)\n"
    )


def test_outside_a_project_says_so_and_shows_the_defaults(tmp_path, clean_env):
    clean_env.chdir(tmp_path)
    result = runner.invoke(app, ["config"], catch_exceptions=False)
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[0] == f"Project: none (no agentcli.yml or [tool.agentcli] found from {tmp_path})"
    assert "parallel         1             default" in lines
    assert "runs_folder      -             default" in lines
    assert "output           beside-cases  default" in lines


def test_json_output(tmp_path, clean_env):
    (tmp_path / "agentcli.yml").write_text("parallel: 3\n", encoding="utf-8")
    clean_env.chdir(tmp_path)
    result = runner.invoke(app, ["config", "--json"], catch_exceptions=False)
    data = json.loads(result.output)
    assert data["project"] == str(tmp_path / "agentcli.yml")
    assert data["settings"]["parallel"] == {
        "value": 3,
        "source": f"{tmp_path / 'agentcli.yml'}:1",
    }
    assert data["settings"]["timeout"] == {"value": 300.0, "source": "default"}


def test_a_bad_config_is_one_line_with_file_line_and_exit_2(tmp_path, clean_env):
    (tmp_path / "agentcli.yml").write_text("parallel: 2\ntimout: 3s\n", encoding="utf-8")
    clean_env.chdir(tmp_path)
    result = runner.invoke(app, ["config"])
    assert result.exit_code == 2
    first, hint = result.output.splitlines()
    assert first == (
        f"error: {tmp_path / 'agentcli.yml'}:2: unknown key 'timout' (did you mean 'timeout'?)"
    )
    assert hint.startswith("  hint: the keys of agentcli.yml: assistants, connectors,")

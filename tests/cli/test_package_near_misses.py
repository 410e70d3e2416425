"""A near miss of a known field in package.yao (``max_step``, ``conector``) is kept and not
used: ``agent run`` and ``agent eval`` say so, once, as ``agent list --check`` does, and say
nothing of a field far from every known one (a Yao extension). Real processes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.faults.harness import agent

PACKAGE = """{
  "name": "Parrot",
  "connector": "echo",
  "max_step": 3,
  "conector": "echo",
  "yao_extension": {"any": 1}
}
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An echo assistant ``parrot`` with two near misses and a Yao extension; a case file."""
    package = tmp_path / "assistants" / "parrot"
    package.mkdir(parents=True)
    (package / "package.yao").write_text(PACKAGE)
    (tmp_path / "cases.jsonl").write_text('{"id": "x", "input": "hello there"}\n')
    return tmp_path


def near_misses(project: Path) -> list[str]:
    file = project / "assistants" / "parrot" / "package.yao"
    return [
        f"{file}:4: unknown field 'max_step' (did you mean 'max_steps'?); it is not used",
        f"{file}:5: unknown field 'conector' (did you mean 'connector'?); it is not used",
    ]


def test_run_warns_of_each_near_miss_on_stderr(project):
    result = agent(project, "run", "parrot", "hi")
    assert (result.returncode, result.stdout) == (0, "hi\n"), result.stderr
    assert result.stderr == "".join(f"warning: {line}\n" for line in near_misses(project))


def test_eval_warns_of_each_near_miss_once_in_its_warning_lines(project):
    result = agent(project, "eval", "parrot", "@cases.jsonl", "-o", "p.jsonl")
    assert result.returncode == 0, result.stderr
    warned = [line for line in result.stdout.splitlines() if "unknown field" in line]
    assert warned == [f"⚠ {line}" for line in near_misses(project)]
    assert "yao_extension" not in result.stdout + result.stderr


def test_eval_json_gives_each_near_miss_as_a_warning_log_event(project):
    result = agent(project, "eval", "parrot", "@cases.jsonl", "-o", "p.jsonl", "--json")
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    warned = [e for e in events if e["type"] == "log" and "unknown field" in e["message"]]
    assert warned == [
        {"type": "log", "level": "warning", "message": line} for line in near_misses(project)
    ]


def test_list_check_still_reports_them_and_the_extension(project):
    result = agent(project, "list", "--check")
    for line in [*near_misses(project), "unknown field 'yao_extension' (kept, not used)"]:
        assert f"warning: {line}" in result.stdout + result.stderr

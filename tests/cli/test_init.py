"""``agent init``: the package it writes passes its own cases offline, in a folder outside
this repository (so nothing of assistants/ helps), and it never overwrites silently."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcli.cli.main import _register, app
from agentcli.eval.reports import read_results

_register()
runner = CliRunner()


@pytest.fixture
def outside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder outside the repository; cwd is it."""
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AGENT_ROOT", raising=False)
    monkeypatch.delenv("AGENT_CONNECTOR", raising=False)
    return project


def invoke(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_init_then_eval_passes_offline_with_the_builtin_judge_and_simulator(outside: Path):
    made = invoke("init", "order-desk")
    assert made.exit_code == 0, made.output
    assert made.stdout.splitlines() == [
        f"Created order-desk in {outside / 'order-desk'} (9 files). Try:",
        "  agent run order-desk 'Where is order A-1001?'",
        "  agent eval order-desk @order-desk/tests/cases.jsonl",
    ]
    package = outside / "order-desk"
    for name in (
        "package.yao",
        "prompts.yml",
        "scripted.yml",
        "src/index.py",
        "src/orders.py",
        "mcps/orders.mcp.yao",
        "mcps/mapping/orders/schemes/order_status.in.yao",
        "tests/cases.jsonl",
        "README.md",
    ):
        assert (package / name).is_file(), name
    assert '"name": "Order Desk"' in (package / "package.yao").read_text()
    # The scripted rules' own templates are written as they are, not rendered by init.
    assert "{{ match.order | upper }}" in (package / "scripted.yml").read_text()

    result = invoke("eval", "order-desk", "@order-desk/tests/cases.jsonl", "-o", "out.jsonl")
    assert result.exit_code == 0, result.output
    assert "Passed:    5" in result.output
    cases = {r.id: r for r in read_results(outside / "out.jsonl").results}
    assert set(cases) == {
        "greeting",
        "status-shipped",
        "status-lowercase",
        "unknown-order",
        "asks-for-the-number",
    }
    assert all(r.status == "passed" for r in cases.values())
    # An agent assertion without "use": builtin.validator judged it (its offline reason).
    (judged,) = [a for a in cases["unknown-order"].assertions if a.type == "agent"]
    assert judged.message == "the response contains 'Z-999', apologises"
    dynamic = cases["asks-for-the-number"]
    assert [t.input for t in dynamic.turns or []] == [
        "Hi, where is my order?",
        "I'd like to find out the status of order A-1001.",
    ]


def test_a_dynamic_case_naming_no_simulator_is_played_by_builtin_simulator(outside: Path):
    assert invoke("init", "desk").exit_code == 0
    cases = outside / "desk" / "tests" / "cases.jsonl"
    lines = [json.loads(line) for line in cases.read_text().splitlines() if line.startswith("{")]
    (conversation,) = [case for case in lines if "simulator" in case]
    del conversation["simulator"]["use"]
    (outside / "dynamic.jsonl").write_text(json.dumps(conversation) + "\n")
    result = invoke("eval", "desk", "@dynamic.jsonl", "-v", "-o", "out.jsonl")
    assert result.exit_code == 0, result.output
    assert "Turn 2: User: I'd like to find out the status of order A-1001." in result.output


def test_init_refuses_to_overwrite_unless_forced(outside: Path):
    assert invoke("init", "desk").exit_code == 0
    rules = outside / "desk" / "scripted.yml"
    rules.write_text("rules: []\n")
    (outside / "desk" / "notes.txt").write_text("mine")
    again = invoke("init", "desk")
    assert again.exit_code == 2
    assert again.stderr.splitlines() == [
        f"error: {outside / 'desk'} already has README.md, "
        "mcps/mapping/orders/schemes/order_status.in.yao, mcps/orders.mcp.yao ...; "
        "nothing was written",
        "  hint: pick another name, or pass --force to overwrite these files",
    ]
    assert rules.read_text() == "rules: []\n"
    forced = invoke("init", "desk", "--force")
    assert forced.exit_code == 0, forced.output
    assert "order_status" in rules.read_text()
    assert (outside / "desk" / "notes.txt").read_text() == "mine"  # not the scaffold's: kept


@pytest.mark.parametrize("name", ["9lives", "bad name", "dots.in.it"])
def test_an_invalid_name_is_a_usage_error(outside: Path, name: str):
    result = invoke("init", name)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: invalid package name {name!r}")
    assert not (outside / name).exists()


@pytest.mark.parametrize("name", ["", ".", "..", "desk/.."])
def test_a_name_that_is_no_new_folder_is_a_usage_error(outside: Path, name: str):
    # "" and "." used to scaffold into the current folder, printing commands that fail
    result = invoke("init", name)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: agent init {name!r}: name the new package's folder")
    assert not (outside / "package.yao").exists()


def test_the_projects_assistants_folder_takes_the_package_and_list_and_run_find_it(
    outside: Path,
):
    # agentcli.yml's assistants: is where init writes and where list and run look
    (outside / "pkgs").mkdir()
    (outside / "agentcli.yml").write_text("assistants: pkgs\n", encoding="utf-8")
    made = invoke("init", "desk")
    assert made.exit_code == 0, made.output
    assert (outside / "pkgs" / "desk" / "package.yao").is_file()
    assert made.stdout.splitlines()[-1] == "  agent eval desk @pkgs/desk/tests/cases.jsonl"
    listed = invoke("list")
    assert listed.exit_code == 0, listed.output
    assert "desk" in listed.stdout
    answered = invoke("run", "desk", "Where is order A-1001?")
    assert answered.exit_code == 0, answered.output


def test_a_file_in_the_way_is_a_usage_error(outside: Path):
    (outside / "desk").write_text("")
    result = invoke("init", "desk")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {outside / 'desk'} exists and is not a folder")


def test_in_a_project_with_assistants_the_package_goes_there(outside: Path):
    (outside / "assistants").mkdir()
    made = invoke("init", "desk")
    assert made.exit_code == 0, made.output
    assert made.stdout.splitlines()[-1] == "  agent eval desk @assistants/desk/tests/cases.jsonl"
    assert (outside / "assistants" / "desk" / "package.yao").is_file()
    checked = invoke("list", "--check")
    assert checked.exit_code == 0, checked.output
    assert checked.stdout.startswith("✓ desk  ")
    result = invoke("eval", "desk", "@assistants/desk/tests/cases.jsonl", "-o", "out.json")
    assert result.exit_code == 0, result.output


def test_the_installed_command_scaffolds_and_evaluates(outside: Path):
    """The real entry point, in a fresh process: the templates and helpers are found as
    package data, not through this checkout's assistants/."""
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    agent = [sys.executable, "-m", "agentcli"]
    subprocess.run([*agent, "init", "desk"], cwd=outside, env=env, check=True, timeout=60)
    done = subprocess.run(
        [*agent, "eval", "desk", "@desk/tests/cases.jsonl", "-o", "out.json"],
        cwd=outside,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads((outside / "out.json").read_text())["summary"]
    assert (summary["total"], summary["passed"]) == (5, 5)

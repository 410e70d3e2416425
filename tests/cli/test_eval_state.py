"""`agent eval --state`: a fresh store per run by default (so runs repeat), a kept folder,
the user's store; hooks seed the store the cases read; the temp folder never outlives the
run (failure, Ctrl-C, SIGTERM); `agent run` keeps the user's store."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentcli.cli.main import _register, app
from agentcli.eval.reports import read_results

ROOT = Path(__file__).resolve().parents[2]
ASSISTANTS = ROOT / "assistants"
PROBE = ROOT / "fixtures" / "assistants" / "probe"

_register()
runner = CliRunner()

# Hooks that seed memory and an assistant hook that answers with what the case can read.
SEED_HOOKS = """
def BeforeAll(ctx, cases):
    ctx.memory.user.set("plan", "seeded by BeforeAll")
    ctx.memory.user.push("visits", "BeforeAll")


def Before(ctx, case):
    ctx.memory.user.push("visits", "Before " + case["id"])


def AfterAll(ctx, results, data):
    ctx.memory.user.push("visits", "AfterAll")
"""
READ_MEMORY = """

def _reads_memory(ctx):
    return {"data": {"plan": ctx.memory.user.get("plan"), "visits": ctx.memory.user.get("visits")}}
"""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's store and the temp dir in tmp_path; cwd is the repository."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AGENT_ROOT", raising=False)
    monkeypatch.delenv("AGENT_CONNECTOR", raising=False)
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    return tmp_path / "home"


def eval_(*args: str) -> Any:
    return runner.invoke(app, ["eval", *args], catch_exceptions=False)


def expense(cases: str, out: Path, *args: str) -> list[dict[str, Any]]:
    """Run the expense example's case file into ``out``: its results, as dicts."""
    result = eval_("expense", f"@assistants/expense/tests/{cases}", "-o", str(out), *args)
    assert result.exit_code in (0, 1), result.output
    return [r.to_dict() for r in read_results(out).results]


def what_a_case_did(result: dict[str, Any]) -> Any:
    """A result's output and tool calls, without the clock's readings (timestamps and
    durations differ from run to run whatever the state)."""

    def timeless(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                k: timeless(v) for k, v in value.items() if k not in ("submitted_at", "duration_ms")
            }
        if isinstance(value, list):
            return [timeless(v) for v in value]
        return value

    calls = [
        (c["tool"], c["arguments"], timeless(c["result"])) for c in result["trace"]["tool_calls"]
    ]
    logs = [log["message"] for node in result["trace"]["logs"] for log in node["logs"]]
    return result["id"], result["status"], timeless(result["output"]), calls, logs


@pytest.mark.parametrize("cases", ["inputs.jsonl", "failing.jsonl"])
def test_two_runs_of_the_expense_example_give_identical_outputs(home, tmp_path, cases):
    first = expense(cases, tmp_path / "first.jsonl")
    second = expense(cases, tmp_path / "second.jsonl")
    # "Submitted expense EXP-0001 ..." both times, not EXP-0005 then EXP-0009
    assert [what_a_case_did(r) for r in first] == [what_a_case_did(r) for r in second]
    submitted = [
        call["result"]["id"]
        for result in first
        for call in result["trace"]["tool_calls"]
        if call["tool"] == "submit_expense" and call["result"]
    ]
    assert submitted[0] == "EXP-0001"
    assert not home.exists()  # the user's store was not touched
    assert list((tmp_path / "tmp").iterdir()) == []  # and the fresh folders are gone
    header = json.loads((tmp_path / "first.jsonl").read_text().splitlines()[0])
    assert header["metadata"]["options"]["state"] == "fresh"


def test_state_dir_persists_between_runs(home, tmp_path):
    state = tmp_path / "debug-state"
    submitted = eval_("expense", "Submit a travel expense of $480", "--state", str(state))
    assert submitted.exit_code == 0, submitted.output
    assert "EXP-0001" in submitted.output
    assert (state / "memory.sqlite3").is_file()
    again = eval_("expense", "Submit a travel expense of $20", "--state", str(state))
    assert "EXP-0002" in again.output  # the first run's expense is still there
    out = tmp_path / "r.jsonl"
    listed = eval_(
        "expense", "@assistants/expense/tests/inputs.jsonl", "--run", "^list$",
        "-u", "test-user", "--state", str(state), "-o", str(out),
    )  # fmt: skip
    assert "State: " + str(state) in listed.output
    (result,) = read_results(out).results
    assert "You have 2 expense(s) totaling $500.00" in str(result.output)
    assert json.loads(out.read_text().splitlines()[0])["metadata"]["options"]["state"] == str(state)
    assert not home.exists()


def test_state_persistent_uses_the_users_store_as_agent_run_does(home, tmp_path):
    ran = runner.invoke(app, ["run", "expense", "Submit $80 hotel", "-u", "alice"])
    assert ran.exit_code == 0, ran.output
    assert "EXP-0001" in ran.stdout
    assert (home / "memory.sqlite3").is_file()  # agent run: the user's store
    fresh = eval_("expense", "show my expenses", "-u", "alice")
    assert "You have no expenses yet." in fresh.output
    persistent = eval_("expense", "show my expenses", "-u", "alice", "--state", "persistent")
    assert "You have 1 expense(s) totaling $80.00: EXP-0001" in persistent.output
    ran_again = runner.invoke(app, ["run", "expense", "Submit $20 taxi", "-u", "alice"])
    assert "EXP-0002" in ran_again.stdout  # what eval --state fresh did never reached it


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("notes.txt", "--state {tmp}/notes.txt: not a folder"),
        ("notes.txt/sub", "--state {tmp}/notes.txt/sub: cannot write there"),
    ],
)
def test_an_unusable_state_exits_2_before_anything_runs(home, tmp_path, value, message):
    (tmp_path / "notes.txt").write_text("a file")
    out = tmp_path / "r.jsonl"
    result = eval_(
        "expense", "@assistants/expense/tests/inputs.jsonl", "--state", str(tmp_path / value),
        "-o", str(out),
    )  # fmt: skip
    assert result.exit_code == 2
    assert message.format(tmp=tmp_path) in result.output
    assert "Traceback" not in result.output and not out.exists()


@pytest.fixture
def seeding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A probe assistant whose Next hook answers with user memory, and seeding hooks."""
    project = tmp_path / "project"
    shutil.copytree(PROBE, project / "assistants" / "probe")
    src = project / "assistants" / "probe" / "src"
    (src / "seed_test.py").write_text(SEED_HOOKS)
    index = src / "index.py"
    text = index.read_text().replace(
        "def Next(ctx, payload, options):\n",
        "def Next(ctx, payload, options):\n"
        "    if ctx.metadata.get('read_memory'):\n"
        "        return _reads_memory(ctx)\n",
    )
    index.write_text(text + READ_MEMORY)
    cases = [
        {"id": f"reads-{n}", "input": "hello", "metadata": {"read_memory": True},
         "before": "seed_test.Before"}
        for n in (1, 2)
    ]  # fmt: skip
    (project / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    monkeypatch.chdir(project)
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PROBE_LOG", str(tmp_path / "probe.log"))
    monkeypatch.delenv("AGENT_ROOT", raising=False)
    return project


def seeded_run(out: Path, *args: str) -> list[Any]:
    """The cases of ``seeding`` with its BeforeAll and AfterAll: the outputs."""
    result = eval_(
        "probe", "@cases.jsonl", "--before-all", "seed_test.BeforeAll",
        "--after-all", "seed_test.AfterAll", "-o", str(out), *args,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return [r.output for r in read_results(out).results]


def test_before_all_and_before_seed_the_fresh_store_the_cases_read(seeding, tmp_path):
    outputs = seeded_run(tmp_path / "r.jsonl")
    assert outputs == [
        {"plan": "seeded by BeforeAll", "visits": ["BeforeAll", "Before reads-1"]},
        {
            "plan": "seeded by BeforeAll",
            "visits": ["BeforeAll", "Before reads-1", "Before reads-2"],
        },
    ]
    assert seeded_run(tmp_path / "again.jsonl") == outputs  # fresh again: nothing carried over
    assert not (tmp_path / "home").exists()


def test_hooks_seed_a_kept_state_folder_across_runs(seeding, tmp_path):
    state = tmp_path / "kept"
    seeded_run(tmp_path / "r.jsonl", "--state", str(state))
    outputs = seeded_run(tmp_path / "again.jsonl", "--state", str(state))
    first_run = ["BeforeAll", "Before reads-1", "Before reads-2", "AfterAll"]
    assert outputs[0]["visits"] == [*first_run, "BeforeAll", "Before reads-1"]


def _start(project: Path, temp: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "agentcli", "eval", "probe", *args],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "AGENTCLI_HOME": str(project / "home"), "TMPDIR": str(temp)},
    )


def _text(path: Path) -> str:
    return path.read_text() if path.exists() else ""


def _wait_for(predicate: Any, what: str) -> None:
    deadline = time.monotonic() + 20
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@pytest.mark.parametrize(
    ("signum", "args"),
    [
        (signal.SIGINT, ("@cases.jsonl", "-o", "r.jsonl")),
        (signal.SIGTERM, ("@cases.jsonl", "-o", "r.jsonl")),
        (signal.SIGTERM, ("sleep 30",)),  # one message: no run of cases to stop gracefully
    ],
    ids=["sigint-cases", "sigterm-cases", "sigterm-message"],
)
def test_an_interrupted_run_leaves_no_fresh_folder_behind(tmp_path, signum, args):
    project = tmp_path / "project"
    shutil.copytree(PROBE, project / "assistants" / "probe")
    (project / "cases.jsonl").write_text(
        json.dumps({"id": "fast", "input": "hello"}) + "\n"
        + json.dumps({"id": "slow", "input": "sleep 30"}) + "\n"
    )  # fmt: skip
    temp = tmp_path / "tmp"
    temp.mkdir()
    process = _start(project, temp, *args)
    try:
        results = project / "r.jsonl"
        _wait_for(lambda: any(temp.glob("agentcli-state-*")), "the fresh folder")
        if "-o" in args:
            _wait_for(lambda: '"id":"fast"' in _text(results), "the first result")
        time.sleep(0.5)  # the slow case (or message) is under way
        process.send_signal(signum)
        stdout, stderr = process.communicate(timeout=20)
    finally:
        process.kill()
    # Ctrl-C ends the process by SIGINT (a shell sees 130), SIGTERM with status 130.
    assert process.returncode == (-signal.SIGINT if signum == signal.SIGINT else 130), stderr
    assert "Traceback" not in stderr
    assert list(temp.iterdir()) == []
    if "-o" in args:  # the finished result is kept, as in any interrupted run
        assert [r.id for r in read_results(project / "r.jsonl").results] == ["fast"]
        assert "Interrupted: 1 of 2 test cases finished; their results are in" in stdout

"""Bad values on the ``agent eval`` command line: each exits 2 with one ``error:`` line (or
Click's usage error) naming the value, before any case runs, and never a traceback."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# name: (extra arguments after `agent eval probe @cases.jsonl`, what the message must name)
MISTAKES: dict[str, tuple[list[str], str]] = {
    "timeout-not-a-duration": (["--timeout", "abc"], '"abc"'),
    "timeout-zero": (["--timeout", "0s"], '"0s"'),
    "timeout-negative": (["--timeout", "-5s"], '"-5s"'),
    "parallel-zero": (["--parallel", "0"], "--parallel"),
    "parallel-not-a-number": (["--parallel", "many"], "--parallel"),
    "runs-negative": (["--runs", "-1"], "--runs"),
    "retries-negative": (["--retries", "-1"], "--retries"),
    "shard-out-of-range": (["--shard", "3/2"], "'3/2'"),
    "shard-garbage": (["--shard", "half"], "'half'"),
    "min-pass-rate-over-100": (["--min-pass-rate", "200"], "--min-pass-rate"),
    "unknown-output-extension": (["-o", "report.xyz"], ".xyz"),
    "ctx-missing": (["--ctx", "missing.json"], "missing.json"),
    "ctx-invalid-json": (["--ctx", "bad.json"], "bad.json:2:"),
    "ctx-not-an-object": (["--ctx", "list.json"], "list.json"),
    "run-filter-invalid-regex": (["--run", "("], "--run"),
    "resume-missing": (["--resume", "gone.jsonl"], "gone.jsonl"),
    "unknown-connector": (["-c", "nosuchconnector"], "nosuchconnector"),
}
UNKNOWN_ASSISTANT = "unknown-assistant"


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, subprocess.CompletedProcess]:
    """Every mistake run once, a few at a time (each is a fresh interpreter)."""
    project = tmp_path_factory.mktemp("cli-values")
    shutil.copytree(ROOT / "fixtures" / "assistants" / "probe", project / "assistants" / "probe")
    (project / "cases.jsonl").write_text('{"id": "a", "input": "hello"}\n')
    (project / "bad.json").write_text('{"chat_id": "c",\n  "locale": }\n')
    (project / "list.json").write_text("[1, 2]\n")
    env = {**os.environ, "AGENTCLI_HOME": str(project / "home"), "NO_COLOR": "1"}
    env.pop("AGENT_CONNECTOR", None)
    commands = {
        name: ["eval", "probe", "@cases.jsonl", *args] for name, (args, _) in MISTAKES.items()
    }
    commands[UNKNOWN_ASSISTANT] = ["eval", "prbe", "@cases.jsonl"]

    def run(args: list[str]) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "agentcli", *args],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )

    with ThreadPoolExecutor(max_workers=4) as pool:
        done = dict(zip(commands, pool.map(run, commands.values()), strict=True))
    assert not list(project.rglob("output-*.jsonl")), "a case ran despite the bad value"
    assert not (project / "report.xyz").exists()
    return done


@pytest.mark.parametrize("name", [*MISTAKES, UNKNOWN_ASSISTANT])
def test_a_bad_value_exits_2_with_one_clear_line(outcomes, name: str) -> None:
    run = outcomes[name]
    assert run.returncode == 2, (run.stdout, run.stderr)
    assert "Traceback" not in run.stdout + run.stderr
    assert "Running Tests" not in run.stdout
    errors = [line for line in run.stderr.splitlines() if line.lower().startswith("error")]
    assert len(errors) == 1, run.stderr
    named = MISTAKES[name][1] if name in MISTAKES else "prbe"
    assert named in errors[0], run.stderr
    if name == UNKNOWN_ASSISTANT:
        assert "probe" in run.stderr  # did you mean

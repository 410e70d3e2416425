"""Tool servers that cannot start: an unset ``$ENV`` in what decides which server runs is
bad input, named with the variable and the file before anything starts (exit 2); a server
that fails to start (not found, exits at once, never answers) is a failure of the run:
each case that needs it ends as ``error`` with a clear message (exit 1), within a bounded
wait, and no process is left behind."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from .harness import ROOT, agent, agent_env, assert_no_leftovers, check_complete, children_of

WEATHER = ROOT / "assistants" / "weather"


def weather(project: Path, **fields: object) -> Path:
    """The weather example in ``project`` with its server file's ``fields`` replaced."""
    folder = project / "assistants" / "weather"
    shutil.copytree(WEATHER, folder)
    spec = {"label": "Weather", "transport": "stdio", "command": "python"}
    spec.update({"arguments": ["mcps/server.py"], "timeout": 30}, **fields)
    (folder / "mcps" / "weather.mcp.yao").write_text(json.dumps(spec), encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    "fields",
    [
        {"arguments": ["$ENV.WEATHER_SERVER_FILE"]},
        {"arguments": ["mcps/server.py", "--mode=$ENV.WEATHER_SERVER_FILE"]},
        {"command": "$ENV.WEATHER_SERVER_FILE"},
        {"transport": "http", "url": "http://$ENV.WEATHER_SERVER_FILE/mcp"},
    ],
    ids=["arguments", "inside-an-argument", "command", "url"],
)
def test_unset_env_in_what_starts_a_server_is_an_error_before_anything_runs(
    project: Path, fields: dict
) -> None:
    folder = weather(project, **fields)
    cases = folder / "tests" / "inputs.jsonl"
    output = project / "out.jsonl"
    before = children_of(os.getpid())
    env = agent_env(project)
    env.pop("WEATHER_SERVER_FILE", None)
    started = time.monotonic()
    runs = {
        "eval": agent(project, "eval", "weather", f"@{cases}", "-o", str(output), env=env),
        "run": agent(project, "run", "weather", "weather in Paris?", env=env),
        "check": agent(project, "list", "--check", env=env),
    }
    assert time.monotonic() - started < 30
    key = next(iter(fields)) if "transport" not in fields else "url"
    for name, run in runs.items():
        text = run.stdout + run.stderr
        assert f"`{key}` uses $ENV.WEATHER_SERVER_FILE, but WEATHER_SERVER_FILE is not set" in (
            text
        ), (name, text)
        assert "weather.mcp.yao" in text and "Traceback" not in text, (name, text)
    assert runs["eval"].returncode == 2 and runs["run"].returncode == 2
    assert runs["check"].returncode == 1  # `list --check`: a package with errors
    assert not output.exists()  # nothing ran
    assert_no_leftovers(project, before)


def test_a_set_variable_starts_the_server(project: Path) -> None:
    weather(project, arguments=["$ENV.WEATHER_SERVER_FILE"])
    env = agent_env(project, WEATHER_SERVER_FILE="mcps/server.py")
    run = agent(project, "run", "weather", "weather in Paris?", env=env)
    assert run.returncode == 0, run.stderr
    assert "Paris" in run.stdout


FAILURES = {
    "not-found": ({"command": "no-such-tool-server-xyz", "arguments": []}, "No such file"),
    "exits-at-once": (
        {"arguments": ["-c", "import sys; print('no config', file=sys.stderr); sys.exit(3)"]},
        "exited (or closed its output) before answering",
    ),
    "never-answers": (
        {"arguments": ["-c", "import time; time.sleep(60)"], "timeout": 1},
        "did not start within 1s",
    ),
}


@pytest.mark.parametrize("fields, reason", FAILURES.values(), ids=FAILURES)
def test_a_server_that_fails_to_start_is_a_runtime_error(
    project: Path, fields: dict, reason: str
) -> None:
    weather(project, **fields)
    cases = project / "cases.jsonl"
    lines = [{"id": f"c{n}", "input": "weather in Paris?"} for n in range(2)]
    cases.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    total = len(lines)
    output = project / "out.jsonl"
    before = children_of(os.getpid())
    started = time.monotonic()
    run = agent(project, "run", "weather", "weather in Paris?", timeout=30)
    assert run.returncode == 1, (run.stdout, run.stderr)  # not 2: the input was fine
    assert "tool server 'weather'" in run.stderr and reason in run.stderr, run.stderr
    evaluated = agent(project, "eval", "weather", f"@{cases}", "-o", str(output), timeout=60)
    assert evaluated.returncode == 1, (evaluated.stdout, evaluated.stderr)
    outcome = check_complete(output, total)
    assert outcome.statuses == {"error": total}
    for result in outcome.report.results:
        assert "tool server 'weather'" in result.error and reason in result.error
    # Bounded: one start-up timeout (1 s) per case at most, plus the processes' start.
    assert time.monotonic() - started < 30
    assert_no_leftovers(project, before)


DEAF = {
    # Its stdout is not JSON-RPC: the SDK skips the line, and the start-up wait runs out.
    "prints-garbage": "print('garbage', flush=True); import time; time.sleep(60)",
    # Deaf to its stdin closing and to SIGTERM: only SIGKILL stops it.
    "ignores-sigterm": "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    "print('garbage', flush=True); time.sleep(60)",
}


@pytest.mark.parametrize("code", DEAF.values(), ids=DEAF)
def test_a_server_that_never_starts_is_reported_within_the_case_timeout_and_killed(
    project: Path, code: str
) -> None:
    weather(project, arguments=["-c", code], timeout=1)
    cases = project / "cases.jsonl"
    cases.write_text('{"id": "c0", "input": "weather in Paris?"}\n', encoding="utf-8")
    output = project / "out.jsonl"
    before = children_of(os.getpid())
    started = time.monotonic()
    ran = agent(
        project, "eval", "weather", f"@{cases}", "-o", str(output), "--timeout", "3s", timeout=20
    )
    # The start-up wait (1 s) inside the case timeout (3 s); then the SDK's bounded stop
    # (stdin closed, 2 s grace, SIGTERM, 2 s, SIGKILL) before the command ends.
    assert time.monotonic() - started < 9
    assert ran.returncode == 1, (ran.stdout, ran.stderr)
    outcome = check_complete(output, 1)
    assert outcome.statuses == {"error": 1}, outcome.report.results
    assert "tool server 'weather' did not start within 1s" in (
        outcome.report.results[0].error or ""
    )
    assert_no_leftovers(project, before, within=1)

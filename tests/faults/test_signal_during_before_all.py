"""A signal while BeforeAll runs: BeforeAll gets the grace period like any hook, and
AfterAll comes only after it ended (with its data), or not at all when BeforeAll is
still running when the grace period ends or a second signal cuts it short."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

from .harness import agent_env, start_agent, write_cases

SETTING_UP = """
import json, os, time


def _log(*parts):
    with open(os.environ["PROBE_LOG"], "a", encoding="utf-8") as handle:
        handle.write(json.dumps(parts) + "\\n")


def BeforeAll(ctx, cases):
    _log("BeforeAll started")
    time.sleep(float(os.environ["SET_UP_FOR"]))
    _log("BeforeAll ended")
    return {"data": {"made": "db"}}


def AfterAll(ctx, results, data):
    _log("AfterAll", data)
"""
HOOKS = ("--before-all", "setting_up.BeforeAll", "--after-all", "setting_up.AfterAll")


def hook_calls(project: Path) -> list[list]:
    log = project / "hooks.log"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def start_setting_up(project: Path, set_up_for: float, grace: float):
    """``agent eval`` of two cases whose BeforeAll takes ``set_up_for`` seconds, once it has
    started BeforeAll."""
    (project / "assistants/probe/src/setting_up.py").write_text(SETTING_UP)
    cases = write_cases(project / "cases.jsonl", 2)
    env = agent_env(project, SET_UP_FOR=str(set_up_for), AGENTCLI_STOP_GRACE=str(grace))
    output = project / "results.jsonl"
    process = start_agent(project, "eval", "probe", f"@{cases}", *HOOKS, "-o", str(output), env=env)
    deadline = time.monotonic() + 30
    while ["BeforeAll started"] not in hook_calls(project):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "BeforeAll never started"
        time.sleep(0.02)
    return process


def test_before_all_finishes_within_the_grace_period_then_after_all_cleans_up(project):
    process = start_setting_up(project, set_up_for=1.0, grace=30)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == -signal.SIGINT, stderr
    assert hook_calls(project) == [
        ["BeforeAll started"],
        ["BeforeAll ended"],
        ["AfterAll", {"made": "db"}],  # after BeforeAll, with what it set up
    ]
    assert "left behind" not in stdout
    assert "Interrupted: 0 of 2 test cases finished" in stdout
    assert "Traceback" not in stderr


def test_before_all_still_running_after_the_grace_period_is_left_behind_without_after_all(
    project,
):
    process = start_setting_up(project, set_up_for=3600, grace=0.5)
    process.send_signal(signal.SIGTERM)
    sent = time.monotonic()
    stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stderr
    assert 0.4 < time.monotonic() - sent < 5
    assert "BeforeAll was still running when the run stopped: left behind" in stdout
    assert "AfterAll (setting_up.AfterAll) not run: BeforeAll is still running" in stdout
    assert hook_calls(project) == [["BeforeAll started"]]


def test_a_second_signal_cuts_before_alls_grace_period_short(project):
    process = start_setting_up(project, set_up_for=3600, grace=60)
    process.send_signal(signal.SIGINT)
    time.sleep(0.5)
    assert process.poll() is None, "the first signal gives BeforeAll the grace period"
    process.send_signal(signal.SIGINT)
    sent = time.monotonic()
    stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == -signal.SIGINT, stderr
    assert time.monotonic() - sent < 3
    assert "BeforeAll was still running when the run stopped: left behind" in stdout
    assert hook_calls(project) == [["BeforeAll started"]]
    assert "Interrupted: 0 of 2 test cases finished" in stdout

"""One signal stops a run even while user code blocks: a sync Before, After, BeforeAll or
AfterAll hook, or a sync tool, that sleeps for an hour. Finished results and the summary are
written, hooks still running get the grace period (``AGENTCLI_STOP_GRACE``) and are then
left behind with a warning, and the process ends as an interrupted one."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

from agentcli.eval.reports import read_results

from .harness import (
    agent_env,
    assert_no_leftovers,
    children_of,
    start_agent,
    wait_for_results,
    with_tools,
)

BLOCKING = """
import os, time


def block():
    open(os.environ["PROBE_LOG"], "a").close()  # tells the test the code is blocking now
    time.sleep(3600)


def Before(ctx, case):
    if case["id"] == "c2":
        block()


def After(ctx, case, result, data):
    if case["id"] == "c2":
        block()


def BeforeAll(ctx, cases):
    block()


def AfterAll(ctx, results, data):
    block()


def Block(args):
    block()
"""
GRACE = 1.0


def blocking_project(project: Path) -> None:
    """The probe assistant with blocking hooks and a blocking sync tool ``block``."""
    with_tools(
        project / "assistants/probe",
        "blocking",
        BLOCKING,
        {"block": "blocking.Block"},
        '  - when: {user: "^block"}\n    call: {name: block}\n',
    )


def wait_for_blocking(project: Path, within: float = 30) -> None:
    """Wait until the blocking code has started (it creates the probe log)."""
    deadline = time.monotonic() + within
    while not (project / "hooks.log").exists():
        assert time.monotonic() < deadline, "the blocking code never started"
        time.sleep(0.02)
    time.sleep(0.1)


def cases_file(path: Path, inputs: list[str], **extra: str) -> Path:
    lines = [json.dumps({"id": f"c{i}", "input": text, **extra}) for i, text in enumerate(inputs)]
    path.write_text("\n".join(lines) + "\n")
    return path


SCENARIOS = {
    # name: (case inputs, extra case fields, extra flags, results on disk before the signal,
    # results kept in the end: c2 blocks, and results reach the file in case order)
    "Before": (["hello"] * 4, {"before": "blocking.Before"}, (), 2, ["c0", "c1", "c3"]),
    "After": (["hello"] * 4, {"after": "blocking.After"}, (), 2, ["c0", "c1", "c2", "c3"]),
    "BeforeAll": (["hello"] * 2, {}, ("--before-all", "blocking.BeforeAll"), 0, []),
    "AfterAll": (["hello"] * 2, {}, ("--after-all", "blocking.AfterAll"), 2, ["c0", "c1"]),
    "sync tool": (["hello", "block", "hello"], {}, (), 1, ["c0", "c2"]),
}


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_one_signal_stops_a_run_blocked_in_user_code(project, scenario, signum):
    blocking_project(project)
    inputs, extra, flags, finished, kept = SCENARIOS[scenario]
    cases = cases_file(project / "cases.jsonl", inputs, **extra)
    output = project / "results.jsonl"
    before = children_of(os.getpid())
    process = start_agent(
        project,
        *("eval", "probe", f"@{cases}", "--parallel", "2", *flags, "-o", str(output)),
        env=agent_env(project, AGENTCLI_STOP_GRACE=str(GRACE)),
    )
    if finished:
        wait_for_results(output, finished)
    wait_for_blocking(project)
    assert process.poll() is None, "the run must still be blocked before the signal"
    process.send_signal(signum)
    sent = time.monotonic()
    stdout, stderr = process.communicate(timeout=15)
    took = time.monotonic() - sent
    assert process.returncode == (-signal.SIGINT if signum == signal.SIGINT else 130), stderr
    assert took < GRACE + 2.5, f"took {took:.1f}s to stop"
    assert "Traceback" not in stderr and "internal error" not in stderr
    report = read_results(output)
    assert not report.warnings, report.warnings
    assert report.summary is not None, "the summary line was written"
    assert sorted(r.id for r in report.results) == kept
    assert report.summary.total == len(kept)
    assert "Interrupted:" in stdout
    if scenario != "sync tool":  # a hook was left running: the user is told
        assert "was still running when the run stopped: left behind" in stdout
    assert_no_leftovers(project, before)


def test_a_case_whose_after_hook_is_interrupted_keeps_its_result(project):
    """The case had finished when its After hook blocked: its result is not lost."""
    blocking_project(project)
    cases = cases_file(project / "cases.jsonl", ["hello"] * 3, after="blocking.After")
    output = project / "results.jsonl"
    process = start_agent(
        project,
        *("eval", "probe", f"@{cases}", "--parallel", "3", "-o", str(output)),
        env=agent_env(project, AGENTCLI_STOP_GRACE="0.5"),
    )
    wait_for_results(output, 2)
    wait_for_blocking(project)
    process.send_signal(signal.SIGINT)
    process.communicate(timeout=15)
    report = read_results(output)
    assert sorted(r.id for r in report.results) == ["c0", "c1", "c2"]
    assert {r.status for r in report.results} == {"passed"}

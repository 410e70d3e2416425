"""A second SIGTERM that comes while an interrupted run is leaving (its summary shown, the
interpreter winding down, here waiting for a thread the package's code left running) still
ends it with 130, never by the signal's default."""

from __future__ import annotations

import signal
import time

from .harness import agent_env, start_agent, write_cases

# Before leaves a (non-daemon) thread running: the interpreter waits for it as it exits.
LINGERING = """
import threading, time


def Before(ctx, case):
    threading.Thread(target=time.sleep, args=(3,), daemon=False).start()
    time.sleep(30)
"""


def test_a_second_sigterm_while_leaving_keeps_exit_130(project):
    (project / "assistants/probe/src/lingering.py").write_text(LINGERING)
    cases = write_cases(project / "cases.jsonl", 1, before="lingering.Before")
    output = project / "results.jsonl"
    env = agent_env(project, AGENTCLI_STOP_GRACE="0.2")
    process = start_agent(project, "eval", "probe", f"@{cases}", "-o", str(output), env=env)
    assert process.stdout is not None
    for line in process.stdout:
        if "Running Tests" in line:  # the run has its signal handlers
            break
    time.sleep(0.3)  # Before is running
    process.send_signal(signal.SIGTERM)
    for line in process.stdout:  # the run's last line: it is leaving now
        if "Interrupted:" in line:
            break
    time.sleep(0.3)
    assert process.poll() is None, "the process waits for the thread Before left"
    process.send_signal(signal.SIGTERM)
    _rest, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr

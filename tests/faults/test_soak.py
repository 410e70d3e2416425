"""The soak test: 2,000 cases at --parallel 32 through a loopback server that injects every
fault kind into 10% of requests must finish with every result written (and quickly)."""

from __future__ import annotations

import os
import time

from fixtures.openai_server import FAULTS, OpenAIServer

from .harness import (
    REASON,
    agent,
    assert_no_leftovers,
    check_complete,
    children_of,
    expected_exit,
    write_cases,
    write_connectors,
)

CASES = 2000
BUDGET_S = 60.0


def test_soak_2000_cases_with_10_percent_faults_loses_nothing(project, capsys):
    with OpenAIServer(fault_rate=0.1, seed=20260507, faults=FAULTS, record=False) as server:
        write_connectors(project, server.base_url, "echo", timeout=0.5)
        cases = write_cases(project / "soak.jsonl", CASES)
        before = children_of(os.getpid())
        started = time.monotonic()
        run = agent(
            project,
            *("eval", "probe", f"@{cases}", "-c", "loop", "--parallel", "32"),
            *("--retries", "1", "-o", "results.jsonl"),
            timeout=BUDGET_S + 30,
        )
        wall = time.monotonic() - started
    outcome = check_complete(project / "results.jsonl", CASES)
    assert [r.id for r in outcome.report.results] == [f"c{i:04d}" for i in range(CASES)]
    assert "Traceback" not in run.stderr, run.stderr
    assert run.returncode == expected_exit(outcome.statuses), (run.returncode, outcome.statuses)
    retried = sum(1 for r in outcome.report.results if r.trace and r.trace.retries)
    errors = [r for r in outcome.report.results if r.status == "error"]
    assert all(REASON.match(r.error) for r in errors), [r.error for r in errors[:3]]
    # Every model call retries its faults and --retries 1 re-runs a case hit mid-stream, so
    # nearly every case passes; the few left are errors with their reason, never lost.
    assert outcome.statuses["passed"] >= CASES * 0.97, outcome.statuses
    assert retried >= CASES * 0.05, retried
    assert wall < BUDGET_S, f"soak took {wall:.1f}s"
    assert_no_leftovers(project, before)
    with capsys.disabled():
        print(
            f"\n[soak] {CASES} cases, parallel 32, 10% faults: {wall:.1f}s, "
            f"{dict(outcome.statuses)}, {retried} cases retried a model call"
        )

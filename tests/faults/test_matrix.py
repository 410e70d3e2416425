"""The fault matrix: for each way a provider can fail, a 50-case ``agent eval`` at
``--parallel 8`` against the loopback server ends with every case in a defined status, a
complete results file, the exit code the statuses call for, a one-line reason on every
case that did not pass, and nothing left running (no process, no asyncio task)."""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agentcli.cli.views.json_events import JsonEvents
from agentcli.durations import parse_duration
from agentcli.eval.run.options import EvalOptions
from agentcli.eval.run.session import run_eval

from .harness import (
    agent,
    assert_no_leftovers,
    check_complete,
    children_of,
    expected_exit,
    write_cases,
    write_connectors,
)

CASES = 50
PARALLEL = 8
# Backoff of the test connectors (base 0.01 s, doubling, jitter 25%, cap 0.05 s) per retry.
BACKOFF = ((0.0075, 0.0125), (0.015, 0.025), (0.03, 0.05))


@dataclass(frozen=True, slots=True)
class Scenario:
    """One fault and what a run under it must end with."""

    id: str
    mode: str  # the loopback server's model-name mode (fixtures/openai_server.py)
    statuses: dict[str, int]
    exit: int
    retries: tuple[str, ...] = ()  # the kinds of model-call retries every case records
    delays: tuple[tuple[float, float], ...] = ()  # bounds of each retry's delay
    reason: str | None = None  # a pattern every non-passed case's error matches
    package: str = "probe"
    case_retries: int = 0  # --retries
    attempts: int | None = None  # runs of each case under --retries
    timeout: str | None = None  # --timeout
    model_timeout: float = 5.0  # the connector's timeout (short only where a stream stalls)
    in_process: bool = False  # also run in-process, to check for leaked asyncio tasks
    checks: tuple[str, ...] = ()  # extra checks by name ("bad_arguments")

    def cli_args(self, cases: Path, output: Path) -> list[str]:
        """The ``agent eval`` arguments of this scenario."""
        args = ["eval", self.package, f"@{cases}", "--parallel", str(PARALLEL), "-o", str(output)]
        if self.package == "probe":
            args += ["-c", "loop"]
        if self.case_retries:
            args += ["--retries", str(self.case_retries)]
        if self.timeout:
            args += ["--timeout", self.timeout]
        return args


ALL_PASSED = {"passed": CASES}
ALL_ERRORS = {"error": CASES}
RATE_LIMITED = r"^\[rate_limit\] openai model '[^']+': rate limited \(HTTP 429\): \S"
SERVER_ERROR = r"^\[provider_error\] openai model '[^']+': server error \(HTTP {}\): \S"
CONNECTION = r"^\[provider_error\] openai model '[^']+': connection failed: the connection broke"
TRUNCATED = r"^\[provider_error\] .*: the stream ended before the response was complete"

SCENARIOS = [
    Scenario(
        "429-storm-retry-after",
        "first-2-429+retry-after-30",
        ALL_PASSED,
        0,
        retries=("rate_limit", "rate_limit"),
        delays=((0.03, 0.03), (0.03, 0.03)),  # the server's Retry-After, not the backoff
        in_process=True,
    ),
    Scenario(
        "429-storm-no-retry-after",
        "first-2-429bare",
        ALL_PASSED,
        0,
        retries=("rate_limit", "rate_limit"),
        delays=BACKOFF[:2],
    ),
    Scenario(
        "429-storm-outlasting-attempts-with-case-retries",
        "first-5-429",
        ALL_PASSED,
        0,
        retries=("rate_limit",),  # the second run's one failed call
        case_retries=1,
        attempts=2,
    ),
    Scenario(
        "429-forever",
        "fail-429",
        ALL_ERRORS,
        1,
        retries=("rate_limit",) * 3,
        reason=RATE_LIMITED,
    ),
    Scenario(
        "500-transient",
        "first-2-500",
        ALL_PASSED,
        0,
        retries=("provider_error",) * 2,
        delays=((0.0, 0.0),) * 2,  # the server's 5xx say Retry-After: 0
    ),
    Scenario(
        "500-forever",
        "fail-500",
        ALL_ERRORS,
        1,
        retries=("provider_error",) * 3,
        reason=SERVER_ERROR.format(500),
        in_process=True,
    ),
    Scenario(
        "503-with-retry-after",
        "first-2-503+retry-after-20",
        ALL_PASSED,
        0,
        retries=("provider_error",) * 2,
        delays=((0.02, 0.02), (0.02, 0.02)),
    ),
    Scenario(
        "reset-before-any-byte",
        "first-2-reset",
        ALL_PASSED,
        0,
        retries=("provider_error",) * 2,
        delays=BACKOFF[:2],
        in_process=True,
    ),
    Scenario(
        "reset-forever",
        "fail-reset",
        ALL_ERRORS,
        1,
        retries=("provider_error",) * 3,
        reason=CONNECTION,
    ),
    Scenario(
        # Text was already streamed: a retry would repeat it, so the call is not retried.
        "reset-mid-stream",
        "fail-midreset",
        ALL_ERRORS,
        1,
        reason=CONNECTION,
        in_process=True,
    ),
    Scenario(
        "reset-mid-stream-with-case-retries",
        "first-2-midreset",
        ALL_PASSED,
        0,
        case_retries=2,
        attempts=3,
    ),
    Scenario("truncated-sse", "fail-truncate", ALL_ERRORS, 1, reason=TRUNCATED),
    Scenario(
        # The runtime refuses the call (the MCP tool never runs) and tells the model, which
        # answers with the error: the case fails its assertion, it does not crash.
        "invalid-tool-call-json",
        "tools+badargs",
        {"failed": CASES},
        1,
        reason=r"^expected output to contain ",
        package="loopy",
        checks=("bad_arguments",),
        in_process=True,
    ),
    Scenario(
        "stall-longer-than-the-model-timeout",
        "first-1-stall",
        ALL_PASSED,
        0,
        retries=("timeout",),
        model_timeout=0.5,
    ),
    Scenario(
        "stall-longer-than-the-case-timeout",
        "tools+fail-stall",
        {"timeout": CASES},
        1,
        reason=r"^timed out after 0\.3s$",
        package="loopy",
        timeout="300ms",
        model_timeout=0.5,
        in_process=True,
    ),
    Scenario(
        "empty-response",
        "fail-empty",
        {"failed": CASES},
        1,
        reason=r'^expected output to contain "hello c\d{4}"$',
        in_process=True,
    ),
]


def check_results(scenario: Scenario, results: list[dict[str, Any]]) -> None:
    """Every result shows the scenario's retries, re-runs and reasons."""
    for result in results:
        where = f"{scenario.id} [{result['id']}]"
        retries = (result.get("trace") or {}).get("retries") or []
        assert tuple(r["kind"] for r in retries) == scenario.retries, (where, retries)
        for retry, (low, high) in zip(retries, scenario.delays, strict=False):
            assert low <= retry["delay_s"] <= high, (where, retries)
        assert result.get("attempts") == scenario.attempts, (where, result.get("attempts"))
        if result["status"] != "passed":
            error = result.get("error") or ""
            assert "\n" not in error and re.search(scenario.reason or "^$", error), (where, error)
        if "bad_arguments" in scenario.checks:
            (call,) = result["trace"]["tool_calls"]
            assert call["tool"] == "lookup" and call["result"] is None, (where, call)
            assert "the arguments are not valid JSON" in call["error"], (where, call)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.id for s in SCENARIOS])
def test_fault_through_the_cli(scenario: Scenario, project: Path, server) -> None:
    write_connectors(project, server.base_url, scenario.mode, timeout=scenario.model_timeout)
    cases = write_cases(project / "cases.jsonl", CASES)
    output = project / "results.jsonl"
    before = children_of(os.getpid())
    run = agent(project, *scenario.cli_args(cases, output))
    outcome = check_complete(output, CASES)
    assert dict(outcome.statuses) == scenario.statuses, (outcome.statuses, run.stdout[-2000:])
    assert run.returncode == scenario.exit == expected_exit(outcome.statuses), run.stderr
    assert "Traceback" not in run.stderr + run.stdout
    check_results(scenario, [r.to_dict() for r in outcome.report.results])
    assert_no_leftovers(project, before)


IN_PROCESS = [s for s in SCENARIOS if s.in_process]


@pytest.mark.parametrize("scenario", IN_PROCESS, ids=[s.id for s in IN_PROCESS])
async def test_fault_in_process_leaves_no_task(scenario: Scenario, project: Path, server) -> None:
    write_connectors(project, server.base_url, scenario.mode, timeout=scenario.model_timeout)
    cases = write_cases(project / "cases.jsonl", CASES)
    before = asyncio.all_tasks()
    children = children_of(os.getpid())
    events = io.StringIO()
    options = EvalOptions(
        assistant=scenario.package,
        input=f"@{cases}",
        cwd=project,
        connector="loop" if scenario.package == "probe" else None,
        parallel=PARALLEL,
        retries=scenario.case_retries,
        output=project / "results.jsonl",
        **({"timeout": parse_duration(scenario.timeout)} if scenario.timeout else {}),
    )
    code = await run_eval(options, JsonEvents(events))
    await asyncio.sleep(0)  # let anything that was cancelled finish unwinding
    assert asyncio.all_tasks() - before == set()
    outcome = check_complete(project / "results.jsonl", CASES)
    assert dict(outcome.statuses) == scenario.statuses
    assert code == scenario.exit
    check_results(scenario, [r.to_dict() for r in outcome.report.results])
    types = Counter(json.loads(line)["type"] for line in events.getvalue().splitlines())
    assert types["test_result"] == CASES and types["summary"] == 1
    assert_no_leftovers(project, children)

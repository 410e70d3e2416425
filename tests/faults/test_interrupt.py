"""Interruptions: a signal mid-run keeps every finished result and the summary (exit 130),
a second signal leaves at once, ``--resume`` completes the run, and a results file torn by
a power loss is still read (with a warning) by the reader, ``--resume`` and ``extract``."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

from agentcli.eval.reports import read_results
from agentcli.eval.results.extract import extract

from .harness import (
    agent,
    agent_env,
    assert_no_leftovers,
    check_complete,
    children_of,
    start_agent,
    wait_for_results,
    write_cases,
    write_connectors,
)

CASES = 50
HOOKS = {"before": "stop_test.Before", "after": "stop_test.After"}
ALL_HOOKS = ("--before-all", "stop_test.BeforeAll", "--after-all", "stop_test.AfterAll")
# Hooks that log each call; Before takes a while, so a signal often lands while it runs.
STOP_HOOKS = """
import json, os, time


def _log(*parts):
    with open(os.environ["PROBE_LOG"], "a", encoding="utf-8") as handle:
        handle.write(json.dumps(parts) + "\\n")


def BeforeAll(ctx, cases):
    _log("BeforeAll")


def AfterAll(ctx, results, data):
    _log("AfterAll")


def Before(ctx, case):
    time.sleep(0.15)
    _log("Before", case["id"])
    return {"id": case["id"]}


def After(ctx, case, result, data):
    _log("After", case["id"], data["id"])
"""


def interrupted_exit(signum: int) -> int:
    """The exit status after ``signum``: Ctrl-C ends the process by SIGINT (a shell sees
    130), SIGTERM exits with 130."""
    return -signal.SIGINT if signum == signal.SIGINT else 130


def hook_calls(project: Path) -> list[list]:
    """The probe hooks' log, one JSON array per call."""
    return [json.loads(line) for line in (project / "hooks.log").read_text().splitlines()]


def interrupted_file(path: Path) -> list[dict]:
    """The results of an interrupted run's file, which must be whole (with its summary)."""
    report = read_results(path)
    assert not report.warnings, report.warnings
    assert report.summary is not None
    ids = [r.id for r in report.results]
    assert len(ids) == len(set(ids)) == report.summary.total
    assert {r.status for r in report.results} == {"passed"}
    return report.results


@pytest.mark.parametrize(
    ("signum", "wait"),
    [(signal.SIGINT, 0.0), (signal.SIGTERM, 0.25)],
    ids=["SIGINT-during-Before", "SIGTERM-during-the-model-call"],
)
def test_a_signal_keeps_finished_results_then_resume_completes(project, server, signum, wait):
    write_connectors(project, server.base_url, "slow-300")
    (project / "assistants/probe/src/stop_test.py").write_text(STOP_HOOKS)
    cases = write_cases(project / "cases.jsonl", CASES, **HOOKS)
    output = project / "results.jsonl"
    before = children_of(os.getpid())
    run_args = ("eval", "probe", f"@{cases}", "-c", "loop", "--parallel", "8", *ALL_HOOKS)
    process = start_agent(project, *run_args, "-o", str(output))
    wait_for_results(output, 8)  # the first wave is done, the second is in its Before hooks
    time.sleep(wait)
    process.send_signal(signum)
    stdout, stderr = process.communicate(timeout=20)
    assert process.returncode == interrupted_exit(signum), stderr
    assert "Traceback" not in stderr
    results = interrupted_file(output)
    assert 8 <= len(results) < CASES
    said = (
        f"Interrupted: {len(results)} of {CASES} test cases finished; their results are in {output}"
    )
    assert said in stdout
    calls = hook_calls(project)
    started = {c[1] for c in calls if c[0] == "Before"}
    cleaned = {c[1] for c in calls if c[0] == "After"}
    assert started == cleaned, "every case whose Before ran had its After run"
    assert all(c[1] == c[2] for c in calls if c[0] == "After"), "After got Before's data"
    assert started > {r.id for r in results}, "cases were still running when interrupted"
    assert [c[0] for c in calls if c[0].endswith("All")] == ["BeforeAll", "AfterAll"]
    assert calls[-1][0] == "AfterAll"
    assert_no_leftovers(project, before)

    write_connectors(project, server.base_url, "echo")
    resumed = agent(project, *run_args, "--resume", str(output))
    assert resumed.returncode == 0, resumed.stdout[-2000:] + resumed.stderr
    assert f"({len(results)} finished results kept)" in resumed.stdout
    assert resumed.stdout.count("► [") == CASES - len(results)  # only the rest ran
    outcome = check_complete(output, CASES)
    assert set(outcome.statuses) == {"passed"}
    assert outcome.report.results[: len(results)] == results  # kept as they were


def test_a_second_signal_cuts_the_clean_up_short_and_still_writes_the_summary(project, server):
    write_connectors(project, server.base_url, "slow-300")
    # An AfterAll that takes far longer than the test waits, and a grace period as long.
    (project / "assistants/probe/src/hang_test.py").write_text(
        "import time\n\n\ndef AfterAll(ctx, results, data):\n    time.sleep(60)\n"
    )
    cases = write_cases(project / "cases.jsonl", CASES)
    output = project / "results.jsonl"
    before = children_of(os.getpid())
    process = start_agent(
        project,
        *("eval", "probe", f"@{cases}", "-c", "loop", "--parallel", "8"),
        *("--after-all", "hang_test.AfterAll", "-o", str(output)),
        env=agent_env(project, AGENTCLI_STOP_GRACE="60"),
    )
    wait_for_results(output, 8)
    process.send_signal(signal.SIGINT)
    time.sleep(0.5)
    assert process.poll() is None, "the first signal lets AfterAll clean up (it still runs)"
    process.send_signal(signal.SIGINT)
    started = time.monotonic()
    stdout, stderr = process.communicate(timeout=10)
    assert process.returncode == -signal.SIGINT, stderr
    assert time.monotonic() - started < 3
    assert "AfterAll was still running when the run stopped: left behind" in stdout
    results = interrupted_file(output)  # every finished result and the summary
    assert len(results) >= 8
    assert_no_leftovers(project, before)

    # ... and --resume completes the report.
    write_connectors(project, server.base_url, "echo")
    resumed = agent(project, "eval", "probe", f"@{cases}", "-c", "loop", "--resume", str(output))
    assert resumed.returncode == 0, resumed.stderr
    check_complete(output, CASES)


def torn_copy(source: Path, target: Path) -> int:
    """``source`` as a power loss leaves it: no summary, the last result cut mid-line;
    returns how many results are still whole."""
    lines = source.read_text(encoding="utf-8").splitlines()
    results = lines[1:-1]
    target.write_text("\n".join(lines[:-2]) + "\n" + lines[-2][: len(lines[-2]) // 2])
    return len(results) - 1


def test_a_torn_last_line_is_read_with_a_warning_everywhere(project, server):
    write_connectors(project, server.base_url, "echo")
    cases = write_cases(project / "cases.jsonl", 10)
    done = agent(project, "eval", "probe", f"@{cases}", "-c", "loop", "-o", "full.jsonl")
    assert done.returncode == 0, done.stderr
    torn = project / "torn.jsonl"
    whole = torn_copy(project / "full.jsonl", torn)

    report = read_results(torn)
    assert len(report.results) == whole == 9
    assert any("last line is truncated" in w for w in report.warnings), report.warnings
    assert any("no summary line" in w for w in report.warnings), report.warnings

    seen: list[str] = []
    written = extract(torn, project / "cases-md", "markdown", on_warning=seen.append)
    assert len(written) == whole + 1  # one file per whole case, and the index
    assert any("last line is truncated" in w for w in seen)
    assert "last line is truncated" in (project / "cases-md" / "index.md").read_text()

    resumed = agent(project, "eval", "probe", f"@{cases}", "-c", "loop", "--resume", str(torn))
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.count("► [") == 1
    check_complete(torn, 10)


def test_agent_extract_prints_the_torn_line_warning(project, server):
    write_connectors(project, server.base_url, "echo")
    cases = write_cases(project / "cases.jsonl", 3)
    done = agent(project, "eval", "probe", f"@{cases}", "-c", "loop", "-o", "full.jsonl")
    assert done.returncode == 0, done.stderr
    torn = project / "torn.jsonl"
    torn_copy(project / "full.jsonl", torn)
    run = agent(project, "extract", str(torn), "-o", "out")
    assert run.returncode == 0, run.stderr
    assert "extracted 2 cases" in run.stdout
    assert "warning:" in run.stderr and "last line is truncated" in run.stderr

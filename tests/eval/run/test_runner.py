"""The eval runner against the probe assistant: statuses, order, timeouts, fail-fast, hooks."""

from __future__ import annotations

import asyncio
import json
import re
import time

import pytest

from agentcli.capture import routed_output
from agentcli.eval.results.model import CaseResult
from agentcli.eval.run.runner import BeforeAllFailed, EvalRunner
from agentcli.eval.run.services import EvalContext
from tests.eval.probe import Probe, cases


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PROBE_LOG", str(tmp_path / "hooks.log"))


def hook_log(tmp_path) -> list[list]:
    path = tmp_path / "hooks.log"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


async def test_statuses_and_trace():
    probe = Probe()
    results = await probe.run(
        {"id": "pass", "input": "hello", "assert": {"type": "contains", "value": "Hello"}},
        {"id": "fail", "input": "hello", "assert": {"type": "contains", "value": "Goodbye"}},
        {"id": "tool", "input": "add 2 3", "assert": {"type": "equals", "value": "sum=5"}},
        {"id": "skip", "input": "hello", "skip": True},
        {"id": "noassert", "input": "anything"},
    )
    status = {r.id: r.status for r in results}
    assert status == {
        "pass": "passed",
        "fail": "failed",
        "tool": "passed",
        "skip": "skipped",
        "noassert": "passed",
    }
    failed = probe.by_id()["fail"]
    assert failed.error == 'expected output to contain "Goodbye"'
    assert [a.passed for a in failed.assertions] == [False]
    tool = probe.by_id()["tool"]
    (call,) = tool.trace.tool_calls
    assert (call.server, call.tool, call.arguments, call.result, call.error) == (
        "probe",
        "add",
        {"a": 2, "b": 3},
        5,
        None,
    )
    assert tool.trace.usage.total_tokens > 0


async def test_a_failing_tool_is_recorded_with_its_error():
    probe = Probe()
    (result,) = await probe.run(
        {"id": "boom", "input": "boom", "assert": {"type": "contains", "value": "failed"}}
    )
    assert result.status == "passed"
    # the message as the model saw it; the exception class stays in the trace
    assert result.trace.tool_calls[0].error == "kaboom"
    assert result.trace.tool_calls[0].error_type == "RuntimeError"


async def test_parallel_runs_keep_report_order():
    probe = Probe(parallel=4)
    await probe.run(
        {"id": "a", "input": "sleep 0.3"},
        {"id": "b", "input": "sleep 0.2"},
        {"id": "c", "input": "sleep 0.1"},
        {"id": "d", "input": "sleep 0"},
    )
    assert [r.id for r in probe.results] == ["a", "b", "c", "d"]
    finished = [e.result.id for e in probe.events if e.type == "test_result"]
    assert finished == ["d", "c", "b", "a"]  # they really ran concurrently


async def test_parallel_beyond_the_cases_starts_a_worker_per_case_only():
    # --parallel far above the number of cases: as many workers as cases, not a task per
    # slot (a huge --parallel on a small file used to take all memory before the first case)
    probe = Probe(parallel=200_000)
    alive: list[int] = []  # the tasks there are as each case is taken

    def taken():
        for case in cases(
            {"id": "a", "input": "sleep 0.05"},
            {"id": "b", "input": "sleep 0.05"},
            {"id": "c", "input": "sleep 0"},
        ):
            alive.append(len(asyncio.all_tasks()))
            yield case

    try:
        await probe.runner.run(taken())
    finally:
        await probe.registry.aclose()
    assert [r.status for r in probe.results] == ["passed", "passed", "passed"]
    assert max(alive) < 50  # a few workers and cases, and the test's own


async def test_a_case_timeout_interrupts_a_slow_tool():
    probe = Probe(timeout=0.2)
    started = time.perf_counter()
    (result,) = await probe.run({"id": "slow", "input": "sleep 30"})
    assert time.perf_counter() - started < 5
    assert result.status == "timeout"
    assert result.error == "timed out after 0.2s"


async def test_case_timeout_overrides_the_default():
    probe = Probe(timeout=60)
    (result,) = await probe.run({"id": "slow", "input": "sleep 30", "timeout": "100ms"})
    assert result.status == "timeout"


async def test_fail_fast_with_parallel_cancels_running_cases():
    probe = Probe(parallel=3, fail_fast=True)
    started = time.perf_counter()
    await probe.run(
        {"id": "slow1", "input": "sleep 30"},
        {"id": "bad", "input": "hello", "assert": {"type": "contains", "value": "nope"}},
        {"id": "slow2", "input": "sleep 30"},
        {"id": "later", "input": "hello"},
    )
    assert time.perf_counter() - started < 5
    status = {r.id: r.status for r in probe.results}
    assert status["bad"] == "failed"
    assert status["slow1"] == status["slow2"] == "skipped"
    assert probe.by_id()["slow1"].error == "cancelled by --fail-fast"
    assert "later" not in status
    assert any(e.type == "log" and "--fail-fast" in e.message for e in probe.events)


async def test_run_filter():
    probe = Probe(run_filter=re.compile("^keep"))
    await probe.run({"id": "keep-1", "input": "hello"}, {"id": "drop", "input": "hello"})
    assert [r.id for r in probe.results] == ["keep-1"]


async def test_hook_order(tmp_path):
    probe = Probe(before_all="env_test.BeforeAll", after_all="env_test.AfterAll")
    outcome_cases = (
        {"id": "one", "input": "hello", "before": "env_test.Before", "after": "env_test.After"},
        {
            "id": "two",
            "input": "hello",
            "user": "alice",
            "before": "env_test.Before",
            "after": "env_test.After",
        },
    )
    try:
        outcome = await probe.runner.run(cases(*outcome_cases))
        await probe.runner.after_all(outcome.before_all_data)
    finally:
        await probe.registry.aclose()
    assert hook_log(tmp_path) == [
        ["BeforeAll", ["one", "two"], "en-us"],
        ["Before", "one", "test-user"],
        ["After", "one", "passed", {"seen": "one"}],
        ["Before", "two", "alice"],
        ["After", "two", "passed", {"seen": "two"}],
        ["AfterAll", {"token": "abc"}, [["one", "passed"], ["two", "passed"]]],
    ]


async def test_a_failing_before_marks_the_case_error_and_skips_agent_and_after(tmp_path):
    probe = Probe()
    (result,) = await probe.run(
        {"id": "x", "input": "hello", "before": "env_test.BeforeFails", "after": "env_test.After"}
    )
    assert result.status == "error"
    assert result.error.startswith(
        "before script failed: env_test.BeforeFails failed: ValueError: no database"
    )
    assert result.trace is None
    assert hook_log(tmp_path) == []


async def test_after_runs_when_the_case_failed_and_its_failure_is_a_warning(tmp_path):
    probe = Probe()
    (result,) = await probe.run(
        {
            "id": "x",
            "input": "hello",
            "assert": {"type": "contains", "value": "nope"},
            "before": "env_test.Before",
            "after": "env_test.AfterFails",
        }
    )
    assert result.status == "failed"
    warnings = [e.message for e in probe.events if e.type == "log" and e.level == "warning"]
    assert warnings == [
        "after script failed (x): env_test.AfterFails failed: ValueError: cleanup failed"
    ]


async def test_after_runs_after_a_timeout(tmp_path):
    probe = Probe(timeout=0.1)
    (result,) = await probe.run(
        {"id": "x", "input": "sleep 5", "before": "env_test.Before", "after": "env_test.After"}
    )
    assert result.status == "timeout"
    assert hook_log(tmp_path)[-1] == ["After", "x", "timeout", {"seen": "x"}]


async def test_a_failing_before_all_stops_the_run(tmp_path):
    probe = Probe(before_all="env_test.BeforeAllFails")
    with pytest.raises(BeforeAllFailed, match="no cluster"):
        await probe.run({"id": "x", "input": "hello"})
    assert probe.results == []


async def test_ctx_and_metadata_reach_the_agent():
    context = EvalContext(
        locale="zh-cn",
        user_id="u-ctx",
        team_id="t-ctx",
        chat_id="chat-1",
        metadata={"tenant": "acme"},
    )
    probe = Probe(context=context)
    (result,) = await probe.run(
        {"id": "x", "input": "hi", "metadata": {"echo_ctx": True, "case_key": 1}}
    )
    assert result.output == {
        "user_id": "u-ctx",
        "team_id": "t-ctx",
        "locale": "zh-cn",
        "chat_id": "chat-1",
        "metadata": {"tenant": "acme", "echo_ctx": True, "case_key": 1},
    }


async def test_cli_identity_wins_over_case_and_ctx():
    context = EvalContext(user_id="u-ctx", team_id="t-ctx")
    probe = Probe(context=context, user_id="u-cli")
    (result,) = await probe.run(
        {
            "id": "x",
            "input": "hi",
            "user": "u-case",
            "team": "t-case",
            "metadata": {"echo_ctx": True},
        }
    )
    assert (result.output["user_id"], result.output["team_id"]) == ("u-cli", "t-case")


async def test_a_connector_error_is_a_case_error():
    probe = Probe(connector="python:nowhere:nothing")
    (result,) = await probe.run({"id": "x", "input": "hi"})
    assert result.status == "error"
    assert "nowhere" in result.error


async def test_messages_hooks_send_are_kept_in_the_trace(tmp_path):
    probe = Probe()
    (result,) = await probe.run(
        {"id": "x", "input": "hi", "metadata": {"announce": "working on it"}}
    )
    assert [m["props"]["content"] for m in result.trace.sent] == ["working on it"]
    assert result.to_dict()["trace"]["sent"][0]["type"] == "text"


class Recording:
    """A ``CaseExecutor`` that records what it is given; run 1 of case ``flaky`` errs on
    its first attempt, and every case prints a line."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, int | None, float]] = []

    async def execute(self, case, run, *, started, timeout):
        self.seen.append((case.id, run, timeout))
        print(f"ran {case.id}")
        first = self.seen.count((case.id, run, timeout)) == 1
        if (case.id, run) == ("flaky", 1) and first:
            return CaseResult(id=case.id, status="error", error="boom", run=run)
        return CaseResult(id=case.id, status="passed", run=run)


async def test_the_runner_gives_an_executor_each_run_and_keeps_hooks_retries_skips_and_capture(
    tmp_path,
):
    probe = Probe(retries=1, timeout=7.0, runs=2, parallel=2)
    executor, results, events = Recording(), [], []
    runner = EvalRunner(
        probe.config, executor=executor, on_result=results.append, on_event=events.append
    )
    try:
        with routed_output():  # as the CLI runs: what a case prints becomes its logs
            await runner.run(
                cases(
                    {"id": "flaky", "input": "x", "before": "env_test.Before"},
                    {"id": "quick", "input": "y", "timeout": "2s", "after": "env_test.After"},
                    {"id": "off", "input": "z", "skip": True},
                )
            )
    finally:
        await probe.registry.aclose()
    assert [(r.id, r.run, r.status, r.attempts) for r in results] == [
        ("flaky", 1, "passed", 2),
        ("flaky", 2, "passed", None),
        ("quick", 1, "passed", None),
        ("quick", 2, "passed", None),
        ("off", 1, "skipped", None),
        ("off", 2, "skipped", None),
    ]
    assert sorted(executor.seen) == [
        ("flaky", 1, 7.0),
        ("flaky", 1, 7.0),
        ("flaky", 2, 7.0),
        ("quick", 1, 2.0),
        ("quick", 2, 2.0),
    ]
    assert results[2].logs == [{"stream": "stdout", "text": "ran quick"}]
    assert any("retrying [flaky] (attempt 2/2): boom" in e.message for e in events)
    assert sorted(map(tuple, hook_log(tmp_path))) == [
        ("After", "quick", "passed", None),
        ("After", "quick", "passed", None),
        ("Before", "flaky", "test-user"),
        ("Before", "flaky", "test-user"),
        ("Before", "flaky", "test-user"),
    ]


async def test_results_carry_their_cases_tags_whatever_the_status():
    probe = Probe()
    await probe.run(
        {"id": "ran", "input": "hello", "tags": ["smoke"]},
        {"id": "skipped", "input": "hello", "skip": True, "tags": "slow"},
        {"id": "plain", "input": "hello"},
    )
    tags = {r.id: r.tags for r in probe.results}
    assert tags == {"ran": ["smoke"], "skipped": ["slow"], "plain": []}

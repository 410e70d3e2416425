"""Reliability of eval runs: --retries for errored cases, model retries counted per case."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.assistant.session import AssistantRegistry
from agentcli.eval.run.runner import EvalConfig, EvalRunner
from tests.eval.probe import ROOT, cases


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))


async def run(package: Path, objects: list[dict], cwd: Path = ROOT, **config):
    registry = AssistantRegistry(None, cwd=cwd)
    events, results = [], []
    runner = EvalRunner(
        EvalConfig(assistant=registry.get(str(package)), registry=registry, **config),
        on_event=events.append,
        on_result=results.append,
    )
    try:
        await runner.run(cases(*objects))
    finally:
        await registry.aclose()
    return results, events


async def test_retries_rerun_a_case_that_ended_in_error():
    flaky = ROOT / "fixtures" / "assistants" / "flaky"
    (result,), events = await run(flaky, [{"id": "x", "input": "retry-me-1"}], retries=2)
    assert result.status == "passed"
    assert result.attempts == 2
    assert result.output == "ok: retry-me-1"
    assert any("retrying [x] (attempt 2/3)" in e.message for e in events if e.type == "log")
    # The attempt that ran again is told as such; the case's own result is the last one.
    told = [(e.result.status, e.retrying) for e in events if e.type == "test_result" and e.result]
    assert told == [("error", True), ("passed", False)]


async def test_without_retries_the_error_stands_with_its_kind():
    flaky = ROOT / "fixtures" / "assistants" / "flaky"
    (result,), events = await run(flaky, [{"id": "x", "input": "retry-me-2"}])
    assert result.status == "error"
    assert result.error == "[provider_error] upstream hiccup"
    assert result.attempts is None
    told = [(e.result.status, e.retrying) for e in events if e.type == "test_result" and e.result]
    assert told == [("error", False)]


async def test_model_retries_are_counted_in_the_case_trace(openai_server, tmp_path):
    from fixtures.openai_server import Reply

    (tmp_path / "connectors.yml").write_text(
        f"loop: {{model: openai/echo, api_base: '{openai_server.base_url}', api_key: none,"
        " retry: {max_attempts: 4, base_delay: 0.01}}\n"
    )
    openai_server.enqueue(Reply.failure(429, "slow down", headers={"Retry-After": "0"}))
    openai_server.enqueue(Reply.failure(503, "busy"))
    probe = ROOT / "fixtures" / "assistants" / "probe"
    (result,), _ = await run(probe, [{"id": "x", "input": "hello"}], cwd=tmp_path, connector="loop")
    assert result.status == "passed", result.error
    assert result.output == "hello"
    assert [r["kind"] for r in result.trace.retries] == ["rate_limit", "provider_error"]
    assert result.trace.to_dict()["retries"][0]["attempt"] == 1

"""OpenTelemetry export (issue 22, item 3): the spans a loopback OTLP/HTTP receiver gets from
``agent eval --otel``, decoded and checked: the run -> case -> turn -> model/tool tree, GenAI
attributes, statuses, redaction, and the ids the results file records."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcli import otel
from agentcli.cli.main import _register, app
from agentcli.eval.reports import read_results
from fixtures.openai_server import OpenAIServer, Reply
from fixtures.otlp_receiver import OtlpReceiver

ROOT = Path(__file__).resolve().parents[1]
SECRET = "sk-test-otel-0123456789abcdef"

_register()
runner = CliRunner()


@pytest.fixture
def receiver(monkeypatch):
    with OtlpReceiver() as running:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", running.endpoint)
        monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
        yield running
    otel.stop()  # a failed test must not leave telemetry on for the next


@pytest.fixture
def project(tmp_path, monkeypatch, no_proxies):
    shutil.copytree(ROOT / "fixtures/assistants/probe", tmp_path / "assistants/probe")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PROBE_LOG", str(tmp_path / "hooks.log"))
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)  # a secret the spans must never show
    monkeypatch.delenv("AGENT_ROOT", raising=False)
    return tmp_path


def write_cases(path: Path, cases: list[dict]) -> Path:
    path.write_text("".join(json.dumps(case) + "\n" for case in cases))
    return path


def test_eval_exports_a_run_case_turn_model_and_tool_tree(project, receiver):
    write_cases(
        project / "cases.jsonl",
        [
            {"id": "add", "input": "add 2 3", "assert": {"type": "contains", "value": "sum=5"}},
            # fails, and its failure message quotes the secret: the span must not
            {"id": "leak", "input": "hello", "assert": {"type": "contains", "value": SECRET}},
        ],
    )
    result = runner.invoke(app, ["eval", "probe", "@cases.jsonl", "--otel", "-o", "out.jsonl"])
    assert result.exit_code == 1, result.output
    (run,) = receiver.named("agent eval probe")
    assert run.parent_id == "" and run.status == "ERROR"
    assert run.attributes["agentcli.cases.total"] == 2
    assert run.attributes["agentcli.cases.passed"] == 1
    assert run.resource["service.name"] == "agentcli"
    cases = {span.attributes["agentcli.case.id"]: span for span in receiver.named("eval case ")}
    assert set(cases) == {"add", "leak"}
    assert all(
        span.parent_id == run.span_id and span.trace_id == run.trace_id for span in cases.values()
    )
    assert (
        cases["add"].status == "UNSET"
        and cases["add"].attributes["agentcli.case.status"] == "passed"
    )
    assert (
        cases["leak"].status == "ERROR"
        and 'expected output to contain "[redacted]"' in cases["leak"].message
    )
    assert SECRET not in json.dumps([span.message for span in receiver.spans])
    assert SECRET not in json.dumps([span.attributes for span in receiver.spans])
    turns = {span.parent_id: span for span in receiver.named("invoke_agent ")}
    assert set(turns) == {cases["add"].span_id, cases["leak"].span_id}
    add_turn = turns[cases["add"].span_id]
    assert add_turn.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert add_turn.attributes["gen_ai.agent.id"] == "probe"
    chats = [span for span in receiver.named("chat ") if span.parent_id == add_turn.span_id]
    assert len(chats) == 2  # the call asking for the tool, the answer after it
    assert chats[0].attributes["gen_ai.system"] == "offline"
    assert chats[0].attributes["gen_ai.response.finish_reasons"] == ["tool_calls"]
    assert chats[0].attributes["gen_ai.usage.input_tokens"] > 0
    (tool,) = receiver.named("execute_tool probe__add")
    assert tool.parent_id == add_turn.span_id
    assert tool.attributes["gen_ai.tool.name"] == "probe__add" and tool.status == "UNSET"
    loaded = read_results(project / "out.jsonl")
    assert loaded.header.metadata["otel"] == {"trace_id": run.trace_id, "span_id": run.span_id}
    for case in loaded.results:  # the results file links each case to its span
        assert case.otel == {"trace_id": run.trace_id, "span_id": cases[case.id].span_id}


def test_model_calls_carry_genai_usage_and_failing_tools_fail_their_span(project, receiver):
    with OpenAIServer(latency=0.0) as server:
        (project / "connectors.yml").write_text(
            f"loop: {{model: openai/gpt-4o, api_base: '{server.base_url}', api_key: none}}\n"
        )
        write_cases(project / "cases.jsonl", [{"id": "hi", "input": "hi"}])
        server.enqueue(Reply(text="hi", usage={"prompt_tokens": 11, "completion_tokens": 7}))
        result = runner.invoke(app, ["eval", "probe", "@cases.jsonl", "-c", "loop", "--otel"])
    assert result.exit_code == 0, result.output
    (chat,) = receiver.named("chat gpt-4o")
    assert chat.attributes["gen_ai.system"] == "openai"
    assert chat.attributes["gen_ai.request.model"] == "gpt-4o"
    assert (
        chat.attributes["gen_ai.usage.input_tokens"],
        chat.attributes["gen_ai.usage.output_tokens"],
    ) == (11, 7)
    assert chat.attributes["agentcli.cost_usd"] > 0  # gpt-4o is in litellm's cost map
    write_cases(project / "boom.jsonl", [{"id": "boom", "input": "boom"}])
    assert runner.invoke(app, ["eval", "probe", "@boom.jsonl", "--otel"]).exit_code == 0
    (tool,) = receiver.named("execute_tool probe__boom")
    assert tool.status == "ERROR" and tool.message


def test_the_endpoint_variable_alone_turns_export_on(project, receiver, monkeypatch):
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint.removesuffix("/v1/traces"))
    write_cases(project / "cases.jsonl", [{"id": "hello", "input": "hello"}])
    assert runner.invoke(app, ["eval", "probe", "@cases.jsonl"]).exit_code == 0
    assert len(receiver.named("eval case hello")) == 1
    assert not otel.enabled()  # off again once the run is over


def test_a_collector_that_is_down_costs_a_bounded_wait_and_loses_no_result(project, monkeypatch):
    import socket
    import time

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", f"http://127.0.0.1:{port}/v1/traces")
    write_cases(project / "cases.jsonl", [{"id": "hello", "input": "hello"}])
    started = time.monotonic()
    result = runner.invoke(app, ["eval", "probe", "@cases.jsonl", "--otel", "-o", "out.jsonl"])
    assert result.exit_code == 0, result.output
    assert time.monotonic() - started < 15
    assert [case.status for case in read_results(project / "out.jsonl").results] == ["passed"]
    # one warning line, not the SDK's retry log (a line per attempt, then "Failed to export")
    told = [line for line in result.output.splitlines() if "OpenTelemetry" in line]
    assert len(told) == 1 and told[0].startswith("warning: OpenTelemetry: spans are not exported")
    assert "Transient error" not in result.output.replace(told[0], "")
    assert "Failed to export" not in result.output

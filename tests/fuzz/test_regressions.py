"""The inputs the fuzzers and fault runs found crashing or leaking, pinned as plain tests."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from agentcli.assistant.identity import load_context_file
from agentcli.cli.views.console import ConsoleView
from agentcli.errors import CaseFileError, ConfigError, PackageError
from agentcli.eval.cases.load import load_cases
from agentcli.models.connectors import load_connectors_file
from agentcli.models.errors_map import map_error
from agentcli.models.scripted import ScriptedModel
from agentcli.secrets import refresh_secrets
from tests.eval.reports.page import report_data


def test_a_control_character_in_a_yaml_case_file_is_a_case_file_error(tmp_path: Path) -> None:
    path = tmp_path / "cases.yaml"
    path.write_text("- id: a\n  input: hi\n\x08- id: b\n")
    with pytest.raises(CaseFileError) as caught:
        load_cases(path, project_root=tmp_path)
    (problem,) = caught.value.problems
    assert problem.endswith("cases.yaml:3: invalid YAML: character #x0008 is not allowed")


def test_a_control_character_in_rule_and_connector_files_names_file_and_line(tmp_path) -> None:
    rules = tmp_path / "scripted.yml"
    rules.write_text("rules:\n  - say: hi\x1f\n")
    with pytest.raises(PackageError) as caught:
        ScriptedModel.from_file(rules)
    assert str(caught.value) == f"{rules}:2: invalid YAML: character #x001f is not allowed"
    connectors = tmp_path / "connectors.yml"
    connectors.write_text("\x1floop: openai/echo\n")
    with pytest.raises(ConfigError) as caught:
        load_connectors_file(connectors)
    assert str(caught.value) == f"{connectors}:1: invalid YAML: character #x001f is not allowed"


def test_a_ctx_file_that_is_not_utf8_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "ctx.json"
    path.write_bytes('{"chat_id": "c"}'.encode("utf-16"))
    with pytest.raises(ConfigError, match=r"ctx\.json:1: the file is UTF-16 text, not UTF-8"):
        load_context_file(path)
    path.write_bytes(b'\xef\xbb\xbf{"chat_id": "c"}')  # a BOM, as some editors save JSON
    assert load_context_file(path).chat_id == "c"


def test_a_dropped_connection_says_what_broke() -> None:
    import httpx2

    error = map_error(httpx2.ReadError(""), provider="openai", model="m")
    assert str(error) == (
        "openai model 'm': connection failed: the connection broke while reading the response"
    )
    assert error.retryable and error.kind == "provider_error"


def test_the_console_redacts_secrets_on_a_terminal_too(monkeypatch) -> None:
    monkeypatch.setenv("EXAMPLE_API_KEY", "zq7Xw2Lm9PvRt4KsB8nD")
    refresh_secrets()
    try:
        for terminal in (True, False):
            out = io.StringIO()
            view = ConsoleView(Console(file=out, force_terminal=terminal, width=200))
            view.error("the provider said: you sent zq7Xw2Lm9PvRt4KsB8nD")
            assert "zq7X" not in out.getvalue()
            assert "you sent [redacted]" in out.getvalue()
    finally:
        monkeypatch.delenv("EXAMPLE_API_KEY")
        refresh_secrets()


def test_a_turn_whose_checkpoints_reached_is_not_a_list_renders_in_every_format(tmp_path):
    """Found by the results-file fuzzer: ``"checkpoints_reached": true`` in a hand-edited
    file made the Markdown and HTML transcripts raise."""
    import json

    from agentcli.eval.reports import read_results, writer_for
    from agentcli.eval.results.extract import extract

    path = tmp_path / "results.jsonl"
    lines = [
        {"type": "header"},
        {
            "type": "result",
            "id": "done",
            "status": "passed",
            "turns": [
                {"turn": 1, "output": "ok", "checkpoints_reached": True},
            ],
        },
    ]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    report = read_results(path)
    extract(path, tmp_path / "md", "markdown")
    for suffix in (".md", ".html"):
        writer = writer_for(tmp_path / f"report{suffix}")
        writer.open(report.header)
        writer.add(report.results[0])
        writer.close(report.report().summary, None)
        text = (tmp_path / f"report{suffix}").read_text(encoding="utf-8")
        if suffix == ".md":
            assert "Turn 1" in text
        else:  # a passed case is its row in the HTML report
            assert report_data(text)["cases"][0][1] == "done"

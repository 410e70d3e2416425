"""The response cache (issue 15): a model call asked again with the same request is answered
from disk — judges re-asked about the same output above all — while under --runs the agent
under test always calls its model, so its repeats stay independent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcli.cli.main import _register, app
from agentcli.eval.reports import read_results
from fixtures.openai_server import OpenAIServer

_register()
runner = CliRunner()

JUDGE = """
import json, os


def verdict(messages, tools, settings):
    with open(os.environ["JUDGE_LOG"], "a", encoding="utf-8") as log:
        log.write("asked\\n")
    return json.dumps({"passed": True, "reason": "fine"})
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    """`greeter` answers through the loopback server; `judge` is a python: model that notes
    each call it answers in $JUDGE_LOG."""
    (tmp_path / "assistants/greeter").mkdir(parents=True)
    (tmp_path / "assistants/greeter/package.yao").write_text(
        '{"name": "Greeter", "connector": "loop"}'
    )
    (tmp_path / "assistants/judge/src").mkdir(parents=True)
    (tmp_path / "assistants/judge/package.yao").write_text(
        '{"name": "Judge", "connector": "python:model:verdict"}'
    )
    (tmp_path / "assistants/judge/src/model.py").write_text(JUDGE)
    case = {
        "id": "hello",
        "input": "hello there",
        "assert": [
            {"type": "contains", "value": "hello"},
            {"type": "agent", "use": "agents:judge", "value": "It greets"},
        ],
    }
    (tmp_path / "cases.jsonl").write_text(json.dumps(case) + "\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("JUDGE_LOG", str(tmp_path / "judge.log"))
    monkeypatch.delenv("AGENT_ROOT", raising=False)
    return tmp_path


def judged(project: Path) -> int:
    log = project / "judge.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_repeated_calls_come_from_the_cache_but_never_the_agents_repeats(project):
    with OpenAIServer(latency=0.0) as server:
        (project / "connectors.yml").write_text(
            f"loop: {{model: openai/echo, api_base: '{server.base_url}', api_key: none}}\n"
        )

        def run(*args: str) -> tuple[int, int]:
            """(model calls the server saw, judge calls) during one eval."""
            calls, verdicts = len(server.requests), judged(project)
            ran = runner.invoke(app, ["eval", "greeter", "@cases.jsonl", "--cache", *args])
            assert ran.exit_code == 0, ran.output
            return len(server.requests) - calls, judged(project) - verdicts

        # --runs 2: the agent calls its model twice; the judge, asked the same, once
        assert run("--runs", "2", "-o", "a.jsonl") == (2, 1)
        # one run: the agent's call is new to the cache (its repeats were never kept)
        assert run("-o", "b.jsonl") == (1, 0)
        assert run("-o", "c.jsonl") == (0, 0)  # everything answered from the cache
    same = [(r.status, r.output) for r in read_results(project / "c.jsonl").results]
    assert same == [(r.status, r.output) for r in read_results(project / "b.jsonl").results]
    header = json.loads((project / "c.jsonl").read_text().splitlines()[0])
    assert header["metadata"]["options"]["cache"] is True

    stats = runner.invoke(app, ["cache", "stats"])
    assert stats.exit_code == 0
    assert "Entries: 2 " in stats.output  # the judge's answer and the agent's
    assert "Hits:    4, misses: 2 (67% hits)" in stats.output
    cleared = runner.invoke(app, ["cache", "clear"])
    assert cleared.exit_code == 0 and "Removed 2 cached responses" in cleared.output
    assert "Entries: 0 " in runner.invoke(app, ["cache", "stats"]).output


def test_the_help_says_repeats_never_use_the_cache():
    shown = runner.invoke(app, ["eval", "--help"], terminal_width=200)
    assert "under --runs never the agent under test's" in " ".join(shown.output.split())

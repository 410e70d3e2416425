"""--seed (issue 15): the ids agentcli makes for a case come from the seed, the case and the
run, whatever the parallelism; providers that take a seed get it with every call."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from agentcli.cli.main import _register, app
from agentcli.eval.reports import read_results
from fixtures.openai_server import OpenAIServer

_register()
runner = CliRunner()


@pytest.fixture
def project(tmp_path, monkeypatch):
    """`teller` answers through the loopback server; its Create hook prints the chat id."""
    package = tmp_path / "assistants/teller"
    (package / "src").mkdir(parents=True)
    (package / "package.yao").write_text('{"name": "Teller", "connector": "loop"}')
    (package / "src/index.py").write_text(
        "def Create(ctx, messages):\n    print('chat', ctx.chat_id)\n    return None\n"
    )
    cases = [{"id": f"c{i}", "input": f"hello {i}"} for i in range(6)]
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AGENT_ROOT", raising=False)
    return tmp_path


def chat_ids(project, *args: str) -> dict[str, str]:
    ran = runner.invoke(app, ["eval", "teller", "@cases.jsonl", "-o", "out.jsonl", *args])
    assert ran.exit_code == 0, ran.output
    return {
        r.id: next(line["text"] for line in r.logs or [] if line["text"].startswith("chat "))
        for r in read_results(project / "out.jsonl").results
    }


def test_a_seed_names_every_case_the_same_way_each_time(project):
    with OpenAIServer(latency=0.0) as server:
        (project / "connectors.yml").write_text(
            f"loop: {{model: openai/echo, api_base: '{server.base_url}', api_key: none}}\n"
        )
        first = chat_ids(project, "--seed", "7", "--parallel", "3")
        again = chat_ids(project, "--seed", "7", "--parallel", "1")
        other = chat_ids(project, "--seed", "8")
        unseeded = [chat_ids(project), chat_ids(project)]
        assert all(request.body.get("seed") in (7, 8, None) for request in server.requests)
        assert [r.body.get("seed") for r in server.requests[:6]] == [7] * 6
    assert first == again  # the same ids, in another order of running
    assert len(set(first.values())) == 6
    assert set(other.values()).isdisjoint(first.values())
    assert unseeded[0] != unseeded[1]
    header = json.loads((project / "out.jsonl").read_text().splitlines()[0])
    assert "seed" not in header["metadata"]["options"]  # the last run had none


def test_under_a_seed_the_scripted_models_replies_cycle_per_case(tmp_path, monkeypatch):
    """A rule's list of replies is cycled per use; in a run the uses of parallel cases
    interleave however they are scheduled, so under --seed every case cycles its own."""
    package = tmp_path / "assistants/cycler"
    package.mkdir(parents=True)
    (package / "package.yao").write_text('{"name": "Cycler", "connector": "scripted"}')
    (package / "scripted.yml").write_text('rules:\n  - say: ["first", "second"]\n')
    cases = [{"id": f"c{i}", "input": f"hi {i}"} for i in range(6)]
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))

    def outputs(*args: str) -> list[str]:
        ran = runner.invoke(app, ["eval", "cycler", "@cases.jsonl", "-o", "o.jsonl", *args])
        assert ran.exit_code == 0, ran.output
        return [r.output for r in read_results(tmp_path / "o.jsonl").results]

    assert outputs("--seed", "3", "--parallel", "3") == ["first"] * 6
    assert outputs() == ["first", "second"] * 3  # one run-wide cycle without a seed

"""The header written when a run starts names its assistant and connector, so a run that
never wrote its summary (killed) is still named by ``agent report`` and ``agent view``."""

from __future__ import annotations

import json
import re
import signal

from starlette.testclient import TestClient

from agentcli.cli.viewer.app import create_app
from agentcli.eval.reports import read_results
from tests.eval.run.coin import agent, coin_project, start_agent, wait_for_calls


def test_a_killed_run_is_named_by_its_header_in_report_and_view(tmp_path):
    root = coin_project(tmp_path, [(f"c{i}", 100) for i in range(6)])
    out = root / "runs" / "killed.jsonl"
    (root / "runs").mkdir()
    process = start_agent(root, "eval", "coin", "@cases.jsonl", "-o", str(out), delay=0.3)
    wait_for_calls(root, 3)  # two cases written, the third in its model call
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=20)

    header = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    metadata = header["metadata"]
    assert (metadata["agent_id"], metadata["connector"]) == ("coin", "python:model:reply")
    assert list(metadata) == [
        "started_at", "version", "input_file", "agent_id", "connector", "options",
    ]  # fmt: skip
    loaded = read_results(out)
    assert loaded.summary is None and 2 <= len(loaded.results) < 6

    report = agent(root, "report", str(out))
    assert report.returncode == 0, report.stderr
    lines = report.stdout.splitlines()
    assert "  Agent:     coin" in lines, report.stdout
    assert "  Connector: python:model:reply" in lines, report.stdout

    rendered = agent(root, "report", str(out), "-o", str(root / "killed.md"))
    assert rendered.returncode == 0, rendered.stderr
    markdown = (root / "killed.md").read_text(encoding="utf-8")
    assert "| Agent | `coin` |" in markdown and "| Connector | `python:model:reply` |" in markdown

    with TestClient(create_app(root / "runs"), base_url="http://127.0.0.1") as client:
        listing = re.sub(r"<[^>]+>", " ", client.get("/").text)
        assert " ".join(listing.split()).count("killed.jsonl unfinished coin python:model:reply")
        page = " ".join(re.sub(r"<[^>]+>", " ", client.get("/run?file=killed.jsonl").text).split())
        assert "Assistant coin Connector python:model:reply Status unfinished" in page

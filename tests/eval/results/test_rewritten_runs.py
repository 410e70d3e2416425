"""Results files of real ``agent eval --runs`` runs (an offline assistant that passes every
other call), merged from shards and re-rendered by ``agent report``: what comes out says
what the run said."""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcli.cli.main import _register, app
from agentcli.eval.reports import read_results
from agentcli.eval.run.sharding import shard_of

_register()
runner = CliRunner()

# Ids the shard hash puts in both of two shards (checked below, so a new hash shows here).
CASE_IDS = ("a", "b", "d")


@pytest.fixture
def flaky(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An assistant whose scripted rule answers "good" and "bad" in turn, and three cases
    that want "good": each case passes some runs and fails others."""
    package = tmp_path / "assistants" / "flaky"
    (package / "tests").mkdir(parents=True)
    (package / "package.yao").write_text('{"name": "Flaky", "connector": "scripted"}')
    (package / "scripted.yml").write_text('rules:\n  - say: ["good", "bad"]\n')
    cases = [
        {"id": case_id, "input": case_id, "assert": {"type": "contains", "value": "good"}}
        for case_id in CASE_IDS
    ]
    (package / "tests" / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    return package / "tests" / "cases.jsonl"


def _eval(cases: Path, out: str, *extra: str) -> None:
    result = runner.invoke(app, ["eval", "flaky", f"@{cases}", "-o", out, *extra])
    assert result.exit_code == 1, result.output  # some runs fail


def test_merging_runs_shards_recomputes_without_warnings_and_keeps_every_summary_key(
    flaky: Path,
) -> None:
    assert {shard_of(case_id, 2) for case_id in CASE_IDS} == {1, 2}
    for index in (1, 2):
        _eval(flaky, f"s{index}.jsonl", "--runs", "5", "--shard", f"{index}/2")
    _eval(flaky, "whole.jsonl", "--runs", "5")
    merged = runner.invoke(app, ["merge", "s1.jsonl", "s2.jsonl", "-o", "m.jsonl"])
    assert merged.exit_code == 1, merged.output
    assert "warning" not in merged.output  # every stability line was recomputed from its runs
    loaded = read_results(Path("m.jsonl"))
    assert sorted(s["id"] for s in loaded.stability_results) == sorted(CASE_IDS)
    whole = read_results(Path("whole.jsonl")).summary
    summary = loaded.summary
    assert whole is not None and summary is not None
    assert summary.extra["runs_per_case"] == 5
    # What one run of every case writes, the merge writes too (and its machine time).
    assert set(summary.to_dict()) == {*whole.to_dict(), "total_duration_ms"}
    assert summary.extra["attribution"] == {"agent": summary.failed}


def test_a_stability_line_without_runs_of_its_case_is_one_warning_in_good_grammar(
    flaky: Path,
) -> None:
    _eval(flaky, "s1.jsonl", "--runs", "2", "--shard", "1/2")
    lines = Path("s1.jsonl").read_text().splitlines()
    stability = [line for line in lines if '"type":"stability"' in line]
    assert len(stability) == 2
    orphan = json.loads(stability[0])
    orphan["id"] = "gone"  # a case none of the results are of
    Path("s1.jsonl").write_text("\n".join([*lines[:-1], json.dumps(orphan), lines[-1]]) + "\n")
    merged = runner.invoke(app, ["merge", "s1.jsonl", "-o", "m.jsonl"])
    assert merged.exit_code == 1, merged.output
    assert "warning: s1.jsonl: 1 stability result without per-run results was dropped" in (
        merged.output
    )
    assert merged.output.count("warning") == 1


def test_a_report_rendered_later_says_when_the_run_ended(flaky: Path) -> None:
    _eval(flaky, "d.jsonl")
    time.sleep(1.5)  # a report stamped with the time it was rendered would be this late
    rendered = runner.invoke(app, ["report", "d.jsonl", "-o", "d.json"])
    assert rendered.exit_code == 0, rendered.output
    document = json.loads(Path("d.json").read_text())
    started = datetime.fromisoformat(document["metadata"]["started_at"])
    completed = datetime.fromisoformat(document["metadata"]["completed_at"])
    assert completed - started == timedelta(milliseconds=document["summary"]["duration_ms"])
    again = runner.invoke(app, ["report", "d.jsonl", "-o", "again.json"])
    assert again.exit_code == 0
    assert Path("again.json").read_bytes() == Path("d.json").read_bytes()  # no clock in it


def test_a_json_report_written_by_eval_is_rewritten_unchanged(flaky: Path) -> None:
    _eval(flaky, "d.json")
    document = json.loads(Path("d.json").read_text())
    started = datetime.fromisoformat(document["metadata"]["started_at"])
    completed = datetime.fromisoformat(document["metadata"]["completed_at"])
    assert timedelta(0) <= completed - started < timedelta(seconds=1)
    rendered = runner.invoke(app, ["report", "d.json", "-o", "d2.json"])
    assert rendered.exit_code == 0, rendered.output
    assert Path("d2.json").read_bytes() == Path("d.json").read_bytes()

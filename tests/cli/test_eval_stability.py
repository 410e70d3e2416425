"""`agent eval --runs N` end to end: per-run results, stability figures, thresholds, order."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcli.cli.main import _register, app
from agentcli.eval.reports import read_results

ROOT = Path(__file__).resolve().parents[2]
_register()


@pytest.fixture
def project(tmp_path, monkeypatch):
    shutil.copytree(ROOT / "fixtures" / "assistants" / "coin", tmp_path / "assistants" / "coin")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    return tmp_path


def write(path: Path, cases: list[dict]) -> Path:
    path.write_text("".join(json.dumps(c) + "\n" for c in cases))
    return path


def eval_(*args: str):
    return CliRunner().invoke(app, ["eval", "coin", *args])


HEADS = {"type": "contains", "value": "heads"}


def test_runs_give_per_run_results_and_stability(project):
    cases = write(
        project / "c.jsonl",
        [
            {"id": "flip", "input": "flip a", "assert": HEADS},
            {"id": "steady", "input": "x", "assert": HEADS},
        ],
    )
    result = eval_(f"@{cases}", "--runs", "4", "--parallel", "4", "-o", "r.jsonl")
    assert result.exit_code == 1, result.output  # flip passes 2/4 < 100%
    assert "[flip] 50% (2/4) Unstable" in result.output
    assert "[steady] 100% (4/4) Stable" in result.output
    loaded = read_results(project / "r.jsonl")
    assert [(r.id, r.run) for r in loaded.results] == [
        ("flip", 1), ("flip", 2), ("flip", 3), ("flip", 4),
        ("steady", 1), ("steady", 2), ("steady", 3), ("steady", 4),
    ]  # fmt: skip
    flip, steady = loaded.stability_results
    assert (flip["id"], flip["passed"], flip["runs"], flip["pass_rate"]) == ("flip", 2, 4, 50.0)
    assert flip["stability"] == "unstable"
    assert flip["pass_hat_k"]["1"] == 0.5 and flip["pass_at_k"]["4"] == 1.0
    assert steady["stability"] == "stable"
    assert loaded.summary is not None
    summary = loaded.summary.to_dict()
    assert (summary["total_runs"], summary["stable"], summary["unstable"]) == (8, 1, 1)
    assert summary["cases_below_threshold"] == ["flip"]


def test_min_pass_rate_relaxes_the_exit_code(project):
    cases = write(project / "c.jsonl", [{"id": "flip", "input": "flip b", "assert": HEADS}])
    assert (
        eval_(f"@{cases}", "--runs", "4", "--min-pass-rate", "50", "-o", "r.jsonl").exit_code == 0
    )
    cases = write(project / "d.jsonl", [{"id": "flip", "input": "flip c", "assert": HEADS}])
    assert (
        eval_(f"@{cases}", "--runs", "4", "--min-pass-rate", "75", "-o", "s.jsonl").exit_code == 1
    )


def test_fail_fast_stops_once_a_case_cannot_reach_the_threshold(project):
    cases = write(
        project / "c.jsonl",
        [{"id": "never", "input": "never", "assert": HEADS}]
        + [{"id": f"s{i}", "input": "x", "assert": HEADS} for i in range(5)],
    )
    result = eval_(f"@{cases}", "--runs", "5", "--fail-fast", "-o", "r.jsonl")
    assert result.exit_code == 1
    assert "Stopping due to --fail-fast" in result.output
    assert len(read_results(project / "r.jsonl").results) < 30


def test_parallel_stability_reports_are_deterministic(project):
    reports = []
    for name in ("a", "b"):  # fresh message texts, so the coin starts on heads both times
        cases = write(
            project / f"{name}.jsonl",
            [{"id": f"c{i}", "input": f"flip {i} {name}", "assert": HEADS} for i in range(6)],
        )
        out = project / f"{name}.json"
        assert eval_(f"@{cases}", "--runs", "3", "--parallel", "8", "-o", str(out)).exit_code == 1
        report = json.loads(out.read_text())
        reports.append(
            (
                [(r["id"], r["run"], r["status"]) for r in report["results"]],
                [(s["id"], s["passed"], s["pass_rate"]) for s in report["stability_results"]],
            )
        )
    assert reports[0][1] == reports[1][1]
    assert [r[:2] for r in reports[0][0]] == [r[:2] for r in reports[1][0]]

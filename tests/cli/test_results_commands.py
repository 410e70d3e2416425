"""`agent extract`, `agent report` and `agent merge` on results files written by real runs."""

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
runner = CliRunner()


@pytest.fixture
def results(tmp_path, monkeypatch) -> Path:
    """A results file of the probe assistant: two passes and a failure."""
    shutil.copytree(ROOT / "fixtures" / "assistants" / "probe", tmp_path / "assistants" / "probe")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    cases = [
        {"id": "a", "input": "hello", "assert": {"type": "contains", "value": "Hello"}},
        {"id": "b", "input": "add 1 2", "assert": {"type": "contains", "value": "sum=3"}},
        {"id": "c/../x", "input": "hello", "assert": {"type": "contains", "value": "nope"}},
    ]
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    result = runner.invoke(app, ["eval", "probe", "@cases.jsonl", "-o", "run.jsonl"])
    assert result.exit_code == 1
    return tmp_path / "run.jsonl"


def test_extract_writes_one_file_per_case_beside_the_results(results):
    result = runner.invoke(app, ["extract", str(results)])
    assert result.exit_code == 0, result.output
    folder = results.parent / "run"
    assert result.output.strip() == f"extracted 3 cases to {folder}"
    names = sorted(p.name for p in folder.iterdir())
    assert "index.md" in names and "a.md" in names and len(names) == 4
    assert all(p.resolve().parent == folder.resolve() for p in folder.iterdir())
    assert "FAILED" in (folder / "index.md").read_text().upper()


def test_extract_json_and_bad_format(results, tmp_path):
    ok = runner.invoke(
        app, ["extract", str(results), "-o", str(tmp_path / "j"), "--format", "json"]
    )
    assert ok.exit_code == 0
    assert json.loads((tmp_path / "j" / "b.json").read_text())["id"] == "b"
    bad = runner.invoke(app, ["extract", str(results), "--format", "pdf"])
    assert bad.exit_code == 2
    assert "unknown --format 'pdf'" in bad.output


@pytest.mark.parametrize("extension", ["json", "md", "html", "xml"])
def test_report_renders_every_format(results, tmp_path, extension):
    out = tmp_path / f"report.{extension}"
    result = runner.invoke(app, ["report", str(results), "-o", str(out)])
    assert result.exit_code == 0, result.output
    text = out.read_text()
    assert "c/../x" in text or "c/../x" in text.replace("&#x2F;", "/")


def test_report_without_o_prints_the_summary_and_what_failed(results):
    result = runner.invoke(app, ["report", str(results)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    for wanted in ("  Total:     3", "  Passed:    2", "  Failed:    1",
                   "  Short Summary: 1 failing case (1 agent)",
                   f"  Render it: agent report {results} -o report.html"):  # fmt: skip
        assert wanted in lines, wanted
    assert any(line.startswith("  FAILED  [c/../x] agent: ") for line in lines)


def test_report_to_stdout_is_the_results_alone(results):
    result = runner.invoke(app, ["report", str(results), "-o", "-"])
    assert result.exit_code == 0, result.output
    kinds = [json.loads(line)["type"] for line in result.output.splitlines()]
    assert kinds == ["header", "result", "result", "result", "summary"]


def test_merge_recomputes_and_keeps_the_exit_code_rules(results, tmp_path):
    loaded = read_results(results)
    first, second = tmp_path / "s1.jsonl", tmp_path / "s2.jsonl"
    header = json.dumps({"type": "header", **loaded.header.to_dict()})
    rows = [{"type": "result", **r.to_dict()} for r in loaded.results]
    first.write_text(header + "\n" + json.dumps(rows[0]) + "\n")
    second.write_text(header + "\n" + "".join(json.dumps(r) + "\n" for r in rows[1:]))
    merged = tmp_path / "all.jsonl"
    result = runner.invoke(app, ["merge", str(first), str(second), "-o", str(merged)])
    assert result.exit_code == 1, result.output  # case c failed
    summary = read_results(merged).summary
    assert summary is not None
    assert (summary.total, summary.passed, summary.failed) == (3, 2, 1)
    duplicate = runner.invoke(app, ["merge", str(first), str(first), "-o", str(merged)])
    assert duplicate.exit_code == 2
    assert "duplicate" in duplicate.output

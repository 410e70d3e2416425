"""An empty case selection is its own error, checked before the connectors: `--run`/`--tag`
that take no case of a file (exit 2, or a skipped file in a run of suites), an empty shard
(no error: it runs nothing). The assistant is the shipped `keyword`, whose connector is set
in its package and which has no create hook, so a connector check of no cases has nothing
to fall back on."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcli.cli.main import _register, app
from agentcli.eval.reports import read_results
from agentcli.eval.run.sharding import shard_of

ROOT = Path(__file__).resolve().parents[2]

_register()
runner = CliRunner()

SMOKE = [
    {"id": "hi", "input": "hello", "tags": ["smoke"], "assert": {"type": "is_json"}},
    {"id": "other", "input": "Extract keywords: tea", "assert": {"type": "is_json"}},
]
UNTAGGED = [{"id": "plain", "input": "Extract keywords: coffee", "assert": {"type": "is_json"}}]


def write_cases(path: Path, cases: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    return path


@pytest.fixture
def project(tmp_path, monkeypatch):
    """keyword with a case file holding a smoke case and one holding none, both suites."""
    shutil.copytree(
        ROOT / "assistants" / "keyword",
        tmp_path / "assistants" / "keyword",
        ignore=shutil.ignore_patterns("tests"),  # its own case files: these instead
    )
    tests = tmp_path / "assistants" / "keyword" / "tests"
    write_cases(tests / "smoke.jsonl", SMOKE)
    write_cases(tests / "untagged.jsonl", UNTAGGED)
    (tmp_path / "agentcli.yml").write_text(
        "assistants: assistants\n"
        "suites:\n"
        "  smoke: assistants/keyword/tests/smoke.jsonl\n"
        "  all: [assistants/keyword/tests/*.jsonl]\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    for name in ("AGENT_ROOT", "AGENT_CONNECTOR", "AGENT_OUTPUT", "AGENT_EXCLUDE_TAGS"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def invoke(*args: str):
    return runner.invoke(app, ["eval", *args], catch_exceptions=False)


SMOKE_FILE = "@assistants/keyword/tests/smoke.jsonl"


@pytest.mark.parametrize("extra", [[], ["--dry-run"], ["--estimate"]])
def test_a_run_pattern_that_matches_nothing_says_so_not_no_connector(project, extra):
    result = invoke("keyword", SMOKE_FILE, "--run", "zzz", *extra)
    assert result.exit_code == 2, result.output
    assert "has no connector" not in result.output
    assert (
        "error: no test cases match pattern 'zzz' (in assistants/keyword/tests/smoke.jsonl)"
        in result.output
    )
    assert "--run is a regular expression searched in case ids" in result.output


def test_a_tag_no_case_has_says_so_not_no_connector(project):
    result = invoke("keyword", SMOKE_FILE, "--tag", "zzz")
    assert result.exit_code == 2, result.output
    assert "has no connector" not in result.output
    assert (
        "error: no test cases of assistants/keyword/tests/smoke.jsonl match the selection "
        "(tag zzz)" in result.output
    )


def test_an_empty_shard_runs_nothing_and_writes_a_results_file_to_merge(project):
    used = {shard_of(case["id"], 16) for case in SMOKE}
    empty = next(index for index in range(1, 17) if index not in used)
    result = invoke(
        "keyword", SMOKE_FILE, "--shard", f"{empty}/16", "-c", "scripted", "-o", "s.jsonl"
    )
    assert result.exit_code == 0, result.output
    assert f"Shard: {empty}/16 (0 test cases)" in result.output
    loaded = read_results(project / "s.jsonl")
    assert loaded.results == [] and loaded.summary is not None


def test_an_empty_shard_still_checks_the_connector(project):
    used = {shard_of(case["id"], 16) for case in SMOKE}
    empty = next(index for index in range(1, 17) if index not in used)
    result = invoke("keyword", SMOKE_FILE, "--shard", f"{empty}/16", "-c", "nosuch")
    assert result.exit_code == 2, result.output
    assert "unknown connector 'nosuch'" in result.output


def test_suites_skip_a_file_without_the_tag_and_run_the_rest(project):
    result = invoke("--tag", "smoke")
    assert result.exit_code == 0, result.output
    assert result.output.endswith(
        "Suites: 2 case files\n"
        "  smoke  assistants/keyword/tests/smoke.jsonl     passed\n"
        "  all    assistants/keyword/tests/untagged.jsonl  skipped (no case selected)\n"
    )


@pytest.mark.parametrize("flag", ["--dry-run", "--estimate"])
def test_suites_under_dry_run_or_estimate_say_not_run(project, flag):
    result = invoke(flag)
    assert result.exit_code == 0, result.output
    assert result.output.endswith(
        "Suites: 2 case files\n"
        f"  smoke  assistants/keyword/tests/smoke.jsonl     not run ({flag})\n"
        f"  all    assistants/keyword/tests/untagged.jsonl  not run ({flag})\n"
    )
    assert not (project / ".agentcli" / "runs").exists() or not list(
        (project / ".agentcli" / "runs").rglob("output-*.jsonl")
    )

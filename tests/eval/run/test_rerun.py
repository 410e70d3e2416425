"""Which results file --last-failed takes, which cases count as failing, and the connector
check the matrix shares."""

from __future__ import annotations

import pytest

from agentcli.assistant.package import load_package
from agentcli.assistant.session import AssistantRegistry
from agentcli.errors import ConfigError
from agentcli.eval.results.model import CaseResult, RunSummary
from agentcli.eval.results.reader import LoadedReport
from agentcli.eval.run.preflight import check_connectors
from agentcli.eval.run.rerun import failing_ids, newest_results
from tests.eval.probe import ROOT


def test_the_newest_default_results_file_by_its_name_not_its_mtime(tmp_path):
    names = [
        "output-20261201120000-10.jsonl",
        "output-20261201120000.jsonl",
        "output-20261201120000-2.jsonl",
        "output-20261130235959-99.jsonl",
        "output-later.jsonl",
        "results.jsonl",
    ]
    for name in names:
        (tmp_path / name).write_text("")
    assert newest_results(tmp_path) == tmp_path / "output-20261201120000-10.jsonl"
    assert newest_results(tmp_path / "none") is None


def report(results, **summary) -> LoadedReport:
    return LoadedReport(results=results, summary=RunSummary(extra=summary))


def test_a_case_fails_when_a_result_did_not_pass_and_under_runs_when_below_its_bar():
    single = [CaseResult("a", "passed"), CaseResult("b", "timeout"), CaseResult("c", "skipped")]
    assert failing_ids(report(single)) == ["b"]
    runs = [CaseResult("r", s, run=i) for i, s in enumerate(["passed"] * 4 + ["failed"], 1)]  # type: ignore[arg-type]
    assert failing_ids(report(runs)) == ["r"]  # 80% is below the default 100
    assert failing_ids(report(runs, min_pass_rate=80.0)) == []


def test_check_connectors_names_the_column_that_does_not_resolve(tmp_path):
    registry = AssistantRegistry(None, cwd=tmp_path)
    package = load_package(ROOT / "fixtures" / "assistants" / "probe")
    check_connectors(registry, package, ["echo", "scripted", "echo"])
    with pytest.raises(ConfigError, match=r"^matrix column 2 'nowhere': unknown connector"):
        check_connectors(registry, package, ["echo", "nowhere"], label="matrix column 2")

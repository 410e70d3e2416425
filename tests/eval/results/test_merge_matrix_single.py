"""`agent merge` of a run on one connector with a connector matrix, on files written by
`agent eval`: the single run's results (which name no connector) are its header
connector's column, so its `hello` is the matrix's `hello @ scripted`, not another case."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from agentcli.cli.main import _register, app
from tests.cli import test_diff, test_eval

_register()
runner = CliRunner()

project = test_eval.project  # assistants/probe in a project folder; cwd is the project


def agent(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _runs(project: Path) -> None:
    """single.jsonl: probe on scripted alone, all passing; matrix.jsonl: scripted and echo,
    where echo fails hello and add."""
    good = test_diff.cases(project / "good.jsonl", "Hello", "hi")
    assert agent("eval", "probe", good, "-o", "single.jsonl").exit_code == 0
    matrix = agent("eval", "probe", good, "-c", "scripted", "-c", "echo", "-o", "matrix.jsonl")
    assert matrix.exit_code == 1


def test_a_single_connector_run_and_a_matrix_with_its_column_are_duplicates(project):
    _runs(project)
    merged = agent("merge", "single.jsonl", "matrix.jsonl", "-o", "all.jsonl")
    assert merged.exit_code == 2
    assert (
        "cannot merge: result 'hello @ scripted' appears in both single.jsonl and matrix.jsonl"
        in merged.stderr
    )
    assert not (project / "all.jsonl").exists()


def test_a_rerun_of_one_column_replaces_that_column_of_the_matrix(project):
    _runs(project)
    merged = agent("merge", "matrix.jsonl", "single.jsonl", "--allow-duplicates", "-o", "all.jsonl")
    assert merged.exit_code == 1, merged.output  # echo's cells still fail
    assert (
        "result 'hello @ scripted' appears in both matrix.jsonl and single.jsonl" in merged.stderr
    )
    assert "connector 'scripted' differs" not in merged.stderr  # a matrix's columns differ
    records = lines(project / "all.jsonl")
    results = [record for record in records if record["type"] == "result"]
    assert [(r["id"], r["connector"]) for r in results] == [
        (case_id, connector)
        for case_id in ("hello", "echo", "add")
        for connector in ("scripted", "echo")
    ]
    summary = records[-1]
    assert summary["total"] == 6
    assert summary["connector"] == "scripted, echo"
    assert summary["matrix"]["by_connector"]["scripted"] == {
        "cases": 3, "passed": 3, "failed": 0, "pass_rate": 100.0,
    }  # fmt: skip


def test_a_single_connector_run_first_gives_the_merged_header_the_matrix_columns(project):
    _runs(project)
    merged = agent("merge", "single.jsonl", "matrix.jsonl", "--allow-duplicates", "-o", "all.jsonl")
    assert merged.exit_code == 1, merged.output
    header, *rest = lines(project / "all.jsonl")
    assert header["metadata"]["options"]["connectors"] == ["scripted", "echo"]
    assert header["metadata"]["connector"] == "scripted, echo"
    results = [record for record in rest if record["type"] == "result"]
    assert len(results) == 6
    assert all(result["connector"] in ("scripted", "echo") for result in results)
    assert agent("report", "all.jsonl", "-o", "report.md").exit_code == 0
    report = (project / "report.md").read_text()  # read back as the matrix it is
    assert "| Case | `scripted` | `echo` | Verdict (all) |" in report

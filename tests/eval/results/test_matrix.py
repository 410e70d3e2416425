"""A connector matrix in the results: the connector field (written only in a matrix), the
grid's verdicts under --matrix-pass and --runs, and agent merge knowing a case by id and
connector."""

from __future__ import annotations

import json

import pytest

from agentcli.errors import ConfigError
from agentcli.eval.reports import read_results
from agentcli.eval.results.matrix import header_connectors, matrix_of, matrix_pass_of
from agentcli.eval.results.merge import merge_files
from agentcli.eval.results.model import CaseResult, RunHeader, Status


def result(case_id: str, status: Status, connector: str | None, run: int | None = None):
    return CaseResult(case_id, status, input="hi", run=run, connector=connector)


def test_the_connector_is_written_last_and_only_in_a_matrix():
    single = result("a", "passed", None).to_dict()
    assert "connector" not in single
    cell = result("a", "passed", "gpt-4o", run=2).to_dict()
    assert list(cell)[-2:] == ["run", "connector"] and cell["connector"] == "gpt-4o"
    back = CaseResult.from_dict(cell)
    assert back.connector == "gpt-4o" and back.cell == ("a", "gpt-4o") and back.source is None


def test_a_connector_that_is_not_text_is_kept_as_its_json_text():
    back = CaseResult.from_dict({"id": "a", "status": "passed", "connector": 3})
    assert back.connector == "3" and back.source is not None  # written back as it was read


def test_all_fails_a_case_on_any_failing_cell_any_only_when_no_cell_passes():
    grid = matrix_of(
        [
            result("greet", "passed", "a"),
            result("greet", "failed", "b"),
            result("never", "error", "a"),
            result("never", "timeout", "b"),
            result("skip", "skipped", "a"),
            result("skip", "skipped", "b"),
        ]
    )
    assert grid is not None and grid.connectors == ["a", "b"]
    assert grid.failing_cells() == [("greet", "b"), ("never", "a"), ("never", "b")]
    assert grid.failing_cases("all") == ["greet", "never"]
    assert grid.failing_cases("any") == ["never"]
    assert (grid.exit_code("all"), grid.exit_code("any")) == (1, 1)
    assert grid.by_connector()["a"] == {"cases": 2, "passed": 1, "failed": 1, "pass_rate": 50.0}


def test_under_runs_a_cell_passes_by_the_min_pass_rate():
    runs = [
        result("flip", status, "a", run)
        for run, status in enumerate(("passed", "failed", "passed"), 1)
    ] + [result("flip", "passed", "b", run) for run in (1, 2, 3)]
    grid = matrix_of(runs)
    assert grid is not None and grid.runs_per_case == 3
    cell = grid.cell("flip", "a")
    assert cell is not None and (cell.passed, cell.runs, cell.status(100)) == (2, 3, "failed")
    assert grid.exit_code("all", 100) == 1 and grid.exit_code("all", 60) == 0
    assert grid.exit_code("any", 100) == 0
    case = grid.to_dict("all", 60)["cases"][0]
    assert case == {
        "id": "flip",
        "passed": True,
        "cells": {
            "a": {"status": "passed", "runs": 3, "passed": 2},
            "b": {"status": "passed", "runs": 3, "passed": 3},
        },
    }


def test_results_of_no_matrix_make_no_grid():
    assert matrix_of([result("a", "passed", None)]) is None


def test_the_header_gives_the_columns_and_the_pass_rule():
    header = RunHeader(metadata={"options": {"connectors": ["a", "b"], "matrix_pass": "any"}})
    assert (header_connectors(header), matrix_pass_of(header)) == (["a", "b"], "any")
    assert (header_connectors(RunHeader()), matrix_pass_of(RunHeader())) == ([], "all")


def _write(path, results, *, connectors=("a", "b"), matrix_pass=None):
    options = {"connectors": list(connectors)}
    if matrix_pass:
        options["matrix_pass"] = matrix_pass
    lines = [{"type": "header", "environment": {}, "metadata": {"options": options}}]
    lines += [{"type": "result", **r.to_dict()} for r in results]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_merge_keeps_one_case_per_connector_and_recomputes_the_matrix(tmp_path):
    one = _write(tmp_path / "1.jsonl", [result("x", "passed", "a"), result("x", "failed", "b")])
    two = _write(tmp_path / "2.jsonl", [result("y", "passed", "b"), result("y", "passed", "a")])
    merged = merge_files([one, two])
    assert [(r.id, r.connector) for r in merged.results] == [
        ("x", "a"), ("x", "b"), ("y", "a"), ("y", "b"),
    ]  # fmt: skip
    matrix = merged.summary.extra["matrix"]
    assert matrix["failing_cases"] == ["x"] and matrix["pass"] == "all"
    assert merged.exit_code() == 1
    anyone = _write(tmp_path / "3.jsonl", [result("x", "passed", "a"), result("x", "failed", "b")],
                    matrix_pass="any")  # fmt: skip
    assert merge_files([anyone, two]).exit_code() == 0


def test_merge_names_a_cell_given_twice(tmp_path):
    one = _write(tmp_path / "1.jsonl", [result("x", "passed", "a")])
    two = _write(tmp_path / "2.jsonl", [result("x", "failed", "a")])
    with pytest.raises(ConfigError, match=r"result 'x @ a' appears in both"):
        merge_files([one, two])


def test_merge_computes_stability_per_case_and_connector(tmp_path):
    runs = [result("x", s, "a", run) for run, s in enumerate(("passed", "failed"), 1)]
    runs += [result("x", "passed", "b", run) for run in (1, 2)]
    merged = merge_files([_write(tmp_path / "r.jsonl", runs)])
    assert [(s.id, s.connector, s.passed) for s in merged.stability] == [
        ("x", "a", 1), ("x", "b", 2),
    ]  # fmt: skip
    assert merged.summary.extra["cases_below_threshold"] == ["x @ a"]
    assert merged.stability[0].to_dict()["connector"] == "a"
    back = read_results(_write(tmp_path / "s.jsonl", runs))
    assert [r.connector for r in back.results] == ["a", "a", "b", "b"]

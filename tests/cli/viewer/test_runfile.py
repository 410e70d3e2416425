"""The per-file index: rows with the fields pages filter by, single lines decoded by the
codec exactly as the results reader decodes them, growth, damage and search."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.cli.viewer.runfile import NotResults, index_file
from agentcli.errors import CaseFileError
from agentcli.eval.results.reader import read_results
from tests.cli.viewer.runs import dynamic, forecast, write_run


def test_rows_carry_what_pages_filter_by_and_decode_as_the_reader_does(tmp_path):
    results = [
        forecast("paris", tags=["smoke"]),
        forecast("rome", status="failed", connector="echo", run=2),
        dynamic(),
    ]
    path = write_run(tmp_path / "run.jsonl", results)
    run = index_file(path)
    assert [(r.ordinal, r.id, r.status, r.tags, r.attribution, r.connector, r.run)
            for r in run.rows] == [
        (0, "paris", "passed", ("smoke",), None, None, None),
        (1, "rome", "failed", (), "agent", "echo", 2),
        (2, "order", "passed", (), None, None, None),
    ]  # fmt: skip
    assert run.rows[1].label == "rome @ echo"
    assert run.results(run.rows) == read_results(path).results
    assert run.summary is not None and run.summary.total == 3
    assert run.header.metadata["started_at"] == "2026-12-01T10:00:00+00:00"
    assert run.warnings == []


def _lines(path: Path, *records: dict) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_fields_of_the_wrong_type_are_read_with_the_codecs_rules(tmp_path):
    path = _lines(
        tmp_path / "odd.jsonl",
        {"type": "header", "metadata": {}},
        {"type": "result", "id": 7, "status": "won", "tags": "smoke", "attribution": "moon",
         "run": True, "connector": ""},
        {"type": "result", "id": "nan", "status": "passed", "duration_ms": float("nan")},
    )  # fmt: skip
    rows = index_file(path).rows
    assert [(r.id, r.status, r.tags, r.attribution, r.run, r.connector) for r in rows] == [
        ("", "error", (), None, None, None),  # an unknown status is never a pass
        ("nan", "passed", (), None, None, None),  # NaN (msgspec refuses it): read by json
    ]


def test_a_corrupt_line_is_skipped_with_its_file_and_line(tmp_path):
    path = tmp_path / "damaged.jsonl"
    path.write_text(
        '{"type":"header"}\n{"type":"result","id":"a","status":"passed"}\n{oops\n'
        '{"type":"result","id":"b","status":"failed"}\n',
        encoding="utf-8",
    )
    run = index_file(path)
    assert [row.id for row in run.rows] == ["a", "b"]
    assert run.warnings == [f"{path}:3: corrupt results line skipped: invalid JSON "
                            "(Expecting property name enclosed in double quotes: "
                            "line 1 column 2 (char 1))"]  # fmt: skip
    assert run.result(run.rows[1]).id == "b"  # offsets past the damage still right


def test_a_run_still_writing_is_indexed_from_where_it_stopped(tmp_path):
    path = tmp_path / "live.jsonl"
    first = json.dumps({"type": "result", "id": "a", "status": "passed"})
    second = json.dumps({"type": "result", "id": "b", "status": "failed"})
    path.write_text('{"type":"header"}\n' + first + "\n" + second[:20], encoding="utf-8")
    run = index_file(path)
    assert [row.id for row in run.rows] == ["a"]  # the half-written line waits
    assert run.warnings == []
    with path.open("a", encoding="utf-8") as stream:
        stream.write(second[20:] + "\n" + json.dumps({"type": "summary", "total": 2}) + "\n")
    grown = index_file(path, run)
    assert [row.id for row in grown.rows] == ["a", "b"]
    assert grown.rows[0] is run.rows[0]  # extended, not re-read
    assert grown.summary is not None and grown.summary.total == 2
    assert grown.result(grown.rows[1]).status == "failed"


def test_a_replaced_file_is_indexed_anew(tmp_path):
    path = write_run(tmp_path / "r.jsonl", [forecast("a"), forecast("b")])
    run = index_file(path)
    write_run(path, [forecast("c")])
    assert [row.id for row in index_file(path, run).rows] == ["c"]


def test_an_unfinished_run_replaced_by_a_longer_one_is_not_extended(tmp_path):
    path = write_run(tmp_path / "r.jsonl", [forecast("a")], finished=False)
    run = index_file(path)
    write_run(path, [forecast("x"), forecast("y"), forecast("z")])  # renamed into place
    assert [row.id for row in index_file(path, run).rows] == ["x", "y", "z"]


def test_a_stale_index_never_shows_another_line_as_the_result(tmp_path):
    path = write_run(tmp_path / "r.jsonl", [forecast("a"), forecast("b")])
    stale = index_file(path)
    path.write_text('{"type":"header"}\n' + " " * 5000 + "\n", encoding="utf-8")
    with pytest.raises(CaseFileError, match="result 2 is no longer where it was"):
        stale.result(stale.rows[1])


def test_a_json_report_is_read_whole(tmp_path):
    path = write_run(tmp_path / "report.json", [forecast("a"), forecast("b", status="failed")])
    run = index_file(path)
    assert run.format == "report"
    assert [(row.id, row.status) for row in run.rows] == [("a", "passed"), ("b", "failed")]
    assert run.result(run.rows[1]).assertions[0].message == "expected output to contain 'sunny'"


def test_a_report_on_one_line_is_a_report_not_a_case_file(tmp_path):
    indented = write_run(tmp_path / "report.json", [forecast("a")])
    one_line = tmp_path / "compact.json"
    one_line.write_text(json.dumps(json.loads(indented.read_text("utf-8"))), encoding="utf-8")
    assert [row.id for row in index_file(one_line).rows] == ["a"]


@pytest.mark.parametrize(
    "text",
    ['{"id": "a", "input": "hi"}\n{"id": "b", "input": "yo"}\n', "[1, 2]", "not json at all"],
)
def test_a_file_that_holds_no_results_is_not_results(tmp_path, text):
    path = tmp_path / "cases.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(NotResults):
        index_file(path)

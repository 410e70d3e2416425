"""The runs a comparison reads: any results file the reader reads, or the newest two of a
folder (by the header's start time, else the file's mtime)."""

from __future__ import annotations

import os

import pytest

from agentcli.errors import CaseFileError, ConfigError
from agentcli.eval.compare.sources import load_run, newest_two
from agentcli.eval.results.merge import merge_files, write_merged
from tests.eval.compare.runs import repeats, result, write_run


def test_a_json_report_and_json_lines_read_alike(tmp_path):
    lines = load_run(write_run(tmp_path / "a.jsonl", [result("x")], "2026-01-01T00:00:00+00:00"))
    report = load_run(write_run(tmp_path / "a.json", [result("x")], "2026-01-01T00:00:00+00:00"))
    assert lines.source.started_at == report.source.started_at == "2026-01-01T00:00:00+00:00"
    assert [r.id for r in lines.results] == [r.id for r in report.results] == ["x"]


def test_a_file_that_is_not_results_is_a_case_file_error_naming_it(tmp_path):
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"id": "a", "input": "x"}\n{"id": "b", "input": "y"}\n')
    with pytest.raises(CaseFileError, match=r"cases\.jsonl: this is a case file"):
        load_run(cases)
    notes = tmp_path / "notes.jsonl"
    notes.write_text('{"id": "a"}\n{"id": "b"}\n')
    with pytest.raises(CaseFileError, match=r"notes\.jsonl:2:1: not a results file"):
        load_run(notes)
    with pytest.raises(CaseFileError, match="no such results file"):
        load_run(tmp_path / "missing.jsonl")


def test_the_stability_bar_of_a_run_is_read_from_its_summary(tmp_path):
    path = tmp_path / "runs.jsonl"
    write_run(path, repeats("a", 4, 5))
    assert load_run(path).source.min_pass_rate == 100.0
    merged = merge_files([path], min_pass_rate=80.0)
    write_merged(merged, tmp_path / "merged.jsonl")
    assert load_run(tmp_path / "merged.jsonl").source.min_pass_rate == 80.0


def test_the_newest_two_by_start_time_whatever_the_mtimes(tmp_path):
    write_run(tmp_path / "c.jsonl", [result("x")], "2026-01-03T00:00:00+00:00")
    write_run(tmp_path / "a.jsonl", [result("x")], "2026-01-01T00:00:00+00:00")
    write_run(tmp_path / "b.json", [result("x")], "2026-01-02T00:00:00+00:00")
    os.utime(tmp_path / "a.jsonl", (2_000_000_000, 2_000_000_000))  # newest on disk
    (tmp_path / "inputs.jsonl").write_text('{"id": "a", "input": "x"}\n{"id": "b"}\n')
    base, new = newest_two(tmp_path)
    assert (base.source.label, new.source.label) == (
        str(tmp_path / "b.json"),
        str(tmp_path / "c.jsonl"),
    )


def test_without_start_times_the_mtime_decides(tmp_path):
    for name, mtime in (("old.jsonl", 1_000), ("new.jsonl", 3_000), ("mid.jsonl", 2_000)):
        write_run(tmp_path / name, [result("x")])
        os.utime(tmp_path / name, (mtime, mtime))
    base, new = newest_two(tmp_path)
    assert (base.source.label, new.source.label) == (
        str(tmp_path / "mid.jsonl"),
        str(tmp_path / "new.jsonl"),
    )


def test_the_stream_beside_a_json_report_is_not_a_second_run(tmp_path):
    write_run(tmp_path / "old.jsonl", [result("x")], "2026-01-01T00:00:00+00:00")
    write_run(tmp_path / "r.json", [result("x")], "2026-01-02T00:00:00+00:00")
    write_run(tmp_path / "r.json.jsonl", [result("x")], "2026-01-02T00:00:00+00:00")
    base, new = newest_two(tmp_path)
    assert (base.source.label, new.source.label) == (
        str(tmp_path / "old.jsonl"),
        str(tmp_path / "r.json"),
    )


def test_a_folder_needs_two_results_files(tmp_path):
    write_run(tmp_path / "only.jsonl", [result("x")])
    with pytest.raises(ConfigError, match="1 results file"):
        newest_two(tmp_path)
    with pytest.raises(ConfigError, match="is a folder"):
        load_run(tmp_path)

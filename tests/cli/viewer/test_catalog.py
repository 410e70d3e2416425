"""The runs under the served folder: listed newest first, found anew on each request, and
reachable only inside the folder."""

from __future__ import annotations

import os

import pytest

from agentcli.cli.viewer.catalog import Catalog, NotFound
from tests.cli.viewer.runs import forecast, sample_folder, write_run


def test_runs_are_listed_newest_first_with_their_figures(tmp_path):
    entries = Catalog(sample_folder(tmp_path)).entries()
    assert [(e.path, e.assistant, e.connectors, e.total, e.passed, e.pass_rate, e.finished)
            for e in entries] == [
        ("nested/new.jsonl", "weather", ("scripted",), 4, 2, 50.0, True),
        ("base.jsonl", "weather", ("scripted",), 3, 3, 100.0, True),
        ("matrix.jsonl", "weather", ("scripted", "echo"), 4, 3, 75.0, True),
        ("repeats.jsonl", "", (), 2, 1, 50.0, False),  # counted from its index
    ]  # fmt: skip
    assert entries[0].started == "2026-12-01T11:00:00+00:00"
    assert entries[0].duration_ms == 1234
    assert entries[0].cost == "$0.0041 (agent $0.0036, simulator $0.0005)"
    assert entries[3].duration_ms is None


def test_a_new_run_appears_and_a_changed_one_is_read_again(tmp_path):
    catalog = Catalog(tmp_path)
    assert catalog.entries() == []
    write_run(tmp_path / "a.jsonl", [forecast("x")])
    assert [entry.total for entry in catalog.entries()] == [1]
    write_run(tmp_path / "a.jsonl", [forecast("x"), forecast("y")])
    os.utime(tmp_path / "a.jsonl", ns=(1, 10**18))  # a new mtime however fast the test runs
    assert [entry.total for entry in catalog.entries()] == [2]
    assert len(catalog.open("a.jsonl").rows) == 2


def test_a_reports_stream_is_left_out_beside_its_report(tmp_path):
    write_run(tmp_path / "report.json", [forecast("x")])
    write_run(tmp_path / "report.json.jsonl", [forecast("x")])
    write_run(tmp_path / "page.html.jsonl", [forecast("x")])  # an .html report's only copy
    assert sorted(entry.path for entry in Catalog(tmp_path).entries()) == [
        "page.html.jsonl",
        "report.json",
    ]


def test_dot_folders_are_not_searched(tmp_path):
    write_run(tmp_path / ".venv" / "x.jsonl", [forecast("x")])
    write_run(tmp_path / "runs" / "y.jsonl", [forecast("y")])
    assert [entry.path for entry in Catalog(tmp_path).entries()] == ["runs/y.jsonl"]


@pytest.mark.parametrize(
    "name",
    ["../outside.jsonl", "/etc/passwd", "", "cases.jsonl", "base.jsonl/..", "nested",
     "missing.jsonl", "link.jsonl", "notes.txt", "base.jsonl\x00.txt"],
)  # fmt: skip
def test_nothing_outside_the_folder_or_not_results_is_found(tmp_path, name):
    root = tmp_path / "root"
    sample_folder(root)
    write_run(tmp_path / "outside.jsonl", [forecast("secret")])
    (root / "link.jsonl").symlink_to(tmp_path / "outside.jsonl")
    (root / "notes.txt").write_text("hi", encoding="utf-8")
    catalog = Catalog(root)
    with pytest.raises(NotFound):
        catalog.open(name)
    assert "link.jsonl" not in [entry.path for entry in catalog.entries()]


def test_a_symlink_inside_the_folder_opens_but_is_not_listed_twice(tmp_path):
    write_run(tmp_path / "real.jsonl", [forecast("x")])
    (tmp_path / "latest.jsonl").symlink_to(tmp_path / "real.jsonl")
    catalog = Catalog(tmp_path)
    assert catalog.open("latest.jsonl").rows[0].id == "x"
    assert [entry.path for entry in catalog.entries()] == ["real.jsonl"]

"""A run page's rows: filters, failures first, paging; the matrix page's grid."""

from __future__ import annotations

import pytest

from agentcli.cli.viewer.pages import Filters, filters_from, matrix_page, page_number, page_of
from agentcli.cli.viewer.runfile import index_file
from tests.cli.viewer.runs import forecast, write_run


@pytest.fixture
def run(tmp_path):
    statuses = ["passed", "failed", "passed", "error", "skipped", "timeout", "passed"]
    results = [
        forecast(
            f"c{index}",
            status=status,
            tags=["smoke"] if index % 2 else [],
            attribution="infra"
            if status == "timeout"
            else ("agent" if status != "passed" else None),
        )
        for index, status in enumerate(statuses)
    ]
    return index_file(write_run(tmp_path / "r.jsonl", results))


def ids(page):
    return [row.id for row, _ in page.results]


def test_failures_come_first_then_passes_then_skips_each_in_file_order(run):
    page = page_of(run, Filters(), 1)
    assert ids(page) == ["c1", "c3", "c5", "c0", "c2", "c6", "c4"]
    assert [result.id for _, result in page.results] == ids(page)  # decoded, in step
    assert (page.number, page.pages, page.matching, page.first) == (1, 1, 7, 1)
    assert page.tags == ["smoke"]
    assert page.attributions == ["agent", "infra"]
    assert page.counts == {"passed": 3, "failed": 1, "error": 1, "skipped": 1, "timeout": 1}


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        (Filters(status="failing"), ["c1", "c3", "c5"]),
        (Filters(status="passed"), ["c0", "c2", "c6"]),
        (Filters(tag="smoke"), ["c1", "c3", "c5"]),
        (Filters(attribution="infra"), ["c5"]),
        (Filters(status="failed", tag="smoke"), ["c1"]),
        (Filters(query="C6"), ["c6"]),
        (Filters(status="passed", query="c1"), []),
    ],
)
def test_filters_combine(run, filters, expected):
    assert ids(page_of(run, filters, 1)) == expected


def test_pages_split_the_matching_rows_and_a_page_past_the_end_is_the_last(run):
    second = page_of(run, Filters(), 2, size=3)
    assert (ids(second), second.number, second.pages, second.first) == (["c0", "c2", "c6"], 2, 3, 4)
    assert ids(page_of(run, Filters(), 99, size=3)) == ["c4"]
    empty = page_of(run, Filters(query="nowhere"), 1)
    assert (empty.results, empty.pages, empty.first, empty.matching) == ([], 1, 0, 0)


def test_a_query_string_is_read_leniently():
    assert filters_from({"status": "failing", "tag": "smoke", "attribution": "judge",
                         "q": "  rome "}) == Filters("failing", "smoke", "judge", "rome")  # fmt: skip
    assert filters_from({"status": "won", "attribution": "moon"}) == Filters()
    assert [page_number({"page": text}) for text in ("3", "0", "-1", "x", "9" * 20)] == [
        3, 1, 1, 1, 1,
    ]  # fmt: skip
    assert Filters("failing", "", "", "a b").params(file="r.jsonl") == (
        "status=failing&q=a+b&file=r.jsonl"
    )


def test_the_matrix_page_is_the_grid_of_results_matrix(tmp_path):
    results = [
        forecast("paris", connector="scripted"),
        forecast("paris", connector="echo", status="failed"),
        forecast("rome", connector="scripted"),
    ]
    path = write_run(tmp_path / "m.jsonl", results, options={"connectors": ["scripted", "echo"]})
    grid = matrix_page(index_file(path), 1)
    assert grid is not None
    assert grid.view.grid.connectors == ["scripted", "echo"]
    assert [(case, [cell and (cell[0], cell[1].ordinal) for cell in cells], passes)
            for case, cells, passes in grid.rows] == [
        ("paris", [("✅ passed", 0), ("❌ failed", 1)], False),
        ("rome", [("✅ passed", 2), None], True),
    ]  # fmt: skip


def test_a_run_outside_a_matrix_has_no_matrix_page(run):
    assert matrix_page(run, 1) is None

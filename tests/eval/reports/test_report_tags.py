"""A case's tags in the Markdown and HTML reports (beside the id, and in the details)."""

from __future__ import annotations

from pathlib import Path

from agentcli.eval.reports.html import HtmlWriter
from agentcli.eval.reports.markdown import MarkdownWriter
from tests.eval.reports.page import report_data, row_of
from tests.eval.reports.test_reports import write_report

RESULTS = [
    {"id": "tagged", "status": "failed", "input": "hi", "tags": ["smoke", "db"], "error": "x"},
    {"id": "untagged", "status": "passed", "input": "hello"},
]


def test_markdown_shows_tags_in_the_table_and_the_details(tmp_path: Path) -> None:
    text = write_report(MarkdownWriter(tmp_path / "out.md"), RESULTS).read_text(encoding="utf-8")
    assert "| 1 | `tagged` `#smoke` `#db` | ❌ failed |" in text
    assert "| 2 | `untagged` | ✅ passed |" in text
    assert "**Tags**: `smoke`, `db`" in text.split("## Details", 1)[1]


def test_html_carries_each_cases_tags_in_its_row(tmp_path: Path) -> None:
    # the report draws its rows from embedded data (report.js shows row[10] beside the id
    # and in the case's page); the data is what this checks
    text = write_report(HtmlWriter(tmp_path / "out.html"), RESULTS).read_text(encoding="utf-8")
    data = report_data(text)
    tagged, _ = row_of(data, "tagged")
    untagged, _ = row_of(data, "untagged")
    assert tagged[10] == ["smoke", "db"]
    assert len(untagged) <= 10 or not untagged[10]

"""A case's tags in the Markdown and HTML reports (beside the id, and in the details)."""

from __future__ import annotations

from pathlib import Path

from agentcli.eval.reports.html import HtmlWriter
from agentcli.eval.reports.markdown import MarkdownWriter
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


def test_html_shows_tags_beside_the_id_and_on_the_row(tmp_path: Path) -> None:
    text = write_report(HtmlWriter(tmp_path / "out.html"), RESULTS).read_text(encoding="utf-8")
    assert '<tr data-index="0" data-status="failed" data-tags="smoke db">' in text
    assert '<tr data-index="1" data-status="passed">' in text
    assert text.count('<span class="tag">smoke</span>') == 2  # the table row and the details

"""The renderers of a RunDiff: the JSON document's shape, and Markdown and HTML that no id,
output or argument can break out of."""

from __future__ import annotations

import json
import re

from agentcli.eval.compare.compute import diff_runs
from agentcli.eval.compare.console import console_lines, summary_lines
from agentcli.eval.compare.html import render_html
from agentcli.eval.compare.json_form import DIFF_FORMAT, diff_document, diff_json
from agentcli.eval.compare.markdown import render_markdown
from agentcli.eval.compare.model import RunSource
from agentcli.eval.results.model import ToolCall
from tests.eval.compare.runs import repeats, result

HOSTILE = "<script>alert(1)</script>|`x`"


def hostile_diff():
    base = [
        result(HOSTILE, output="<b>old</b>"),
        result("calls", calls=[ToolCall(tool="<t>", arguments={"q": "</td>"})]),
    ]
    new = [
        result(
            HOSTILE, "failed", output="</pre><img src=x onerror=alert(1)>", message="<i>why</i>"
        ),
        result("calls", calls=[ToolCall(tool="<t>", arguments={"q": "<tr>"})]),
    ]
    return diff_runs(
        base,
        new,
        base_source=RunSource("<base>.jsonl", started_at="2026-01-01T00:00:00+00:00"),
        new_source=RunSource("new.jsonl"),
    )


def test_the_json_document_has_one_entry_per_case_and_the_tally():
    document = json.loads(diff_json(hostile_diff()))
    assert list(document) == [
        "format",
        "base",
        "new",
        "alpha",
        "repeats",
        "thresholds",
        "summary",
        "regressions",
        "cases",
        "notes",
    ]
    assert document["format"] == DIFF_FORMAT
    assert document["base"] == {
        "file": "<base>.jsonl",
        "started_at": "2026-01-01T00:00:00+00:00",
        "results": 0,
        "min_pass_rate": 100.0,
    }
    assert document["summary"]["regression"] == 1
    assert document["summary"]["output_changes"] == 1
    assert document["summary"]["tool_call_changes"] == 1
    assert document["regressions"] == [HOSTILE]
    regression = document["cases"][0]
    assert regression["kind"] == "regression"
    assert regression["base"]["statuses"] == ["passed"]
    assert regression["new"] == {
        "statuses": ["failed"],
        "passed": 0,
        "runs": 1,
        "duration_ms": 100.0,
        "tokens": 10.0,
        "cost": None,
        "reason": "<i>why</i>",
    }
    assert regression["significance"] is None
    assert document["cases"][1]["tool_calls"] == [
        {
            "change": "changed",
            "tool": "<t>",
            "server": None,
            "before": {"q": "</td>"},
            "after": {"q": "<tr>"},
        }
    ]


def test_the_json_document_carries_the_test_of_repeats():
    compared = diff_runs(
        repeats("a", 5, 5),
        repeats("a", 0, 5),
        base_source=RunSource("b"),
        new_source=RunSource("n"),
    )
    document = diff_document(compared)
    assert document["repeats"] is True
    significance = document["cases"][0]["significance"]
    assert significance["test"] == "Fisher's exact test (two-sided)"
    assert significance["significant"] is True
    assert round(significance["p_value"], 4) == 0.0079


def test_markdown_escapes_every_piece_of_user_content():
    text = render_markdown(hostile_diff())
    assert text.startswith("# Agent diff\n")
    # Outside fences and code spans (where HTML is literal text) no "<" is left unescaped.
    prose = re.sub(r"(`+)(.*?)\1", "", re.sub(r"(?ms)^```.*?^```$", "", text))
    assert re.search(r"(?<!\\)<", prose) is None
    assert "\\<i\\>why\\</i\\>" in text  # prose: backslash-escaped
    assert "`` <script>alert(1)</script>\\|`x` ``" in text  # ids: a code span, pipes escaped
    assert "```diff\n--- base\n+++ new\n" in text
    assert "+</pre><img src=x onerror=alert(1)>" in text  # inside the diff fence: literal


def test_html_is_self_contained_and_escapes_every_piece_of_user_content():
    page = render_html(hostile_diff())
    assert page.startswith("<!DOCTYPE html>")
    assert "<title>Agent Diff — &lt;base&gt;.jsonl → new.jsonl</title>" in page
    for raw in ("<script>alert", "<img src", "<i>why", "<t>", '</td>"', "<b>old"):
        assert raw not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;|`x`" in page
    assert "+&lt;/pre&gt;&lt;img src=x onerror=alert(1)&gt;" in page
    assert "<script" not in page.lower()  # no script at all, so the CSP allows none
    assert "default-src &#x27;none&#x27;" in page
    assert "http://" not in page and "https://" not in page


def test_the_summary_lines_name_each_case_that_is_not_plainly_passing():
    compared = diff_runs(
        [result("a"), result("b", "failed"), result("c")],
        [result("a", "failed", message="no"), result("b", "failed", message="still"), result("c")],
        base_source=RunSource("base.jsonl"),
        new_source=RunSource("new.jsonl"),
    )
    assert [(line.text, line.tone) for line in summary_lines(compared)] == [
        ("Base: base.jsonl (0 results)", "plain"),
        ("New:  new.jsonl (0 results)", "plain"),
        ("Regression: a: passed -> failed: no", "bad"),
        ("Still failing: b: failed -> failed: still", "note"),
        ("1 regression, 1 still failing, 1 passing", "bad"),
    ]
    assert console_lines(compared)[0].text == "Comparing runs"

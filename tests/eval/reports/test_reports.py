"""Report writers: every format is written and read back by a real parser."""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from agentcli.errors import CaseFileError, ConfigError
from agentcli.eval.reports import SUPPORTED_EXTENSIONS, RedactingWriter, read_results, writer_for
from agentcli.eval.reports.html import HtmlWriter
from agentcli.eval.reports.json_report import JsonWriter
from agentcli.eval.reports.jsonl import JsonlWriter
from agentcli.eval.reports.junit import JunitWriter
from agentcli.eval.reports.markdown import MarkdownWriter
from agentcli.eval.results.model import CaseResult, RunHeader, RunSummary
from agentcli.eval.results.reader import read_document
from tests.eval.reports.page import report_data

EVIL_ID = "<script>alert(1)</script>"
UNICODE_ID = "報告-✓-café"


def _trace(tool_calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "completion": "done",
        "tool_calls": tool_calls or [],
        "next": None,
        "usage": {"input_tokens": 12, "output_tokens": 5, "total_tokens": 17, "cost": 0.0004},
    }


def sample_results() -> list[dict[str, Any]]:
    """One result of every kind, plus awkward ids and outputs."""
    return [
        {
            "id": "greet",
            "status": "passed",
            "input": "Hello",
            "output": "Hello! How can I help?",
            "duration_ms": 850,
            "assertions": [{"type": "contains", "passed": True, "message": "contains 'Hello'"}],
            "trace": _trace(),
        },
        {
            "id": "refund-policy",
            "status": "failed",
            "input": [{"role": "user", "content": "What is the refund policy?"}],
            "output": {"answer": "no idea"},
            "expected": {"answer": "30 days"},
            "duration_ms": 1500,
            "assertions": [
                {
                    "type": "contains",
                    "passed": False,
                    "message": "expected output to contain 'refund'",
                },
                {"type": "regex", "passed": True, "message": "matched"},
            ],
            "trace": _trace(
                [
                    {
                        "id": "call_1",
                        "server": "erp",
                        "tool": "lookup_policy",
                        "arguments": {"topic": "refund"},
                        "result": None,
                        "error": "policy service unavailable",
                    }
                ]
            ),
        },
        {
            "id": "broken",
            "status": "error",
            "input": "Break",
            "output": None,
            "duration_ms": 20,
            "error": "agent error: boom",
            "assertions": [],
        },
        {
            "id": "slow",
            "status": "timeout",
            "input": "Think hard",
            "output": None,
            "duration_ms": 30000,
            "error": "timeout after 30s",
            "assertions": [],
        },
        {
            "id": "later",
            "status": "skipped",
            "input": "Not now",
            "output": None,
            "duration_ms": 0,
            "assertions": [],
        },
        {
            "id": "expense-flow",
            "status": "failed",
            "input": "I need to file an expense",
            "output": "Which category?",
            "duration_ms": 4200,
            "error": "max turns (2) exceeded without reaching all checkpoints",
            "assertions": [],
            "turns": [
                {
                    "turn": 1,
                    "input": "I need to file an expense",
                    "output": "Sure, how much?",
                    "response": {"content": "Sure, how much?", "tool_calls": [], "next": None},
                    "checkpoints_reached": ["ask-amount"],
                    "duration_ms": 2000,
                },
                {
                    "turn": 2,
                    "input": "$50 for lunch",
                    "output": "Which category?",
                    "response": {
                        "content": "Which category?",
                        "tool_calls": [
                            {
                                "tool": "get_categories",
                                "arguments": {},
                                "result": ["meals"],
                                "error": None,
                            }
                        ],
                        "next": None,
                    },
                    "checkpoints_reached": [],
                    "duration_ms": 2200,
                },
            ],
            "checkpoints": [
                {
                    "id": "ask-amount",
                    "reached": True,
                    "reached_at_turn": 1,
                    "required": True,
                    "passed": True,
                    "message": "contains 'how much'",
                },
                {
                    "id": "submitted",
                    "reached": False,
                    "reached_at_turn": None,
                    "required": True,
                    "passed": False,
                    "message": "judge said no",
                    "agent_validation": {
                        "passed": False,
                        "reason": "never submitted",
                        "criteria": "submits",
                    },
                },
            ],
        },
        {
            "id": UNICODE_ID,
            "status": "passed",
            "input": "Grüße 👋",
            "output": "naïve 中文 line\u2028sep and ctl\x00\x1b chars",
            "duration_ms": 10,
            "assertions": [],
        },
        {
            "id": EVIL_ID,
            "status": "failed",
            "input": "</script><script>alert(3)</script>",
            "output": "<script>alert(2)</script> & <!-- comment",
            "duration_ms": 5,
            "assertions": [
                {"type": "equals", "passed": False, "message": "<b>not</b> equal | pipe"}
            ],
        },
    ]


def sample_header() -> RunHeader:
    return RunHeader.from_dict(
        {
            "type": "header",
            "environment": {"user_id": "u1", "team_id": "t1", "locale": "en-us"},
            "metadata": {
                "started_at": "2025-01-02T03:04:05+00:00",
                "version": "0.1.0",
                "input_file": "/work/tests/inputs.jsonl",
                "options": {"parallel": 1, "runs": 1},
            },
        }
    )


def sample_summary(results: list[dict[str, Any]]) -> RunSummary:
    statuses = [r["status"] for r in results]
    ran = len(results) - statuses.count("skipped")
    return RunSummary.from_dict(
        {
            # deliberately first: writers must put the keys in Yao's order
            "pass_rate": round(statuses.count("passed") / ran * 100, 2) if ran else 0.0,
            "total": len(results),
            "passed": statuses.count("passed"),
            "failed": statuses.count("failed"),
            "skipped": statuses.count("skipped"),
            "errors": statuses.count("error"),
            "timeouts": statuses.count("timeout"),
            "duration_ms": 40000,
            "agent_id": "tests.expense",
            "connector": "scripted",
        }
    )


def stability_results_and_runs() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    runs = []
    for run, status in enumerate(["passed", "failed", "passed"], 1):
        runs.append(
            {
                "id": "flaky",
                "status": status,
                "input": "hi",
                "output": "hey",
                "duration_ms": 100 * run,
                "assertions": [],
                "run": run,
            }
        )
        runs.append(
            {
                "id": "solid",
                "status": "passed",
                "input": "yo",
                "output": "yo",
                "duration_ms": 50 + run,
                "assertions": [],
                "run": run,
            }
        )
    stability = [
        {
            "id": "flaky",
            "runs": 3,
            "passed": 2,
            "pass_rate": 66.67,
            "pass_hat_k": 0.296,
            "pass_at_k": 0.963,
            "ci_low": 20.77,
            "ci_high": 93.85,
            "stability": "unstable",
            "duration": {"min": 100, "avg": 200, "p50": 200, "p95": 290, "max": 300, "std": 81.6},
        },
        {
            "id": "solid",
            "runs": 3,
            "passed": 3,
            "pass_rate": 100.0,
            "ci_low": 43.85,
            "ci_high": 100.0,
            "stability": "stable",
            "duration": {"min": 51, "avg": 52, "p50": 52, "p95": 53, "max": 53, "std": 0.8},
            "future_field": {"ignored": True},
        },
    ]
    return stability, runs


def write_report(
    writer: Any, results: list[dict[str, Any]], stability: list[dict[str, Any]] | None = None
) -> Path:
    """Drive a writer through the streaming protocol."""
    writer.open(sample_header())
    for result in results:
        writer.add(CaseResult.from_dict(copy.deepcopy(result)))
    writer.close(sample_summary(results), stability)
    return writer.path


# -- choosing a writer ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("out.jsonl", JsonlWriter),
        ("out.JSONL", JsonlWriter),
        ("out", JsonlWriter),
        ("out.json", JsonWriter),
        ("out.md", MarkdownWriter),
        ("out.markdown", MarkdownWriter),
        ("out.html", HtmlWriter),
        ("out.htm", HtmlWriter),
        ("out.xml", JunitWriter),
    ],
)
def test_writer_for_picks_the_format_by_extension(tmp_path: Path, name: str, kind: type) -> None:
    writer = writer_for(tmp_path / name)
    assert isinstance(writer, RedactingWriter)
    assert isinstance(writer.inner, kind)
    assert writer.path == tmp_path / name


def test_writer_for_rejects_unknown_extension_listing_the_supported_ones(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        writer_for(tmp_path / "report.txt")
    text = str(caught.value)
    assert "'.txt'" in text
    for ext in SUPPORTED_EXTENSIONS:
        assert ext in text


# -- JSON Lines ----------------------------------------------------------------------------


def test_jsonl_lines_parse_one_by_one_in_order(tmp_path: Path) -> None:
    results = sample_results()
    path = write_report(JsonlWriter(tmp_path / "out.jsonl"), results)
    raw = path.read_text(encoding="utf-8")
    lines = [json.loads(line) for line in raw.split("\n") if line]
    assert [line["type"] for line in lines] == ["header"] + ["result"] * len(results) + ["summary"]
    assert lines[0]["environment"]["user_id"] == "u1"
    for line, result in zip(lines[1:-1], results, strict=True):
        assert list(line)[:3] == ["type", "id", "status"]
        assert {k: v for k, v in line.items() if k != "type"} == result
    assert list(lines[-1])[:8] == [
        "type",
        "total",
        "passed",
        "failed",
        "skipped",
        "errors",
        "timeouts",
        "duration_ms",
    ]
    # U+2028 must be escaped so that splitlines() readers see one record per line.
    assert len(raw.splitlines()) == len(lines)
    assert UNICODE_ID in raw  # UTF-8, not \u escapes


def test_jsonl_round_trips_through_the_reader(tmp_path: Path) -> None:
    stability, runs = stability_results_and_runs()
    path = write_report(JsonlWriter(tmp_path / "out.jsonl"), runs, stability)
    lines = [json.loads(line)["type"] for line in path.read_text(encoding="utf-8").splitlines()]
    assert lines[-3:] == ["stability", "stability", "summary"]
    loaded = read_results(path)
    assert loaded.format == "jsonl"
    assert loaded.warnings == []
    assert [r.to_dict() for r in loaded.results] == runs
    assert loaded.stability_results == stability
    assert loaded.summary is not None and loaded.summary.total == len(runs)
    assert loaded.header.metadata["version"] == "0.1.0"
    assert "type" not in loaded.header.to_dict()


def test_jsonl_result_is_on_disk_before_close(tmp_path: Path) -> None:
    writer = JsonlWriter(tmp_path / "live.jsonl")
    writer.open(sample_header())
    writer.add(CaseResult.from_dict(sample_results()[0]))
    lines = (tmp_path / "live.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["type"] for line in lines] == ["header", "result"]


def test_interrupted_jsonl_run_keeps_every_finished_case(tmp_path: Path) -> None:
    results = sample_results()
    writer = JsonlWriter(tmp_path / "killed.jsonl")
    writer.open(sample_header())
    for result in results:
        writer.add(CaseResult.from_dict(result))
    # Simulated crash: close() is never called.
    loaded = read_results(tmp_path / "killed.jsonl")
    assert [r.id for r in loaded.results] == [r["id"] for r in results]
    assert loaded.summary is None
    assert any("did not finish" in w for w in loaded.warnings)


def test_truncated_last_line_is_dropped_with_a_warning(tmp_path: Path) -> None:
    results = sample_results()
    path = write_report(JsonlWriter(tmp_path / "out.jsonl"), results)
    lines = path.read_text(encoding="utf-8").splitlines()
    # Cut the file in the middle of the last result line (a crash mid-write).
    path.write_text(
        "\n".join(lines[:-2]) + "\n" + lines[-2][: len(lines[-2]) // 2], encoding="utf-8"
    )
    loaded = read_results(path)
    assert [r.id for r in loaded.results] == [r["id"] for r in results[:-1]]
    assert any(f"{path}:{len(lines) - 1}:" in w and "truncated" in w for w in loaded.warnings)


def test_corrupt_middle_line_is_an_error_naming_the_line(tmp_path: Path) -> None:
    path = write_report(JsonlWriter(tmp_path / "out.jsonl"), sample_results())
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2][:10]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(CaseFileError) as caught:
        read_results(path)
    assert f"{path}:3:" in str(caught.value)


def test_reader_errors_are_clear(tmp_path: Path) -> None:
    with pytest.raises(CaseFileError, match="no such results file"):
        read_results(tmp_path / "missing.jsonl")
    (tmp_path / "empty.jsonl").write_text("\n", encoding="utf-8")
    with pytest.raises(CaseFileError, match="empty"):
        read_results(tmp_path / "empty.jsonl")
    (tmp_path / "list.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(CaseFileError, match="not a results file"):
        read_results(tmp_path / "list.json")
    (tmp_path / "bad.json").write_text('{\n  "summary": {,\n}', encoding="utf-8")
    with pytest.raises(CaseFileError, match=r"bad\.json:2:"):
        read_results(tmp_path / "bad.json")


# -- JSON ----------------------------------------------------------------------------------


def test_json_report_has_yaos_shape_in_stable_key_order(tmp_path: Path) -> None:
    results = sample_results()
    path = write_report(JsonWriter(tmp_path / "out.json"), results)
    raw = path.read_text(encoding="utf-8")
    with path.open(encoding="utf-8") as handle:
        report = json.load(handle)
    assert list(report) == ["summary", "environment", "results", "metadata"]
    assert list(report["summary"]) == [
        "total", "passed", "failed", "skipped", "errors", "timeouts",
        "duration_ms", "agent_id", "connector", "pass_rate",
    ]  # fmt: skip
    assert list(report["environment"]) == ["user_id", "team_id", "locale"]
    assert list(report["metadata"])[:5] == [
        "started_at",
        "completed_at",
        "version",
        "input_file",
        "options",
    ]
    assert report["metadata"]["completed_at"]  # stamped at close when the runner did not
    assert report["results"] == results
    assert list(report["results"][1]) == [
        "id",
        "status",
        "input",
        "output",
        "expected",
        "duration_ms",
        "assertions",
        "trace",
    ]
    assert raw.startswith('{\n  "summary"')
    assert UNICODE_ID in raw and EVIL_ID in raw  # ensure_ascii=False, no HTML escaping


def test_json_report_with_stability_and_read_back(tmp_path: Path) -> None:
    stability, runs = stability_results_and_runs()
    path = write_report(JsonWriter(tmp_path / "stab.json"), runs, stability)
    report = json.loads(path.read_text(encoding="utf-8"))
    assert list(report) == ["summary", "environment", "results", "stability_results", "metadata"]
    assert list(report["stability_results"][0])[:4] == ["id", "runs", "passed", "pass_rate"]
    loaded = read_results(path)
    assert loaded.format == "report"
    assert [r.to_dict() for r in loaded.results] == runs
    assert loaded.stability_results == stability
    assert loaded.header.environment["team_id"] == "t1"


def test_buffered_writers_write_atomically_at_close(tmp_path: Path) -> None:
    writer = JsonWriter(tmp_path / "out.json")
    writer.open(sample_header())
    writer.add(CaseResult.from_dict(sample_results()[0]))
    assert not (tmp_path / "out.json").exists()
    writer.close(sample_summary([]), None)
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]  # no temp file left behind


# -- Yao's report ----------------------------------------------------------------------------


def yao_report() -> dict[str, Any]:
    """Yao's single pretty-printed JSON report (what its ``.jsonl`` files really hold)."""
    return {
        "metadata": {
            "started_at": "2026-01-27T10:41:18.1+08:00",
            "version": "",
            "input_file": "/a/tests/inputs.jsonl",
            "output_file": "",
        },
        "results": [
            {
                "id": "T001",
                "status": "passed",
                "input": "Hello",
                "output": "```markdown\n# Hi\n```",
                "duration_ms": 16743,
                "trace": {
                    "completion": {"model": "gpt-4o", "role": "assistant", "content": "Hi"},
                    "tool_calls": [
                        {
                            "id": "c1",
                            "server": "erp",
                            "tool": "get",
                            "arguments": {"a": 1},
                            "result": {"ok": True},
                        }
                    ],
                },
            },
            {
                "id": "dyn/1",
                "status": "failed",
                "input": "start",
                "output": "bye",
                "duration_ms": 900,
                "error": "max turns (1) exceeded without reaching all checkpoints",
                "metadata": {
                    "mode": "dynamic",
                    "total_turns": 1,
                    "turns": [
                        {
                            "turn": 1,
                            "input": "start",
                            "output": "bye",
                            "response": {"content": "bye"},
                            "checkpoints_reached": [],
                            "duration_ms": 900,
                        }
                    ],
                    "checkpoints": {
                        "greet": {
                            "id": "greet",
                            "reached": False,
                            "required": True,
                            "passed": False,
                            "message": "no greeting",
                        }
                    },
                },
            },
        ],
        "summary": {
            "total": 2,
            "passed": 1,
            "failed": 1,
            "skipped": 0,
            "errors": 0,
            "timeouts": 0,
            "duration_ms": 17643,
            "agent_id": "expense",
            "connector": "gpt-4o",
        },
        "environment": {"locale": "en-us", "user_id": "", "team_id": ""},
    }


def test_yao_single_json_report_in_a_jsonl_file_is_detected(tmp_path: Path) -> None:
    path = tmp_path / "output-20260127104118.jsonl"
    path.write_text(json.dumps(yao_report(), indent=2) + "\n", encoding="utf-8")
    loaded = read_results(path)
    assert loaded.format == "report"
    assert [r.id for r in loaded.results] == ["T001", "dyn/1"]
    assert loaded.summary is not None and loaded.summary.agent_id == "expense"
    assert loaded.header.environment["locale"] == "en-us"
    assert loaded.stability_results == []


def test_yao_stability_report_reads_and_renders(tmp_path: Path) -> None:
    report = {
        "summary": {"total": 1, "passed": 0, "failed": 1, "runs_per_case": 4, "overall_pass_rate": 75.0},
        "stability_results": [
            {
                "id": "T1", "runs": 4, "passed": 3, "failed": 1, "pass_rate": 75.0, "stable": False,
                "stability_class": "unstable", "avg_duration_ms": 120.5, "min_duration_ms": 100,
                "max_duration_ms": 150, "std_deviation_ms": 20.1,
                "run_details": [{"run": k, "status": "passed" if k < 4 else "failed", "duration_ms": 100 + k} for k in range(1, 5)],
            }
        ],
        "metadata": {"started_at": "2026-01-27T10:41:18+08:00"},
    }  # fmt: skip
    path = tmp_path / "yao-stab.json"
    path.write_text(json.dumps(report, indent=2), encoding="utf-8")
    loaded = read_results(path)
    assert loaded.results == [] and loaded.stability_results[0]["id"] == "T1"
    from agentcli.eval.reports.html import render_html
    from agentcli.eval.reports.markdown import render_markdown

    markdown = render_markdown(loaded.report())
    assert "| `T1` | 3/4 | 75.0% |" in markdown and "unstable" in markdown
    page = render_html(loaded.report())
    assert page.count("<svg") == 2  # pass-rate bars and the duration histogram


# -- JUnit ---------------------------------------------------------------------------------


def test_junit_parses_with_counts_names_and_output(tmp_path: Path) -> None:
    results = sample_results()
    path = write_report(JunitWriter(tmp_path / "out.xml"), results)
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    suite = root.find("testsuite")
    assert suite is not None
    assert suite.attrib["name"] == "tests.expense"
    assert (
        suite.attrib["tests"],
        suite.attrib["failures"],
        suite.attrib["errors"],
        suite.attrib["skipped"],
    ) == ("8", "3", "2", "1")
    assert suite.attrib["timestamp"] == "2025-01-02T03:04:05+00:00"
    assert float(suite.attrib["time"]) == pytest.approx(40.0)
    cases = suite.findall("testcase")
    assert [c.attrib["name"] for c in cases] == [r["id"] for r in results]
    assert {c.attrib["classname"] for c in cases} == {"tests.expense"}
    by_name = {c.attrib["name"]: c for c in cases}
    assert (
        by_name["greet"].find("failure") is None and float(by_name["greet"].attrib["time"]) == 0.85
    )
    failure = by_name["refund-policy"].find("failure")
    assert (
        failure is not None and "expected output to contain 'refund'" in failure.attrib["message"]
    )
    assert "[contains]" in (failure.text or "")
    error = by_name["slow"].find("error")
    assert (
        error is not None
        and error.attrib["type"] == "timeout"
        and "timeout after 30s" in error.attrib["message"]
    )
    assert by_name["broken"].find("error") is not None
    assert by_name["later"].find("skipped") is not None
    out = by_name[UNICODE_ID].findtext("system-out")
    assert out is not None and "naïve 中文" in out and "\x00" not in out and "\x1b" not in out
    assert by_name[EVIL_ID].findtext("system-out") == "<script>alert(2)</script> & <!-- comment"
    assert json.loads(by_name["refund-policy"].findtext("system-out") or "") == {
        "answer": "no idea"
    }


def test_junit_has_one_testcase_per_stability_run(tmp_path: Path) -> None:
    stability, runs = stability_results_and_runs()
    path = write_report(JunitWriter(tmp_path / "stab.xml"), runs, stability)
    names = [c.attrib["name"] for c in ET.parse(path).getroot().iter("testcase")]
    assert names == [f"{r['id']} run {r['run']}" for r in runs]


# -- HTML ----------------------------------------------------------------------------------


def test_html_is_self_contained_and_escapes_user_content(tmp_path: Path) -> None:
    results = sample_results()
    page = write_report(HtmlWriter(tmp_path / "out.html"), results).read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert "<script>alert" not in page and "alert(3)</script>" not in page
    assert "\\u003cscript\\u003ealert(1)\\u003c/script\\u003e" in page  # inside the data
    assert "http://" not in page and "https://" not in page
    assert not re.search(r"\b(src|href)=\"(?!#)", page)  # only in-page anchors
    assert "<link" not in page
    # Exactly our two script elements: the JSON data and the inline, hash-allowed code.
    assert page.count("<script") == 2
    data = report_data(page)
    assert sorted(row[1] for row in data["cases"]) == sorted(r["id"] for r in results)
    script = re.search(r"\n<script>(.*?)</script>", page, re.S)
    assert script is not None
    digest = base64.b64encode(hashlib.sha256(script.group(1).encode()).digest()).decode()
    assert f"script-src &#x27;sha256-{digest}&#x27;" in page


def test_html_data_lists_failures_first_with_their_pages(tmp_path: Path) -> None:
    results = sample_results()
    page = write_report(HtmlWriter(tmp_path / "out.html"), results).read_text(encoding="utf-8")
    data = report_data(page)
    rows = data["cases"]
    statuses = [row[2] for row in rows]
    not_passing = [r["status"] for r in results if r["status"] not in ("passed", "skipped")]
    assert statuses == [*not_passing, "skipped", "passed", "passed"]
    assert [row[0] for row in rows][:3] == [1, 2, 3]  # file order within the failures
    by_id = {row[1]: data["details"][row[7]] for row in rows if len(row) > 7 and row[7] is not None}
    refund = by_id["refund-policy"]
    assert refund["error"] == "expected output to contain 'refund'"
    assert refund["tools"][0][:3] == ["erp", "lookup_policy", "policy service unavailable"]
    assert refund["assertions"][0] == [
        "contains",
        False,
        "expected output to contain 'refund'",
        [["actual", '{ "answer": "no idea" }']],
    ]
    assert refund["usage"]["total_tokens"] == 17
    flow = by_id["expense-flow"]
    assert flow["turns"][1]["user"] == "$50 for lunch"
    assert flow["turns"][1]["tools"][0][1] == "get_categories"
    assert flow["checkpoints"][1][4] == "judge said no (judge: never submitted)"
    assert by_id["broken"]["error"] == "agent error: boom"
    # A passed case is its row: what it was asked and said, not its trace.
    greet = next(row for row in rows if row[1] == "greet")
    assert greet == [0, "greet", "passed", 850, "Hello", "1/1", "Hello! How can I help?",
                     None, None, None, [], "$0.0004 (agent $0.0004)"]  # fmt: skip
    assert "greet" not in by_id
    assert "<svg" not in page  # charts only for stability runs
    assert '<details class="case"' not in page  # no per-case markup: the script draws it


def test_html_data_writes_a_repeated_string_once() -> None:
    from agentcli.eval.reports._html_data import _Interner, report_data
    from agentcli.eval.results.model import CaseResult

    prompt = "You are a careful assistant. " * 20
    results = [CaseResult(id=f"c{i}", status="failed", input=prompt) for i in range(50)]
    data = report_data(results)
    assert data["strings"].count(prompt) == 1
    text = json.dumps(data)
    assert text.count(json.dumps(prompt)) == 1  # the one copy, in the table
    # An object of the data that looks like a reference is wrapped, never read as one.
    wrapped = _Interner().document({"cases": [{"$": 1, "$o": 2}], "details": []})
    assert wrapped["cases"] == [{"$o": {"$": 1, "$o": 2}}]


def test_html_stability_charts_are_inline_svg(tmp_path: Path) -> None:
    stability, runs = stability_results_and_runs()
    page = write_report(HtmlWriter(tmp_path / "stab.html"), runs, stability).read_text(
        encoding="utf-8"
    )
    assert page.count("<svg") == 2
    bars = re.search(r'<svg role="img" aria-label="Pass rate per case".*?</svg>', page, re.S)
    assert bars is not None and "flaky" in bars.group(0) and "66.7%" in bars.group(0)
    histogram = re.search(r'aria-label="Duration histogram".*?</svg>', page, re.S)
    assert histogram is not None and "(6 runs)" in histogram.group(0)
    assert "unstable" in page and "29.6%" in page  # pass^k as a percentage


# -- Markdown ------------------------------------------------------------------------------


def test_markdown_report_lists_every_case_and_explains_failures(tmp_path: Path) -> None:
    results = sample_results()
    text = write_report(MarkdownWriter(tmp_path / "out.md"), results).read_text(encoding="utf-8")
    assert text.startswith("# Agent Eval Report\n")
    for result in results:
        assert result["id"] in text
    assert f"`{EVIL_ID}`" in text  # ids sit in code spans, so renderers show them literally
    assert "| Pass Rate | 28.6% |" in text
    assert "## Details" in text
    details = text.split("## Details", 1)[1]
    assert "### ✅ `greet`" not in details  # passed static cases need no detail section
    for wanted in (
        "### ❌ `refund-policy`",
        "expected output to contain 'refund'",
        "`erp/lookup_policy` — error: policy service unavailable",
        "### 💥 `broken`",
        "### ⏱️ `slow`",
        "### ⏭️ `later`",
        "#### Transcript",
        "##### Turn 2 (2.2s)",
        "$50 for lunch",
        "| `submitted` | yes | ✗ | - | judge said no (judge: never submitted) |",
        "\\<b\\>not\\</b\\> equal \\| pipe",
    ):
        assert wanted in details, wanted


def test_markdown_fences_survive_backticks_in_output(tmp_path: Path) -> None:
    result = {
        "id": "ticks",
        "status": "failed",
        "input": "x",
        "output": "````\nnot a fence end\n````",
        "duration_ms": 1,
        "assertions": [],
    }
    text = write_report(MarkdownWriter(tmp_path / "t.md"), [result]).read_text(encoding="utf-8")
    assert "`````text\n````\nnot a fence end\n````\n`````" in text


def test_rates_given_as_fractions_render_as_percentages() -> None:
    from agentcli.eval.reports.markdown import render_markdown

    report = {
        "summary": {"total": 4, "passed": 2, "failed": 2, "pass_rate": 0.5},
        "stability_results": [
            {
                "id": "zero",
                "runs": 3,
                "passed": 0,
                "pass_rate": 0.0,
                "ci_low": 0.0,
                "ci_high": 0.56,
            },
            {"id": "all", "runs": 3, "passed": 3, "pass_rate": 1.0},
            {"id": "one-in-100", "runs": 100, "passed": 1, "pass_rate": 1.0},
        ],
    }
    text = render_markdown(read_document(report).report())
    assert "| Pass Rate | 50.0% |" in text
    assert "| `zero` | 0/3 | 0.0% | 0.0% – 56.0% | 🔴 highly_unstable |" in text
    assert "| `all` | 3/3 | 100.0% | - | ✅ stable |" in text
    assert "| `one-in-100` | 1/100 | 1.0% |" in text


# -- the reader repairs wrong types once --------------------------------------------------

HOSTILE_LINES = (
    '{"type": "header", "environment": "x", "metadata": [1]}\n'
    '{"type": "result", "id": "s", "status": "PASSED", "duration_ms": NaN, "run": true,'
    ' "error": {"why": 1}, "metadata": [1], "assertions": [null, {"type": 5, "passed": "yes"}],'
    ' "trace": {"tool_calls": [7, {"tool": ["t"], "server": null, "error": 3}],'
    ' "usage": {"cost": Infinity, "input_tokens": "9"}}}\n'
    '{"type": "result", "status": ["passed"]}\n'
    '{"type": "result", "id": 5, "status": "failed", "output": NaN}\n'
    '{"type": "summary", "total": 3, "duration_ms": Infinity, "pass_rate": NaN, "agent_id": 4}\n'
)


def test_reader_repairs_wrong_types_and_names_each_line(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(HOSTILE_LINES, encoding="utf-8")
    loaded = read_results(path)
    assert (loaded.header.environment, loaded.header.metadata) == ({}, {})
    first, no_id, number_id = loaded.results
    assert first.status == "error"  # an unknown status never counts as a pass
    assert first.duration_ms is None and first.run is None and first.metadata == {}
    assert first.error == '{"why":1}'  # text kept as its JSON, nothing said is lost
    assert [(a.type, a.passed, a.message) for a in first.assertions] == [("5", False, "")]
    assert first.trace is not None
    assert [(c.tool, c.server, c.error) for c in first.trace.tool_calls] == [('["t"]', "", "3")]
    # "9" is text, Infinity not finite: both unknown
    assert (first.trace.usage.input_tokens, first.trace.usage.cost) == (0, None)
    assert (no_id.id, no_id.status) == ("", "error")
    assert number_id.id == "" and number_id.output != number_id.output  # NaN kept as data
    summary = loaded.summary
    assert summary is not None and summary.total == 3
    assert (summary.duration_ms, summary.pass_rate, summary.agent_id) == (None, None, "")
    # written back as read, for --resume: nothing is lost
    assert no_id.to_dict() == {"status": ["passed"]}
    assert first.to_dict()["trace"]["usage"] == {"cost": math.inf, "input_tokens": "9"}
    warned = "\n".join(loaded.warnings)
    for line, what in [(1, "header: environment"), (2, "result 's': status is \"PASSED\""),
                       (3, "result: id is missing"), (4, "result: id is 5"), (5, "summary: duration_ms")]:  # fmt: skip
        assert f"r.jsonl:{line}: {what}" in warned


@pytest.mark.parametrize("ext", [".json", ".md", ".html", ".xml", ".jsonl"])
def test_every_writer_renders_a_repaired_hostile_file(tmp_path: Path, ext: str) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(HOSTILE_LINES, encoding="utf-8")
    loaded = read_results(path)
    writer = writer_for(tmp_path / f"report{ext}")
    writer.open(loaded.header, loaded.results)
    writer.close(loaded.report().summary, loaded.stability_results or None)
    assert (tmp_path / f"report{ext}").stat().st_size > 0


def test_json_report_sections_that_are_not_objects_become_empty(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    report = {"summary": [1], "environment": "x", "metadata": [None],
              "results": [{"id": "a", "status": "passed"}, 1], "stability_results": [{"id": 1, "runs": 1e999}]}  # fmt: skip
    path.write_text(json.dumps(report), encoding="utf-8")
    loaded = read_results(path)
    assert (loaded.header.environment, loaded.header.metadata) == ({}, {})
    assert loaded.summary is None
    assert loaded.stability_results == [{"id": "1"}]
    assert [r.id for r in loaded.results] == ["a"]
    assert any("r.json: header: environment" in w for w in loaded.warnings)
    assert any("stability_results[0]" in w for w in loaded.warnings)


def test_repair_warnings_are_capped(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    rows = [json.dumps({"type": "result", "id": f"c{i}", "status": "nope"}) for i in range(50)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    loaded = read_results(path)
    assert len(loaded.results) == 50 and all(r.status == "error" for r in loaded.results)
    repaired = [w for w in loaded.warnings if "status is" in w]
    assert len(repaired) == 20
    assert any("30 more records had" in w for w in loaded.warnings)


# -- expected vs actual under a custom message ---------------------------------------------

FRIENDLY = {
    "id": "price",
    "status": "failed",
    "input": "how much?",
    "output": "it is free",
    "duration_ms": 3,
    "error": "the bot must quote the price",
    "assertions": [
        {
            "type": "contains",
            "passed": False,
            "message": "the bot must quote the price",
            "expected": "$5",
            "detail": "expected output to contain '$5'",
        },
        {"type": "equals", "passed": False, "message": "total", "expected": 6, "actual": 5},
    ],
}


def test_markdown_shows_expected_and_actual_of_every_failed_assertion(tmp_path: Path) -> None:
    text = write_report(MarkdownWriter(tmp_path / "r.md"), [FRIENDLY]).read_text(encoding="utf-8")
    assert (
        "| 1 | `contains` | ❌ fail | the bot must quote the price<br>expected: `$5`"
        "<br>actual: `it is free`<br>check: `expected output to contain '$5'` |"
    ) in text
    assert "| 2 | `equals` | ❌ fail | total<br>expected: `6`<br>actual: `5` |" in text


def test_junit_shows_expected_and_actual_of_every_failed_assertion(tmp_path: Path) -> None:
    path = write_report(JunitWriter(tmp_path / "r.xml"), [FRIENDLY])
    failure = ET.parse(path).getroot().find("testsuite/testcase/failure")
    assert failure is not None
    assert (failure.text or "").splitlines() == [
        "the bot must quote the price",
        "[contains] the bot must quote the price",
        "    expected: $5",
        "    actual: it is free",
        "    check: expected output to contain '$5'",
        "[equals] total",
        "    expected: 6",
        "    actual: 5",
    ]


def test_html_shows_expected_and_actual_of_every_failed_assertion(tmp_path: Path) -> None:
    page = write_report(HtmlWriter(tmp_path / "r.html"), [FRIENDLY]).read_text(encoding="utf-8")
    (detail,) = report_data(page)["details"]
    assert [item[3] for item in detail["assertions"]] == [
        [
            ["expected", "$5"],
            ["actual", "it is free"],
            ["check", "expected output to contain '$5'"],
        ],
        [["expected", "6"], ["actual", "5"]],
    ]

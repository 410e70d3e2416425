"""``extract``: one safe file per case from our JSONL and Yao's report, plus an index."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from agentcli.errors import CaseFileError, ConfigError
from agentcli.eval.reports.jsonl import JsonlWriter
from agentcli.eval.results.extract import extract, safe_file_stem
from agentcli.eval.results.model import CaseResult, RunHeader
from tests.eval.reports.test_reports import (
    EVIL_ID,
    UNICODE_ID,
    sample_results,
    stability_results_and_runs,
    write_report,
    yao_report,
)


def _jsonl(
    tmp_path: Path, results: list[dict[str, Any]], stability: list[dict[str, Any]] | None = None
) -> Path:
    return write_report(JsonlWriter(tmp_path / "results.jsonl"), results, stability)


def _assert_inside(paths: list[Path], folder: Path) -> None:
    for path in paths:
        assert path.resolve().parent == folder.resolve(), path
        assert path.is_file()


def test_markdown_extract_writes_one_file_per_case_and_an_index(tmp_path: Path) -> None:
    results = sample_results()
    out = tmp_path / "cases"
    written = extract(_jsonl(tmp_path, results), out)
    _assert_inside(written, out)
    assert len(written) == len(results) + 1
    assert written[-1].name == "index.md"
    names = [p.name for p in written[:-1]]
    assert names[:6] == [
        "greet.md",
        "refund-policy.md",
        "broken.md",
        "slow.md",
        "later.md",
        "expense-flow.md",
    ]
    assert names[6] == f"{UNICODE_ID}.md"
    assert names[7] == "_script_alert(1)__script_.md"

    refund = (out / "refund-policy.md").read_text(encoding="utf-8")
    for wanted in ("# ❌ `refund-policy`", "**Status**: FAILED", "**Duration**: 1.5s", "## Input",
                   "What is the refund policy?", "## Output", '"answer": "no idea"', "## Assertions",
                   "expected output to contain 'refund'", "## Tool Calls", "`erp/lookup_policy`",
                   "policy service unavailable"):  # fmt: skip
        assert wanted in refund, wanted
    broken = (out / "broken.md").read_text(encoding="utf-8")
    assert "## Error\n\n```text\nagent error: boom\n```" in broken
    assert "timeout after 30s" in (out / "slow.md").read_text(encoding="utf-8")
    assert "**Status**: SKIPPED" in (out / "later.md").read_text(encoding="utf-8")
    dynamic = (out / "expense-flow.md").read_text(encoding="utf-8")
    for wanted in ("## Checkpoints", "`ask-amount`", "never submitted", "## Transcript",
                   "### Turn 1 (2.0s) — ✓ `ask-amount`", "$50 for lunch", "`get_categories`"):  # fmt: skip
        assert wanted in dynamic, wanted
    # A text answer is fenced: a heading or table in it cannot break the page's structure.
    greet = (out / "greet.md").read_text(encoding="utf-8")
    assert "## Output\n\n```markdown\nHello! How can I help?\n```" in greet

    index = (out / "index.md").read_text(encoding="utf-8")
    for path in written[:-1]:
        assert f"]({quote(path.name)})" in index
    assert "(refund-policy.md)" in index
    assert "(_script_alert%281%29__script_.md)" in index
    assert f"`{EVIL_ID}`" in index
    assert "8 total, 2 passed, 3 failed, 1 error, 1 timeout, 1 skipped" in index


def test_json_extract_writes_each_result_dict(tmp_path: Path) -> None:
    results = sample_results()
    out = tmp_path / "json"
    written = extract(_jsonl(tmp_path, results), out, fmt="json")
    _assert_inside(written, out)
    for path, result in zip(written[:-1], results, strict=True):
        assert path.suffix == ".json"
        assert json.loads(path.read_text(encoding="utf-8")) == result
    assert written[-1].name == "index.md"


def test_yao_single_json_report_extracts(tmp_path: Path) -> None:
    source = tmp_path / "output-20260127104118.jsonl"
    source.write_text(json.dumps(yao_report(), indent=2), encoding="utf-8")
    out = tmp_path / "yao"
    written = extract(source, out)
    assert [p.name for p in written] == ["T001.md", "dyn_1.md", "index.md"]
    first = written[0].read_text(encoding="utf-8")
    assert "**Status**: PASSED" in first and "**Duration**: 16.7s" in first
    # Yao's ```markdown wrapper is taken off, the answer fenced once (not twice)
    assert "## Output\n\n```markdown\n# Hi\n```\n" in first
    assert "`erp/get` — ok" in first
    dynamic = written[1].read_text(encoding="utf-8")
    assert "### Turn 1" in dynamic and "| `greet` | yes | ✗ | - | no greeting |" in dynamic


def test_stability_results_extract_with_a_runs_table(tmp_path: Path) -> None:
    stability, runs = stability_results_and_runs()
    out = tmp_path / "stab"
    written = extract(_jsonl(tmp_path, runs, stability), out)
    assert [p.name for p in written] == ["flaky.md", "solid.md", "index.md"]
    flaky = written[0].read_text(encoding="utf-8")
    for wanted in ("# 🟠 `flaky` — stability", "| Pass rate | 66.7% |", "| Confidence interval | 20.8% – 93.8% |",
                   "| pass^k | 29.6% |", "| Duration p95 | 290ms |", "## Runs", "| 2 | ❌ failed | 200ms |",
                   "## ❌ `flaky` — run 2"):  # fmt: skip
        assert wanted in flaky, wanted
    index = written[-1].read_text(encoding="utf-8")
    assert "🟠 unstable (66.7%)" in index and "✅ stable (100.0%)" in index
    as_json = extract(_jsonl(tmp_path, runs, stability), tmp_path / "stab-json", fmt="json")
    data = json.loads(as_json[0].read_text(encoding="utf-8"))
    assert data["stability"] == stability[0]
    assert [r["run"] for r in data["runs"]] == [1, 2, 3]


def test_yao_stability_report_extracts_run_details(tmp_path: Path) -> None:
    report = {
        "summary": {"total": 1, "passed": 0, "failed": 1},
        "stability_results": [
            {"id": "T1", "runs": 2, "passed": 1, "pass_rate": 50.0, "stability_class": "unstable",
             "avg_duration_ms": 110.0, "run_details": [{"run": 1, "status": "passed", "duration_ms": 100},
                                                      {"run": 2, "status": "failed", "duration_ms": 120, "error": "nope"}]}
        ],
    }  # fmt: skip
    source = tmp_path / "yao.json"
    source.write_text(json.dumps(report), encoding="utf-8")
    written = extract(source, tmp_path / "out")
    text = written[0].read_text(encoding="utf-8")
    assert written[0].name == "T1.md"
    assert "| 2 | ❌ failed | 120ms | nope |" in text and "| Duration avg | 110ms |" in text


MALICIOUS_IDS = [
    "../../etc/passwd",
    "a/b",
    "a\\b",
    "a_b",
    "CON",
    "con.txt",
    "LPT1",
    "..",
    ".",
    "",
    "   ",
    "x" * 500,
    "x" * 499 + "y",
    "é" * 300,
    "A",
    "a",
    "tab\there\nnew\x00line\x1b[31m",
    "trailing. ",
    "index",
    "/abs/olute",
    "C:\\windows\\system32",
    "‮exe.txt",  # right-to-left override
]


def test_malicious_ids_stay_inside_out_dir_with_distinct_names(tmp_path: Path) -> None:
    results = [
        {
            "id": raw,
            "status": "passed",
            "input": "x",
            "output": "y",
            "duration_ms": 1,
            "assertions": [],
        }
        for raw in MALICIOUS_IDS
    ]
    base = tmp_path / "base"
    out = base / "out"
    for fmt in ("markdown", "json"):
        written = extract(_jsonl(tmp_path, results), out / fmt, fmt=fmt)
        cases = written[:-1]
        assert len(cases) == len(MALICIOUS_IDS)
        _assert_inside(written, out / fmt)
        assert len({p.name.casefold() for p in written}) == len(written)
        for path in cases:
            name = path.name
            assert ".." not in name and "/" not in name and "\\" not in name
            assert not any(ord(ch) < 32 for ch in name)
            assert len(name.encode("utf-8")) <= 130
            assert name.split(".")[0].upper() not in {"CON", "PRN", "AUX", "NUL", "LPT1", "COM1"}
    # Nothing escaped: the only things under tmp_path are the results file and out/.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["base", "results.jsonl"]
    assert sorted(p.name for p in base.iterdir()) == ["out"]
    md_names = sorted(p.name for p in (out / "markdown").iterdir())
    assert (
        "index.md" in md_names and "index-2.md" in md_names
    )  # the case "index" never hides the index


def test_collisions_are_numbered_in_file_order(tmp_path: Path) -> None:
    ids = ["a/b", "a_b", "a:b", "Case", "case", ""]
    results = [
        {
            "id": raw,
            "status": "passed",
            "input": "",
            "output": "",
            "duration_ms": 1,
            "assertions": [],
        }
        for raw in ids
    ]
    written = extract(_jsonl(tmp_path, results), tmp_path / "out")
    assert [p.name for p in written] == [
        "a_b.md",
        "a_b-2.md",
        "a_b-3.md",
        "Case.md",
        "case-2.md",
        "case-3.md",
        "index.md",
    ]
    again = extract(_jsonl(tmp_path, results), tmp_path / "out2")
    assert [p.name for p in again] == [p.name for p in written]


@pytest.mark.parametrize(
    ("raw", "stem"),
    [
        ("../../etc/passwd", "_._etc_passwd"),
        ("a/b", "a_b"),
        ("CON", "_CON"),
        ("nul.md", "_nul.md"),
        ("..", "case"),
        ("", "case"),
        ("  spaced   out  ", "spaced out"),
        ("ctl\x00\x07\u200bchars", "ctl chars"),
        ("in\u200bvisible", "invisible"),
        ("tab\there\nnew\x1b[0m", "tab here new [0m"),
        (UNICODE_ID, UNICODE_ID),
        (42, "42"),
    ],
)
def test_safe_file_stem(raw: Any, stem: str) -> None:
    assert safe_file_stem(raw) == stem


def test_safe_file_stem_caps_length_on_a_character_boundary() -> None:
    stem = safe_file_stem("é" * 300)
    assert len(stem.encode("utf-8")) <= 120
    assert set(stem) == {"é"}


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_a_planted_symlink_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    outside = tmp_path / "outside.md"
    (out / "victim.md").symlink_to(outside)
    results = [
        {
            "id": "victim",
            "status": "passed",
            "input": "",
            "output": "",
            "duration_ms": 1,
            "assertions": [],
        }
    ]
    with pytest.raises(ConfigError, match="outside"):
        extract(_jsonl(tmp_path, results), out)
    assert not outside.exists()


def test_bad_format_and_missing_file_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="markdown or json"):
        extract(tmp_path / "whatever.jsonl", tmp_path / "out", fmt="pdf")
    with pytest.raises(CaseFileError, match="no such results file"):
        extract(tmp_path / "missing.jsonl", tmp_path / "out")


def test_interrupted_results_still_extract(tmp_path: Path) -> None:
    writer = JsonlWriter(tmp_path / "killed.jsonl")
    writer.open(RunHeader())
    for result in sample_results()[:3]:
        writer.add(CaseResult.from_dict(result))
    written = extract(tmp_path / "killed.jsonl", tmp_path / "out")
    assert [p.name for p in written] == ["greet.md", "refund-policy.md", "broken.md", "index.md"]

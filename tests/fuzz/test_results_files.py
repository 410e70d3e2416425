"""Results files (ours, Yao's, torn, hand-edited) fed to everything that reads them back:
the reader, ``extract`` and every report writer raise only agentcli's own errors."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from agentcli.eval.reports import LoadedReport, read_results, writer_for
from agentcli.eval.results.codec import finite
from agentcli.eval.results.extract import extract
from agentcli.eval.results.merge import merge_reports, write_merged
from agentcli.eval.results.model import STATUSES, CaseResult, Turn

from .mutate import FUZZ, as_json, mutated_bytes, mutated_data, only_own_errors

HEADER = {
    "type": "header",
    "environment": {"user_id": "u", "team_id": "t", "locale": "en-us"},
    "metadata": {
        "started_at": "2026-01-01T00:00:00+00:00",
        "version": "0.1.0",
        "input_file": "x.jsonl",
    },
}
RESULTS = [
    {
        "id": "a/../b",
        "status": "failed",
        "input": [{"role": "user", "content": "hi"}],
        "output": {"k": [1, None]},
        "expected": "x",
        "duration_ms": 12.5,
        "error": 'expected output to contain "x"',
        "assertions": [{"type": "contains", "passed": False, "message": "nope", "value": "x"}],
        "trace": {
            "completion": "hi",
            "tool_calls": [
                {
                    "id": "c1",
                    "server": "s",
                    "tool": "t",
                    "arguments": {"a": 1},
                    "result": "r",
                    "error": None,
                }
            ],
            "next": None,
            "usage": {"input_tokens": 1, "output_tokens": 2, "total_tokens": 3, "cost": 0.1},
            "retries": [{"attempt": 1, "kind": "rate_limit", "delay_s": 0.1, "error": "429"}],
        },
        "metadata": {"m": 1},
        "attempts": 2,
    },
    {
        "id": "dyn",
        "status": "passed",
        "input": "go",
        "output": "done",
        "duration_ms": 3,
        "assertions": [],
        "turns": [
            {
                "turn": 1,
                "input": "go",
                "output": "ok",
                "checkpoints_reached": ["a"],
                "duration_ms": 1,
            }
        ],
        "checkpoints": [{"id": "a", "reached": True, "required": True, "turn": 1, "message": None}],
    },
    {"id": "s", "status": "passed", "input": "x", "duration_ms": 1, "run": 1},
]
STABILITY = {
    "type": "stability", "id": "s", "runs": 2, "passed": 1, "pass_rate": 50.0, "stability": "unstable",
    "pass_hat_k": False, "pass_at_k": True, "duration": {"min": 1, "avg": 1.5, "p50": 1, "p95": 2, "max": 2, "std": 0.5},
}  # fmt: skip
SUMMARY = {"type": "summary", "total": 3, "passed": 2, "failed": 1, "skipped": 0, "errors": 0,
           "timeouts": 0, "duration_ms": 20, "agent_id": "probe", "pass_rate": 66.7}  # fmt: skip
RESULT_TEXTS = [
    "\n".join(json.dumps(x) for x in [HEADER, *({"type": "result", **r} for r in RESULTS), STABILITY, SUMMARY]),
    json.dumps({"summary": SUMMARY, "environment": HEADER["environment"], "results": RESULTS,
                "stability_results": [STABILITY], "metadata": HEADER["metadata"]}, indent=2),
]  # fmt: skip


def assert_well_typed(report: LoadedReport) -> None:
    """What the reader promises everything downstream (``codec.py``)."""
    assert isinstance(report.header.environment, dict)
    assert isinstance(report.header.metadata, dict)
    for result in report.results:
        assert isinstance(result.id, str) and result.status in STATUSES
        assert result.run is None or (type(result.run) is int and result.run >= 1)
        assert result.duration_ms is None or finite(result.duration_ms) is not None
        assert all(isinstance(item, dict) for item in result.logs or [])
        assert all(isinstance(turn, Turn) for turn in result.turns or [])
        assert all(
            isinstance(a.passed, bool) and isinstance(a.type, str) for a in result.assertions
        )
        calls = result.trace.tool_calls if result.trace is not None else []
        assert all(isinstance(c.tool, str) and isinstance(c.id, str) for c in calls)
        # written back and read again, a result is the same value: nothing is lost
        assert CaseResult.from_dict(result.to_dict()) == result
    summary = report.summary
    if summary is not None:
        figures = [summary.duration_ms, summary.pass_rate, *summary.extra.values()]
        assert all(not isinstance(f, float) or finite(f) is not None for f in figures)


def consume(path: Path, out: Path) -> None:
    """Everything that reads a results file back: the reader, extract, merge and every
    report."""
    report = only_own_errors(lambda: read_results(path))
    if report is None:
        return
    assert_well_typed(report)
    merged = only_own_errors(lambda: merge_reports([report]))
    if merged is not None:
        only_own_errors(lambda: write_merged(merged, out / "merged.jsonl"))
    for fmt in ("markdown", "json"):
        only_own_errors(lambda fmt=fmt: extract(path, out / fmt, fmt))
    for suffix in (".md", ".html", ".xml", ".json"):
        writer = writer_for(out / f"report{suffix}")

        def render(writer=writer) -> None:
            writer.open(report.header)
            for result in report.results:
                writer.add(result)
            writer.close(report.report().summary, report.stability_results or None)

        only_own_errors(render)


@FUZZ
@given(data=st.data())
def test_results_files_damaged_text(tmp_path: Path, data: st.DataObject) -> None:
    path = tmp_path / "results.jsonl"
    path.write_bytes(data.draw(mutated_bytes(RESULT_TEXTS)))
    consume(path, tmp_path / "out")


@FUZZ
@given(data=st.data())
def test_results_files_swapped_types(tmp_path: Path, data: st.DataObject) -> None:
    lines = [HEADER, *({"type": "result", **r} for r in RESULTS), STABILITY, SUMMARY]
    mutated_lines = data.draw(st.lists(mutated_data(lines), min_size=1, max_size=6))
    path = tmp_path / "results.jsonl"
    path.write_text("\n".join(as_json(line) for line in [HEADER, *mutated_lines]), encoding="utf-8")
    consume(path, tmp_path / "out")


def test_the_seed_reads_back(tmp_path: Path) -> None:
    """The unmutated seed is a valid results file, so the properties start from real input."""
    (tmp_path / "results.jsonl").write_text(RESULT_TEXTS[0], encoding="utf-8")
    report = read_results(tmp_path / "results.jsonl")
    assert len(report.results) == 3 and report.summary and not report.warnings

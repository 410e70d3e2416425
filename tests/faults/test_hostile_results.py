"""Issue 13, hostile results files under ``agent eval --resume``, ``agent report`` and
``agent merge``, run as users run them: a kept result whose id, status or fields have the
wrong type (or NaN/Infinity figures) is repaired by the reader with a warning naming the
line, never an ``internal error``; a kept result without a usable id matches no case, so
every case runs, and the resumed file keeps that result as it was read."""

from __future__ import annotations

import json
from pathlib import Path

from agentcli.eval.reports import read_results

from .harness import agent

HOSTILE_KEPT = [
    {"type": "header", "environment": "x", "metadata": [1]},
    {"type": "result", "id": "c0", "status": "passed", "input": "hi"},
    {"type": "result", "status": "passed"},  # no id
    {"type": "result", "id": ["c1"], "status": "passed"},  # an id that is a list
    {"type": "result", "id": "zz", "status": ["passed"], "duration_ms": 1e999},
    {
        "type": "result",
        "id": "yy",
        "status": "PASSED",
        "assertions": [None],
        "trace": {"tool_calls": [5]},
    },
]


def _hostile_results(path: Path) -> Path:
    """The kept results as JSON Lines (1e999 is written as Infinity, as Python does)."""
    path.write_text("".join(json.dumps(r) + "\n" for r in HOSTILE_KEPT), encoding="utf-8")
    return path


def _cases(path: Path) -> Path:
    rows = [{"id": f"c{i}", "input": f"hi {i}"} for i in range(3)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_resume_repairs_kept_results_and_runs_every_unmatched_case(project: Path) -> None:
    kept = _hostile_results(project / "run.jsonl")
    run = agent(
        project, "eval", "probe", f"@{_cases(project / 'cases.jsonl')}", "--resume", str(kept)
    )
    output = run.stdout + run.stderr
    assert "internal error" not in output and "Traceback" not in output, output[-3000:]
    assert run.returncode == 1, output[
        -3000:
    ]  # the kept statuses that are not ones count as errors
    assert "run.jsonl:3: result: id is missing" in output
    assert "run.jsonl:5: result 'zz': status is [\"passed\"]" in output
    assert "have no usable id and match no case" in output
    final = read_results(kept)
    ids = [r.id for r in final.results]
    assert ids.count("c0") == 1 and ids.count("c1") == 1 and ids.count("c2") == 1  # c1, c2 ran
    assert final.summary is not None and final.summary.total == 7
    assert final.summary.errors == 2 and final.summary.passed == 5
    # Resumed in place, the kept lines go back as they were read: nothing is rewritten but
    # the Infinity Python wrote for 1e999, which is no JSON and goes back as null.
    as_read = [{k: v for k, v in r.items() if k != "type"} for r in HOSTILE_KEPT[1:]]
    as_read[3]["duration_ms"] = None
    assert [r.to_dict() for r in final.results[:5]] == as_read


def test_report_and_merge_read_a_hostile_file(project: Path) -> None:
    kept = _hostile_results(project / "run.jsonl")
    for out in ("r.json", "r.md", "r.html", "r.xml"):
        run = agent(project, "report", str(kept), "-o", out)
        assert run.returncode == 0, run.stderr
        assert "warning: " in run.stderr and "internal error" not in run.stderr
    run = agent(project, "merge", str(kept), "-o", "merged.jsonl")
    assert run.returncode == 1, run.stderr  # two results count as errors
    assert "internal error" not in run.stderr
    assert len(read_results(project / "merged.jsonl").results) == 5  # none lost

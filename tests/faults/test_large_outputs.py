"""A 20 MB answer is a result like any other: the case finishes within its timeout, and
what comes after it (redaction, the console line, the results file) takes a fraction of
that — it took 7 s after a ``--timeout 2s`` case had passed (redaction searched every
credential pattern over the whole text), and an offline model streamed it in 3 million
deltas without letting the event loop (or a timeout) in."""

from __future__ import annotations

import json
import time

from agentcli.eval.reports import read_results

from .harness import agent

BIG_MODEL = (
    'def reply(messages, tools, settings):\n    return "x " * 10_000_000 + "api_key=abc123"\n'
)


def test_a_20_mb_answer_passes_and_is_written_quickly(project):
    (project / "assistants/probe/src/big.py").write_text(BIG_MODEL)
    case = {"id": "big", "input": "hi", "assert": {"type": "contains", "value": "x x"}}
    (project / "big.jsonl").write_text(json.dumps(case) + "\n")
    started = time.monotonic()
    run = agent(
        project,
        *("eval", "probe", "@big.jsonl", "-c", "python:big:reply", "--timeout", "2s"),
        *("-o", "big-out.jsonl"),
        timeout=60,
    )
    took = time.monotonic() - started
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr
    assert took < 15, f"{took:.1f}s for one case"  # lax: the point is no multi-second tail
    (result,) = read_results(project / "big-out.jsonl").results
    assert result.status == "passed"
    assert len(result.output) == 20_000_000 + len("api_key=[redacted]")
    assert result.output.endswith("api_key=[redacted]")

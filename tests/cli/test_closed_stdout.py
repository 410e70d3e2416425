"""``-o -`` into a reader that stops early (``| head -1``): the command ends quietly with the
shell's status for a closed pipe (141), not an error saying it could not write."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def big_results(path: Path, count: int = 3000) -> Path:
    """A finished results file far larger than a pipe's buffer."""
    lines = [{"type": "header", "environment": {}, "metadata": {"version": "test"}}]
    lines += [
        {"type": "result", "id": f"c{i}", "status": "passed", "input": "x" * 100, "output": "y"}
        for i in range(count)
    ]
    lines.append({"type": "summary", "total": count, "passed": count, "failed": 0})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_report_to_a_closed_stdout_stops_quietly_with_141(tmp_path: Path) -> None:
    results = big_results(tmp_path / "run.jsonl")
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "AGENTCLI_HOME": str(tmp_path)}
    process = subprocess.Popen(
        [sys.executable, "-m", "agentcli", "report", str(results), "-o", "-"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        env=env,
    )
    assert process.stdout is not None and process.stderr is not None
    first = process.stdout.readline()
    process.stdout.close()  # what `head -1` does after its line
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=60) == 141, stderr
    assert json.loads(first)["type"] == "header"
    assert stderr == ""

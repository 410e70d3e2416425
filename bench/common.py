"""Shared helpers for the benchmark scripts: time a command over several runs, print a
table, write the figures as JSON under bench/results/."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"


def cache_bytecode() -> None:
    """Compile agentcli's modules once, as a user's first run would (see ``run_once``)."""
    import compileall

    compileall.compile_dir(str(ROOT / "agentcli"), quiet=1)


cache_bytecode()


def agent_command() -> list[str]:
    """The `agent` console script of the interpreter running the bench."""
    script = Path(sys.executable).with_name("agent")
    return [str(script)] if script.exists() else [sys.executable, "-m", "agentcli"]


def run_once(
    argv: list[str], *, cwd: Path | None = None, env: dict | None = None
) -> tuple[float, float, int]:
    """Run ``argv`` once; return (wall seconds, peak RSS MiB, exit code)."""
    environ = {**os.environ, **(env or {})}
    # Users' Pythons cache bytecode; a sandbox that forbids it would make every run
    # recompile agentcli's modules (~0.1 s) and measure something nobody runs.
    environ.pop("PYTHONDONTWRITEBYTECODE", None)
    started = time.perf_counter()
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env=environ,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_maxrss / 1024, process.returncode


def measure(
    name: str, argv: list[str], *, runs: int = 10, cwd: Path | None = None, env: dict | None = None
) -> dict:
    """Run ``argv`` ``runs`` times (after one warm-up run) and summarise wall time and peak RSS."""
    run_once(argv, cwd=cwd, env=env)
    walls, rss, codes = [], [], set()
    for _ in range(runs):
        wall, peak, code = run_once(argv, cwd=cwd, env=env)
        walls.append(wall)
        rss.append(peak)
        codes.add(code)
    return {
        "name": name,
        "command": " ".join(argv),
        "runs": runs,
        "median_s": round(statistics.median(walls), 4),
        "min_s": round(min(walls), 4),
        "max_s": round(max(walls), 4),
        "peak_rss_mib": round(max(rss), 1),
        "exit_codes": sorted(codes),
    }


def print_table(rows: list[dict], columns: list[tuple[str, str]]) -> None:
    """Print ``rows`` as an aligned text table of the given (key, heading) columns."""
    cells = [[h for _, h in columns]] + [[str(row.get(k, "")) for k, _ in columns] for row in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(columns))]
    for index, line in enumerate(cells):
        print("  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)))
        if index == 0:
            print("  ".join("-" * width for width in widths))


def save(name: str, payload: dict) -> Path:
    """Write ``payload`` to bench/results/<name>.json and return the path."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return path

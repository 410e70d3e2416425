"""Where W2's time goes (bench/latency.py's workload): when the first request leaves, how
much of the start-up is defining dataclasses, and how the event loop's CPU time divides
between a case's work before its request, the HTTP exchange, its work after the response
and the rest (the view and the results file, batched by the outbox).

Run: .venv/bin/python bench/latency_breakdown.py [--cases 500] [--parallel 50]
     [--latency 0.2] [--runs 3]

Each run is ``agent eval`` under bench/_w2_probe.py, which attaches the clocks; the bare
aiohttp client of bench/latency.py runs beside it for its own start-up and run. The
per-phase figures come from a second run that times every event-loop callback (which
slows it): compare them with each other, not with bench/latency.py's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import print_table, save
from latency import floor_seconds, workload, workload_arguments

PROBE = Path(__file__).with_name("_w2_probe.py")


def probed_run(folder: Path, cases: Path, parallel: int, *, phases: bool) -> dict:
    """One ``agent eval`` under the probe: its figures and its whole wall time (ms)."""
    out = folder / "probe.json"
    env = {**os.environ, "AGENTCLI_HOME": str(folder / "home"), "AGENTCLI_PROBE_OUT": str(out)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as bench/common.run_once: users cache bytecode
    if phases:
        env["AGENTCLI_PROBE_PHASES"] = "1"
    argv = [sys.executable, str(PROBE), "eval", "bench", f"@{cases}", "--parallel", str(parallel)]
    argv += ["-o", str(folder / "out.jsonl")]
    started = time.perf_counter()
    env["AGENTCLI_PROBE_T0"] = repr(started)
    subprocess.run(argv, cwd=folder, env=env, capture_output=True, check=True)
    wall = (time.perf_counter() - started) * 1000
    return {**json.loads(out.read_text()), "wall_ms": wall}


def main() -> None:
    """Measure and print the breakdown."""
    args = workload_arguments(argparse.ArgumentParser(description=__doc__)).parse_args()
    with workload(args.cases, args.latency) as (server, folder, cases):
        probed_run(folder, cases, args.parallel, phases=False)  # compiles, caches schemas
        timed, split, floors = [], [], []
        for _ in range(args.runs):
            floors.append(floor_seconds(server.base_url, args.cases, args.parallel))
            timed.append(probed_run(folder, cases, args.parallel, phases=False))
            split.append(probed_run(folder, cases, args.parallel, phases=True))

    def median(values: list[float]) -> float:
        return round(statistics.median(values), 1)

    timeline = []
    for name in ("cli imported", "eval layer imported", "first request", "last response"):
        timeline.append({"moment": name, "ms": median([run["marks"][name] for run in timed])})
    timeline.append({"moment": "process gone", "ms": median([run["wall_ms"] for run in timed])})
    floor_run = median([run * 1000 for run, _ in floors])
    floor_wall = median([wall * 1000 for _, wall in floors])
    timeline.append(
        {
            "moment": "bare client: first request (start-up, aiohttp)",
            "ms": round(floor_wall - floor_run, 1),
        }
    )
    timeline.append({"moment": "bare client: process gone", "ms": floor_wall})
    print_table(timeline, [("moment", "moment"), ("ms", "ms since the process started")])
    defining = median([run["dataclasses_ms"] for run in timed])
    print(f"\ndataclass definitions: {timed[0]['dataclasses']}, {defining} ms of the start-up")

    names = sorted({name for run in split for name in run["phases_ms"]})
    rows = []
    for name in names:
        spent = median([run["phases_ms"].get(name, 0.0) for run in split])
        per_case = not name.startswith("start-up")
        rows.append(
            {
                "phase": name,
                "cpu_ms": spent,
                "us_per_case": round(spent * 1000 / args.cases) if per_case else "",
            }
        )
    print()
    print_table(
        rows,
        [("phase", "event-loop CPU (timed run)"), ("cpu_ms", "ms"), ("us_per_case", "µs/case")],
    )
    path = save("latency_breakdown", {"timeline": timeline, "phases": rows, "args": vars(args)})
    print(f"\nwritten: {path}")


if __name__ == "__main__":
    main()

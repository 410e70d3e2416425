"""Sandbox exec round trip: ``exec(["true"])`` in a workspace of each backend (local, bwrap).

Run: .venv/bin/python bench/sandbox.py [--calls 200]
Prints the median, p95 and mean milliseconds of one call (spawn, wait for the exit, kill
what is left of the group, drain the pipes) per backend and writes bench/results/sandbox.json.
A backend that cannot run here (bwrap refused by the kernel) is reported, not measured.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from common import print_table, save

from agentcli.assistant.sandbox import SandboxSpec, open_sandbox
from agentcli.assistant.sandbox.bwrap import bwrap_refusal


async def measure(backend: str, calls: int) -> dict:
    """The timing figures of ``calls`` execs of ``true`` (after one warm-up call)."""
    if backend == "bwrap":
        reason = await bwrap_refusal()
        if reason is not None:
            return {"backend": backend, "skipped": reason}
    sandbox = await open_sandbox(SandboxSpec(backend=backend))  # type: ignore[arg-type]
    try:
        await sandbox.exec(["true"])
        times = []
        for _ in range(calls):
            started = time.perf_counter()
            await sandbox.exec(["true"])
            times.append((time.perf_counter() - started) * 1000)
    finally:
        sandbox.remove()
    times.sort()
    return {
        "backend": backend,
        "calls": calls,
        "median_ms": round(statistics.median(times), 2),
        "p95_ms": round(times[int(len(times) * 0.95) - 1], 2),
        "mean_ms": round(statistics.fmean(times), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    rows = [asyncio.run(measure(backend, args.calls)) for backend in ("local", "bwrap")]
    columns = [("backend", "backend"), ("calls", "calls"), ("median_ms", "median ms"),
               ("p95_ms", "p95 ms"), ("mean_ms", "mean ms"), ("skipped", "skipped")]  # fmt: skip
    print_table(rows, columns)
    print(f"wrote {save('sandbox', {'rows': rows})}")


if __name__ == "__main__":
    main()

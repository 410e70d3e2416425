"""W1 overhead: N offline cases (echo model, one `contains` assertion) at --parallel 1 and 50.

Run: .venv/bin/python bench/overhead.py [--cases 1000] [--runs 5]
Prints the whole-process wall time, the run alone (from the results summary), per-case
overhead and peak RSS; writes bench/results/overhead.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

from cases import echo_cases, echo_package
from common import agent_command, print_table, run_once, save


def measure(folder: Path, cases: Path, parallel: int, runs: int, extra: list[str]) -> dict:
    """Median figures of ``runs`` eval processes."""
    walls, inner, rss = [], [], []
    out = folder / "out.jsonl"
    for _ in range(runs):
        argv = [
            *agent_command(),
            "eval",
            "bench",
            f"@{cases}",
            "--parallel",
            str(parallel),
            "-o",
            str(out),
            *extra,
        ]
        wall, peak, code = run_once(argv, cwd=folder, env={"AGENTCLI_HOME": str(folder / "home")})
        if code != 0:
            raise SystemExit(f"eval exited {code}: {' '.join(argv)}")
        summary = json.loads(out.read_text().splitlines()[-1])
        walls.append(wall)
        inner.append(summary["duration_ms"] / 1000)
        rss.append(peak)
    count = sum(1 for _ in cases.open())
    return {
        "parallel": parallel,
        "cases": count,
        "wall_s": round(statistics.median(walls), 3),
        "wall_min_max": f"{min(walls):.3f}-{max(walls):.3f}",
        "run_s": round(statistics.median(inner), 3),
        "per_case_ms": round(statistics.median(inner) / count * 1000, 3),
        "peak_rss_mib": round(max(rss), 1),
    }


def main() -> None:
    """Run W1 and print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--parallel", type=int, nargs="*", default=[1, 50])
    parser.add_argument(
        "--check",
        type=Path,
        help="fail (exit 1) when a wall time exceeds --factor x the figure recorded in this file",
    )
    parser.add_argument("--factor", type=float, default=3.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        echo_package(folder)
        cases = echo_cases(folder / "cases.jsonl", args.cases)
        rows = [measure(folder, cases, p, args.runs, []) for p in args.parallel]
    print_table(
        rows,
        [
            ("parallel", "parallel"),
            ("cases", "cases"),
            ("wall_s", "wall s"),
            ("wall_min_max", "min-max"),
            ("run_s", "run s"),
            ("per_case_ms", "ms/case"),
            ("peak_rss_mib", "peak RSS MiB"),
        ],
    )
    print(f"\nwritten: {save('overhead', {'rows': rows})}")
    if args.check:
        check(rows, json.loads(args.check.read_text()), args.factor)


def check(rows: list[dict], baseline: dict, factor: float) -> None:
    """The CI regression guard: generous, because CI machines are noisy."""
    recorded = {(r["parallel"], r["cases"]): r["wall_s"] for r in baseline["rows"]}
    for row in rows:
        limit = recorded.get((row["parallel"], row["cases"]))
        if limit is None:  # a guard that compares nothing would always pass
            raise SystemExit(
                f"no recorded figure for --parallel {row['parallel']} with {row['cases']} cases "
                "in the baseline: run the sizes it records"
            )
        verdict = "ok" if row["wall_s"] <= limit * factor else "TOO SLOW"
        print(
            f"parallel {row['parallel']}: {row['wall_s']} s vs recorded {limit} s (limit {limit * factor:.2f} s): {verdict}"
        )
        if verdict != "ok":
            raise SystemExit(1)


if __name__ == "__main__":
    main()

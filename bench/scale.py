"""W3 scale: offline runs of 10k / 100k cases (wall time, peak RSS, results file size),
and --runs 5 on 1,000 cases.

Run: .venv/bin/python bench/scale.py [--sizes 1000 10000 100000] [--stability 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from cases import echo_cases, echo_package
from common import agent_command, print_table, run_once, save


def measure(folder: Path, count: int, parallel: int, repeat: int, runs: int = 1) -> dict:
    """``repeat`` eval processes over ``count`` generated cases: median, min-max, peak."""
    cases = echo_cases(folder / f"cases-{count}.jsonl", count)
    out = folder / f"out-{count}-{runs}.jsonl"
    argv = [
        *agent_command(),
        "eval",
        "bench",
        f"@{cases}",
        "--parallel",
        str(parallel),
        "-o",
        str(out),
    ]
    if runs > 1:
        argv += ["--runs", str(runs)]
    walls, peaks = [], []
    for _ in range(repeat):
        out.unlink(missing_ok=True)
        wall, peak, code = run_once(argv, cwd=folder, env={"AGENTCLI_HOME": str(folder / "home")})
        if code != 0:
            raise SystemExit(f"eval exited {code}")
        walls.append(wall)
        peaks.append(peak)
    wall = statistics.median(walls)
    return {
        "cases": count,
        "runs": runs,
        "parallel": parallel,
        "wall_s": round(wall, 2),
        "wall_min_max": f"{min(walls):.2f}-{max(walls):.2f}",
        "us_per_run": round(wall / (count * runs) * 1e6, 1),
        "peak_rss_mib": round(max(peaks), 1),
        "results_mib": round(out.stat().st_size / 2**20, 1),
    }


def main() -> None:
    """Run W3 and print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="*", default=[1000, 10000, 100000])
    parser.add_argument("--parallel", type=int, default=50)
    parser.add_argument("--stability", type=int, default=1000, help="cases for the --runs 5 row")
    parser.add_argument("--repeat", type=int, default=3, help="processes per row")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        echo_package(folder)
        rows = [measure(folder, n, args.parallel, args.repeat) for n in args.sizes]
        rows.append(measure(folder, args.stability, args.parallel, args.repeat, runs=5))
    print_table(
        rows,
        [
            ("cases", "cases"),
            ("runs", "runs"),
            ("parallel", "parallel"),
            ("wall_s", "wall s"),
            ("wall_min_max", "min-max"),
            ("us_per_run", "µs/run"),
            ("peak_rss_mib", "peak RSS MiB"),
            ("results_mib", "results MiB"),
        ],
    )
    print(f"\nwritten: {save('scale', {'rows': rows})}")


if __name__ == "__main__":
    main()

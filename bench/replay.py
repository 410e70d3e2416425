"""Replay overhead (issue 15): W1's 1,000 offline echo cases run plainly, recorded with
--record, then replayed with --replay; the replayed whole process against the plain one
(asked: <= 1.3x), and the cassette size per case.

Run: .venv/bin/python bench/replay.py [--cases 1000] [--runs 5] [--parallel 1]
Writes bench/results/replay.json.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from cases import echo_cases, echo_package
from common import print_table, save
from overhead import measure


def main() -> None:
    """Run the three modes, alternating, and print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--parallel", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        echo_package(folder)
        cases = echo_cases(folder / "cases.jsonl", args.cases)
        modes = {"plain": [], "--record": ["--record"], "--replay": ["--replay"]}
        measure(folder, cases, args.parallel, 1, ["--record"])  # the cassettes to replay
        rows = {
            name: measure(folder, cases, args.parallel, args.runs, extra)
            for name, extra in modes.items()
        }
        tapes = list((folder / "cassettes").glob("*.jsonl"))
        size = statistics.median(path.stat().st_size for path in tapes)
    plain = rows["plain"]["wall_s"]
    table = [
        {"mode": name, **row, "x_plain": round(row["wall_s"] / plain, 3)}
        for name, row in rows.items()
    ]
    print_table(
        table,
        [
            ("mode", "mode"),
            ("cases", "cases"),
            ("parallel", "parallel"),
            ("wall_s", "wall s"),
            ("wall_min_max", "min-max"),
            ("run_s", "run s"),
            ("per_case_ms", "ms/case"),
            ("x_plain", "x plain"),
        ],
    )
    print(f"\ncassettes: {len(tapes)}, median {size:.0f} bytes a case")
    print(f"written: {save('replay', {'rows': table, 'cassette_bytes_median': size})}")


if __name__ == "__main__":
    main()

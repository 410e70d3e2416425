"""--runs auto against --runs 10 on a mixed suite: 80% stable cases, 20% flaky ones (right
60% of the time), on the seeded flaky model of fixtures/assistants/dice.

Run: .venv/bin/python bench/adaptive_runs.py [--cases 50] [--seeds 1 2 3]
For each seed both runs use the same model answers; prints, per seed, the model calls each
made, the calls saved, and whether every case got the same verdict (below --min-pass-rate
80 or not); writes bench/results/adaptive_runs.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from common import ROOT, agent_command, print_table, save

DICE = ROOT / "fixtures" / "assistants" / "dice"


def suite(path: Path, cases: int) -> Path:
    """``cases`` cases, every fifth one flaky (passes 60% of the time)."""
    lines = []
    for number in range(cases):
        rate = 60 if number % 5 == 4 else 100
        case = {
            "id": f"c{number:03}",
            "input": f"pass {rate}% #{number}",
            "assert": {"type": "equals", "value": "pass"},
        }
        lines.append(json.dumps(case) + "\n")
    path.write_text("".join(lines))
    return path


def run(folder: Path, cases: Path, seed: int, runs: str) -> dict:
    """One eval: the model calls it made and each case's verdict."""
    out = folder / f"runs-{runs}-seed-{seed}.jsonl"
    argv = [
        *agent_command(),
        "eval",
        str(folder / "dice"),
        f"@{cases}",
        "--runs",
        runs,
        "--min-pass-rate",
        "80",
        "--seed",
        str(seed),
        "--parallel",
        "4",
        "-o",
        str(out),
    ]
    env = {**os.environ, "AGENTCLI_HOME": str(folder / "home")}
    completed = subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True)
    if completed.returncode not in (0, 1):
        raise SystemExit(f"eval exited {completed.returncode}: {completed.stderr}")
    summary = json.loads(out.read_text().splitlines()[-1])
    below = set(summary["cases_below_threshold"])
    return {"calls": summary["total_runs"], "below": below}


def main() -> None:
    """Both runs per seed, and the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=50)
    parser.add_argument("--seeds", type=int, nargs="*", default=[1, 2, 3])
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        shutil.copytree(DICE, folder / "dice")
        cases = suite(folder / "cases.jsonl", args.cases)
        for seed in args.seeds:
            auto, fixed = run(folder, cases, seed, "auto"), run(folder, cases, seed, "10")
            rows.append(
                {
                    "seed": seed,
                    "cases": args.cases,
                    "calls_auto": auto["calls"],
                    "calls_fixed": fixed["calls"],
                    "saved": fixed["calls"] - auto["calls"],
                    "saved_pct": round((1 - auto["calls"] / fixed["calls"]) * 100, 1),
                    "failing_auto": len(auto["below"]),
                    "failing_fixed": len(fixed["below"]),
                    "same_verdicts": auto["below"] == fixed["below"],
                }
            )
    print_table(
        rows,
        [
            ("seed", "seed"),
            ("cases", "cases"),
            ("calls_auto", "calls auto"),
            ("calls_fixed", "calls --runs 10"),
            ("saved", "saved"),
            ("saved_pct", "saved %"),
            ("failing_auto", "failing auto"),
            ("failing_fixed", "failing fixed"),
            ("same_verdicts", "same verdicts"),
        ],
    )
    save("adaptive_runs", {"rows": rows})


if __name__ == "__main__":
    main()

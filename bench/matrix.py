"""A connector matrix in one run vs one run per connector: N offline cases on three offline
connectors (echo, scripted rules, a python: model), at each --parallel given.

Run: .venv/bin/python bench/matrix.py [--cases 1000] [--runs 3] [--parallel 1 8]
Prints the median whole-process wall time of ``agent eval -c echo -c scripted:... -c
python:...`` and of the three single-connector runs together (their sum: what a user
running them one after another waits); writes bench/results/matrix.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

from cases import echo_cases, echo_package
from common import agent_command, print_table, run_once, save

CONNECTORS = ("echo", "scripted:rules.yml", "python:model:reply")


def offline_package(folder: Path) -> None:
    """The bench package with a rules file and a python: model, both answering with the
    input (so every case's ``contains hello`` passes on every connector)."""
    package = echo_package(folder)
    (package / "rules.yml").write_text('rules:\n  - say: "{{ user }}"\n', encoding="utf-8")
    (package / "src").mkdir(exist_ok=True)
    (package / "src" / "model.py").write_text(
        "def reply(messages, tools, settings):\n    return messages[-1]['content']\n",
        encoding="utf-8",
    )


def wall(folder: Path, cases: Path, parallel: int, connectors: list[str]) -> float:
    """One eval process over ``connectors`` (a matrix when there are several): its wall time."""
    flags = [part for name in connectors for part in ("-c", name)]
    argv = [*agent_command(), "eval", "bench", f"@{cases}", "--parallel", str(parallel)]
    argv += [*flags, "-o", str(folder / "out.jsonl")]
    seconds, _, code = run_once(argv, cwd=folder, env={"AGENTCLI_HOME": str(folder / "home")})
    if code != 0:
        raise SystemExit(f"eval exited {code}: {' '.join(argv)}")
    return seconds


def measure(folder: Path, cases: Path, parallel: int, runs: int) -> dict:
    """Median wall times of the matrix run and of the three separate runs (summed)."""
    matrix, separate = [], []
    for _ in range(runs):
        matrix.append(wall(folder, cases, parallel, list(CONNECTORS)))
        separate.append(sum(wall(folder, cases, parallel, [name]) for name in CONNECTORS))
    summary = json.loads((folder / "out.jsonl").read_text().splitlines()[-1])
    assert "matrix" not in summary  # the last run was a single connector's
    one, three = statistics.median(matrix), statistics.median(separate)
    return {
        "parallel": parallel,
        "cases": sum(1 for _ in cases.open()),
        "connectors": len(CONNECTORS),
        "matrix_s": round(one, 3),
        "separate_s": round(three, 3),
        "saved": f"{(1 - one / three) * 100:.0f}%",
    }


def main() -> None:
    """Run the comparison and print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--parallel", type=int, nargs="*", default=[1, 8])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        offline_package(folder)
        cases = echo_cases(folder / "cases.jsonl", args.cases)
        rows = [measure(folder, cases, parallel, args.runs) for parallel in args.parallel]
    print_table(
        rows,
        [
            ("parallel", "parallel"),
            ("cases", "cases"),
            ("connectors", "connectors"),
            ("matrix_s", "matrix s"),
            ("separate_s", "3 runs s"),
            ("saved", "saved"),
        ],
    )
    print(f"\nwritten: {save('matrix', {'rows': rows})}")


if __name__ == "__main__":
    main()

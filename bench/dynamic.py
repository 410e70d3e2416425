"""W4 dynamic: N simulator-driven conversations (the coffee order: greeting, drink, size,
confirmation with an agent-judged checkpoint: 4 turns each, each an assistant call, turns
2-4 a simulator call before it, the last a validator call too) offline at --parallel 20.

Run: .venv/bin/python bench/dynamic.py [--cases 200] [--parallel 20] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

from common import ROOT, agent_command, print_table, run_once, save

CASE = {
    "input": "Hi there",
    "simulator": {
        "use": "tests.simulator-agent",
        "options": {
            "metadata": {"persona": "Regular customer", "goal": "Order a large cappuccino"}
        },
    },
    "checkpoints": [
        {"id": "greeting", "assert": {"type": "regex", "value": "(?i)hello"}},
        {"id": "ask-size", "after": ["greeting"], "assert": {"type": "contains", "value": "size"}},
        {
            "id": "confirm",
            "after": ["ask-size"],
            "assert": {"type": "regex", "value": "(?i)confirm: a large"},
        },
        {
            "id": "done",
            "after": ["confirm"],
            "assert": [
                {"type": "regex", "value": "(?i)your order is confirmed"},
                {
                    "type": "agent",
                    "use": "agents:tests.validator-agent",
                    "value": "The response confirms the order",
                },
            ],
        },
    ],
    "max_turns": 8,
}


def main() -> None:
    """Run W4 and print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--parallel", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        cases = folder / "dynamic.jsonl"
        cases.write_text(
            "".join(json.dumps({"id": f"d{i}", **CASE}) + "\n" for i in range(args.cases))
        )
        out = folder / "out.jsonl"
        walls, rss, turns = [], [], 0
        for _ in range(args.runs):
            argv = [
                *agent_command(),
                "eval",
                "coffee",
                f"@{cases}",
                "--parallel",
                str(args.parallel),
                "-o",
                str(out),
            ]
            wall, peak, code = run_once(argv, cwd=ROOT, env={"AGENTCLI_HOME": str(folder / "home")})
            lines = [json.loads(line) for line in out.read_text().splitlines()]
            summary = lines[-1]
            if code != 0 or summary["passed"] != args.cases:
                raise SystemExit(f"eval exited {code}: {summary}")
            turns = sum(len(line.get("turns") or []) for line in lines if line["type"] == "result")
            walls.append(wall)
            rss.append(peak)
    row = {
        "cases": args.cases,
        "turns": turns,
        "parallel": args.parallel,
        "wall_s": round(statistics.median(walls), 3),
        "min_max": f"{min(walls):.3f}-{max(walls):.3f}",
        "ms_per_turn": round(statistics.median(walls) / turns * 1000, 3),
        "peak_rss_mib": round(max(rss), 1),
    }
    print_table(
        [row],
        [
            ("cases", "cases"),
            ("turns", "turns"),
            ("parallel", "parallel"),
            ("wall_s", "wall s"),
            ("min_max", "min-max"),
            ("ms_per_turn", "ms/turn"),
            ("peak_rss_mib", "peak RSS MiB"),
        ],
    )
    print(f"\nwritten: {save('dynamic', {'rows': [row]})}")


if __name__ == "__main__":
    main()

"""Start-up benchmark: `agent --help`, `agent --version`, `agent eval --help` (its options
are generated when asked for), a one-shot offline run, and
`import litellm` for comparison. Run: .venv/bin/python bench/startup.py [--runs N]"""

from __future__ import annotations

import argparse
import sys
import tempfile

from common import ROOT, agent_command, measure, print_table, save


def main() -> None:
    """Measure and print the start-up figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    agent = agent_command()
    env = {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    home = {"AGENTCLI_HOME": tempfile.mkdtemp(prefix="agentcli-bench-")}
    rows = [
        measure("agent --help", [*agent, "--help"], runs=args.runs),
        measure("agent --version", [*agent, "--version"], runs=args.runs),
        measure("agent eval --help", [*agent, "eval", "--help"], runs=args.runs),
        measure("agent run -c echo hi", [*agent, "run", "-c", "echo", "hi"], runs=args.runs),
        measure(
            'agent eval keyword "hi" (offline)',
            [*agent, "eval", "keyword", "hi"],
            runs=args.runs,
            cwd=ROOT,
            env=home,
        ),
        measure(
            'agent eval expense "hi" (hooks, memory, tools)',
            [*agent, "eval", "expense", "hi"],
            runs=args.runs,
            cwd=ROOT,
            env=home,
        ),
        measure(
            "import litellm",
            [sys.executable, "-c", "import litellm"],
            runs=max(3, args.runs // 3),
            env=env,
        ),
    ]
    print_table(
        rows,
        [
            ("name", "what"),
            ("median_s", "median s"),
            ("min_s", "min"),
            ("max_s", "max"),
            ("peak_rss_mib", "peak RSS MiB"),
            ("exit_codes", "exit"),
        ],
    )
    print(f"\nwritten: {save('startup', {'rows': rows})}")


if __name__ == "__main__":
    main()

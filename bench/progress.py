"""What the live progress display costs at W1: the same 1,000-case eval on a pseudo-terminal
with the bar, on the terminal without it (``TTY_INTERACTIVE=0``), and into a pipe.

Run: .venv/bin/python bench/progress.py [--cases 1000] [--parallel 50] [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import pty
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from cases import echo_cases, echo_package
from common import agent_command, print_table, save


def run_on_terminal(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    """Wall seconds of ``argv`` with a pseudo-terminal as stdout and stderr, read as a
    terminal would read it."""
    master, slave = pty.openpty()
    started = time.perf_counter()
    process = subprocess.Popen(
        argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave
    )
    os.close(slave)

    def drain() -> None:
        try:
            while os.read(master, 65536):
                pass
        except OSError:  # the terminal closed with the process
            pass

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    code = process.wait()
    wall = time.perf_counter() - started
    reader.join(timeout=5)
    os.close(master)
    if code != 0:
        raise SystemExit(f"eval exited {code}")
    return wall


def run_into_pipe(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    """Wall seconds of ``argv`` writing into a pipe (a CI log)."""
    started = time.perf_counter()
    completed = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=False)
    if completed.returncode != 0:
        raise SystemExit(f"eval exited {completed.returncode}")
    return time.perf_counter() - started


def main() -> None:
    """Measure the three outputs and print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--parallel", type=int, default=50)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        echo_package(folder)
        cases = echo_cases(folder / "cases.jsonl", args.cases)
        argv = [*agent_command(), "eval", "bench", f"@{cases}", "--parallel", str(args.parallel)]
        argv += ["-o", str(folder / "out.jsonl")]
        base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        base.update(AGENTCLI_HOME=str(folder / "home"), TERM="xterm-256color", COLUMNS="100")
        base.pop("NO_COLOR", None)
        modes = {
            "terminal, progress bar": (run_on_terminal, {}),
            "terminal, no bar (TTY_INTERACTIVE=0)": (run_on_terminal, {"TTY_INTERACTIVE": "0"}),
            "pipe (plain lines)": (run_into_pipe, {}),
        }
        walls: dict[str, list[float]] = {name: [] for name in modes}
        for runner, extra in modes.values():
            runner(argv, folder, {**base, **extra})  # warm-up
        for _ in range(args.runs):  # interleaved, so drift hits every mode alike
            for name, (runner, extra) in modes.items():
                walls[name].append(runner(argv, folder, {**base, **extra}))
    without_bar = statistics.median(walls["terminal, no bar (TTY_INTERACTIVE=0)"])
    rows = [
        {
            "output": name,
            "wall_s": round(statistics.median(values), 3),
            "min_max": f"{min(values):.3f}-{max(values):.3f}",
            "vs_no_bar": f"{(statistics.median(values) / without_bar - 1) * 100:+.1f}%",
        }
        for name, values in walls.items()
    ]
    print_table(
        rows,
        [
            ("output", "output"),
            ("wall_s", "wall s"),
            ("min_max", "min-max"),
            ("vs_no_bar", "vs no bar"),
        ],
    )
    print(f"\nwritten: {save('progress', {'cases': args.cases, 'rows': rows})}")


if __name__ == "__main__":
    main()

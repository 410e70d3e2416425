"""Ray executor overhead: N cases whose model takes 200 ms (a ``python:`` model sleeping
0.2 s) on a local Ray cluster of two one-CPU nodes (a head and a worker, 127.0.0.1), against
the local executor at the same number of cases in flight.

Run: .venv/bin/python bench/ray_executor.py [--cases 1000] [--parallel 2 8]
At ``--parallel P`` the Ray run reserves 2/P CPUs per task, so P tasks fit the two nodes.
Per case, ``overhead_ms`` is the time a case holds one of the P places beyond its 200 ms
(run time x P / cases - 200 ms); ``process_s`` the whole process (Ray: its import,
connecting, shipping the package, starting worker processes). Writes
bench/results/ray_executor.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from common import ROOT, agent_command, print_table, run_once, save

sys.path.insert(0, str(ROOT))
from fixtures.ray_cluster import RayCluster

MODEL_SECONDS = 0.2
MODEL = f"""
import time


def reply(messages, tools, settings):
    time.sleep({MODEL_SECONDS})
    return messages[-1]["content"]
"""


def project(folder: Path, count: int) -> Path:
    """The ``bench`` package answering through the sleeping model, and ``count`` cases."""
    package = folder / "assistants" / "bench"
    (package / "src" / "models").mkdir(parents=True)
    connector = "python:models.slow:reply"
    (package / "package.yao").write_text(json.dumps({"name": "Bench", "connector": connector}))
    (package / "src" / "models" / "slow.py").write_text(MODEL)
    cases = folder / "cases.jsonl"
    with cases.open("w") as handle:
        for index in range(count):
            case = {"id": f"c{index}", "input": f"case {index}: say hello"}
            case["assert"] = {"type": "contains", "value": "hello"}
            handle.write(json.dumps(case) + "\n")
    return cases


def measure(folder: Path, cases: Path, count: int, parallel: int, extra: list[str]) -> dict:
    """One eval process: its wall time, the run's time and the overhead per case."""
    out = folder / "out.jsonl"
    argv = [*agent_command(), "eval", "bench", f"@{cases}", "--parallel", str(parallel)]
    argv += ["-o", str(out), *extra]
    env = {"AGENTCLI_HOME": str(folder / "home"), "RAY_USAGE_STATS_ENABLED": "0"}
    wall, peak, code = run_once(argv, cwd=folder, env=env)
    if code != 0:
        raise SystemExit(f"eval exited {code}: {' '.join(argv)}")
    summary = json.loads(out.read_text().splitlines()[-1])
    run_s = summary["duration_ms"] / 1000
    return {
        "executor": "ray" if extra else "local",
        "parallel": parallel,
        "cases": count,
        "process_s": round(wall, 2),
        "run_s": round(run_s, 2),
        "overhead_ms": round((run_s * parallel / count - MODEL_SECONDS) * 1000, 2),
        "peak_rss_mib": round(peak, 1),
    }


def main() -> None:
    """Run both executors at each --parallel and print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--parallel", type=int, nargs="*", default=[2, 8])
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp, RayCluster(workers=1, cpus=1) as cluster:
        folder = Path(tmp)
        cases = project(folder, args.cases)
        for parallel in args.parallel:
            rows.append(measure(folder, cases, args.cases, parallel, []))
            ray = ["--executor", "ray", "--ray-address", cluster.address]
            ray += ["--ray-cpus", f"{2 / parallel:g}"]
            rows.append(measure(folder, cases, args.cases, parallel, ray))
    for row in rows:
        local = next(
            r for r in rows if r["executor"] == "local" and r["parallel"] == row["parallel"]
        )
        row["vs_local_ms"] = round(row["overhead_ms"] - local["overhead_ms"], 2)
    print_table(
        rows,
        [
            ("executor", "executor"),
            ("parallel", "parallel"),
            ("cases", "cases"),
            ("process_s", "process s"),
            ("run_s", "run s"),
            ("overhead_ms", "overhead/case ms"),
            ("vs_local_ms", "vs local ms"),
            ("peak_rss_mib", "driver RSS MiB"),
        ],
    )
    print(f"wrote {save('ray_executor', {'model_s': MODEL_SECONDS, 'rows': rows})}")


if __name__ == "__main__":
    main()

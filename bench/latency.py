"""W2 latency-bound: N cases at --parallel C against a loopback OpenAI-compatible server that
answers after a fixed latency, through the real connector path (openai/... with api_base).

Run: .venv/bin/python bench/latency.py [--cases 500] [--parallel 50] [--latency 0.2] [--runs 3]
     [--transport aiohttp|sdk]
Reports the ratio to the ideal N x latency / C, and to the floor a bare aiohttp client
reaches next to each run (issue 14 asks the run <= 1.05x and the whole process <= 1.12x
it): the run against the bare client's requests alone, the whole process against the bare
client's whole process (its interpreter start and aiohttp's import included).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from cases import echo_cases, echo_package
from common import ROOT, agent_command, print_table, run_once, save

sys.path.insert(0, str(ROOT))
from fixtures.openai_server import OpenAIServer

# The same requests from a bare aiohttp client (one session, as many connections as
# --parallel, the body read to its end) with no agentcli: the floor this machine, the
# test server (~1 ms a request) and aiohttp allow. Timed inside its process, after import.
FLOOR_CLIENT = """
import asyncio, json, sys, time
import aiohttp
url, count, parallel = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

async def worker(session, jobs):
    for index in jobs:
        body = json.dumps({"model": "echo", "stream": True, "messages": [
            {"role": "user", "content": f"case {index}: say hello"}]}).encode()
        async with session.post(url, data=body, headers={"Content-Type": "application/json"}) as r:
            async for _ in r.content.iter_any():
                pass

async def main():
    connector = aiohttp.TCPConnector(limit=parallel)
    async with aiohttp.ClientSession(connector=connector) as session:
        jobs = iter(range(count))
        started = time.perf_counter()
        await asyncio.gather(*(worker(session, jobs) for _ in range(parallel)))
        print(time.perf_counter() - started)

asyncio.run(main())
"""


def floor_seconds(base_url: str, cases: int, parallel: int) -> tuple[float, float]:
    """Seconds the bare client takes for the same requests: its requests alone (timed in
    its process, after import) and its whole process (interpreter start, aiohttp's import)."""
    url = base_url.rstrip("/") + "/chat/completions"
    argv = [sys.executable, "-c", FLOOR_CLIENT, url, str(cases), str(parallel)]
    started = time.perf_counter()
    inner = float(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)
    return inner, time.perf_counter() - started


def workload_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The options that shape W2: how many cases, how many at once, the server's latency,
    how many runs."""
    parser.add_argument("--cases", type=int, default=500)
    parser.add_argument("--parallel", type=int, default=50)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--runs", type=int, default=3)
    return parser


@contextmanager
def workload(
    count: int, latency: float, model: str = "openai/echo", transport: str = "aiohttp"
) -> Iterator[tuple[OpenAIServer, Path, Path]]:
    """The loopback server answering after ``latency`` seconds, and a folder holding the
    echo package with a connector to it and ``count`` cases: (server, folder, cases)."""
    with (
        tempfile.TemporaryDirectory() as tmp,
        OpenAIServer(latency=latency, record=False) as server,
    ):
        folder = Path(tmp)
        (folder / "connectors.yml").write_text(
            f"loop: {{model: {model}, api_base: '{server.base_url}', api_key: none, "
            f"transport: {transport}}}\n"
        )
        echo_package(folder, connector="loop")
        yield server, folder, echo_cases(folder / "cases.jsonl", count)


def main() -> None:
    """Run W2 and print the table."""
    parser = workload_arguments(argparse.ArgumentParser(description=__doc__))
    parser.add_argument("--model", default="openai/echo", help="the connector's model")
    parser.add_argument(
        "--transport", default="aiohttp", help="the connector's transport: aiohttp or sdk"
    )
    args = parser.parse_args()
    ideal = args.cases * args.latency / args.parallel
    rows = []
    with workload(args.cases, args.latency, args.model, args.transport) as (server, folder, cases):
        out = folder / "out.jsonl"
        walls, inner, rss, floors, floor_walls = [], [], [], [], []
        for _ in range(args.runs):  # each run next to a floor run: the machine is shared
            floor_run, floor_wall = floor_seconds(server.base_url, args.cases, args.parallel)
            floors.append(floor_run)
            floor_walls.append(floor_wall)
            argv = [
                *agent_command(),
                "eval",
                "bench",
                f"@{cases}",
                "--parallel",
                str(args.parallel),
                "-o",
                str(out),
            ]
            wall, peak, code = run_once(
                argv, cwd=folder, env={"AGENTCLI_HOME": str(folder / "home")}
            )
            summary = json.loads(out.read_text().splitlines()[-1])
            if code != 0 or summary["passed"] != args.cases:
                raise SystemExit(f"eval exited {code} with {summary}")
            walls.append(wall)
            inner.append(summary["duration_ms"] / 1000)
            rss.append(peak)
        rows.append(
            {
                "model": args.model,
                "transport": args.transport,
                "cases": args.cases,
                "parallel": args.parallel,
                "ideal_s": round(ideal, 3),
                "wall_s": round(statistics.median(walls), 3),
                "wall_min_max": f"{min(walls):.2f}-{max(walls):.2f}",
                "wall_ratio": round(statistics.median(walls) / ideal, 2),
                "run_s": round(statistics.median(inner), 3),
                "run_min_max": f"{min(inner):.2f}-{max(inner):.2f}",
                "run_ratio": round(statistics.median(inner) / ideal, 2),
                "peak_rss_mib": round(max(rss), 1),
            }
        )
        floor = statistics.median(floors)
        floor_wall = statistics.median(floor_walls)
        rows.append(
            {
                "model": "(bare aiohttp client: the floor)",
                "cases": args.cases,
                "parallel": args.parallel,
                "ideal_s": round(ideal, 3),
                "wall_s": round(floor_wall, 3),
                "wall_min_max": f"{min(floor_walls):.2f}-{max(floor_walls):.2f}",
                "wall_ratio": round(floor_wall / ideal, 2),
                "run_s": round(floor, 3),
                "run_min_max": f"{min(floors):.2f}-{max(floors):.2f}",
                "run_ratio": round(floor / ideal, 2),
            }
        )
        for row in rows:
            row["run_floor"] = round(row["run_s"] / floor, 3)
            if "wall_s" in row:
                # whole process against the bare client's whole process
                row["wall_floor"] = round(row["wall_s"] / floor_wall, 3)
    print_table(
        rows,
        [
            ("model", "model"),
            ("transport", "transport"),
            ("cases", "cases"),
            ("parallel", "parallel"),
            ("ideal_s", "ideal s"),
            ("wall_s", "wall s"),
            ("wall_min_max", "min-max"),
            ("wall_ratio", "x ideal"),
            ("run_s", "run s"),
            ("run_min_max", "min-max"),
            ("run_ratio", "run x ideal"),
            ("run_floor", "run x floor"),
            ("wall_floor", "wall x floor"),
            ("peak_rss_mib", "peak RSS MiB"),
        ],
    )
    print(f"\nwritten: {save('latency', {'rows': rows})}")


if __name__ == "__main__":
    main()

"""CPU per model call of each OpenAI-compatible transport (aiohttp, sdk).

The loopback server runs in a separate process (answering at once), so the CPU time
measured here is the client's alone: building the request, the HTTP exchange, parsing the
server-sent events, assembling the response, retries bookkeeping.

Run: .venv/bin/python bench/transport.py [--calls 1000] [--concurrency 10] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import statistics
import subprocess
import sys
import time

from common import ROOT, print_table, save

sys.path.insert(0, str(ROOT))
from agentcli.models.base import ModelSettings, ResponseDone
from agentcli.models.openai_model import OpenAICompatModel


async def calls(model: OpenAICompatModel, count: int, concurrency: int) -> None:
    """``count`` one-message calls, ``concurrency`` at a time."""
    queue = iter(range(count))

    async def worker() -> None:
        for index in queue:
            messages = [{"role": "user", "content": f"case {index}: say hello"}]
            async for part in model.stream(messages, [], ModelSettings()):
                if isinstance(part, ResponseDone):
                    assert part.response.content == messages[0]["content"]

    await asyncio.gather(*(worker() for _ in range(concurrency)))


async def measure(transport: str, base_url: str, count: int, concurrency: int) -> tuple:
    """(wall seconds, CPU seconds) of ``count`` calls after a warm-up."""
    model = OpenAICompatModel("echo", api_base=base_url, api_key="none", transport=transport)
    await calls(model, 50, concurrency)  # imports, connections, TLS context
    started, cpu = time.perf_counter(), time.process_time()
    await calls(model, count, concurrency)
    result = time.perf_counter() - started, time.process_time() - cpu
    await model.aclose()
    return result


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def main() -> None:
    """Measure each transport and print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--transports", default="aiohttp,sdk")
    args = parser.parse_args()
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, str(ROOT / "fixtures" / "openai_server.py"), "--port", str(port)],
        stdout=subprocess.PIPE,
        text=True,
    )
    rows = []
    try:
        assert server.stdout is not None
        base_url = server.stdout.readline().split()[-1]
        for transport in args.transports.split(","):
            results = [
                asyncio.run(measure(transport, base_url, args.calls, args.concurrency))
                for _ in range(args.runs)
            ]
            cpu = [c for _, c in results]
            rows.append(
                {
                    "transport": transport,
                    "calls": args.calls,
                    "concurrency": args.concurrency,
                    "wall_s": round(statistics.median(w for w, _ in results), 3),
                    "cpu_ms_per_call": round(statistics.median(cpu) / args.calls * 1000, 3),
                    "min_max": f"{min(cpu) / args.calls * 1000:.3f}-"
                    f"{max(cpu) / args.calls * 1000:.3f}",
                }
            )
    finally:
        server.terminate()
        server.wait()
    print_table(
        rows,
        [
            ("transport", "transport"),
            ("calls", "calls"),
            ("concurrency", "concurrency"),
            ("wall_s", "wall s"),
            ("cpu_ms_per_call", "CPU ms/call"),
            ("min_max", "min-max"),
        ],
    )
    print(f"\nwritten: {save('transport', {'rows': rows})}")


if __name__ == "__main__":
    main()

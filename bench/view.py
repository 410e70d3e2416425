"""`agent view` on a 100,000-case results file: how long the run page takes to open the
first time (the file indexed then) and after, a filtered page, a search, a case page, and
the server's memory (resident before the first request, and its peak).

The file is written by the real JSON Lines writer: each result with an input, an output,
two assertions, a tool call, usage, tags; one in ten failed (on the agent or the judge).
The server is the real command (`agent view FILE --port 0 --no-open`), asked over HTTP.

Run: .venv/bin/python bench/view.py [--cases 100000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

from common import agent_command, print_table, save

from agentcli.assistant.request import ToolCall
from agentcli.eval.reports import writer_for
from agentcli.eval.results.model import (
    AssertionResult,
    CaseResult,
    RunHeader,
    RunSummary,
    Trace,
    Usage,
)


def generate(path: Path, count: int) -> None:
    """A finished run of ``count`` results, through the JSON Lines writer."""
    writer = writer_for(path)
    writer.open(RunHeader(metadata={"started_at": "2026-12-01T10:00:00+00:00", "version": "bench"}))
    failed = 0
    for index in range(count):
        fails = index % 10 == 7
        failed += fails
        output = f"The forecast for city {index} is sunny, 21 degrees, light wind from the west."
        writer.add(
            CaseResult(
                id=f"case-{index:06d}",
                status="failed" if fails else "passed",
                input=f"What is the weather in city {index}? Answer in one sentence.",
                output=output,
                duration_ms=12.5 + index % 50,
                assertions=[
                    AssertionResult(
                        "contains",
                        not fails,
                        "output contains the forecast",
                        expected="forecast",
                        actual=output if fails else None,
                    ),
                    AssertionResult(
                        "tool_called",
                        True,
                        "get_forecast was called",
                        expected={"name": "get_forecast"},
                    ),
                ],
                trace=Trace(
                    completion=output,
                    tool_calls=[
                        ToolCall(
                            f"call-{index}",
                            "weather",
                            "get_forecast",
                            {"city": f"city {index}"},
                            {"sky": "sunny", "temp_c": 21},
                        ),
                    ],
                    usage=Usage(input_tokens=120, output_tokens=30, cost=0.00012),
                ),
                tags=["smoke"] if index % 3 == 0 else ["slow", "weather"],
                attribution=("judge" if index % 20 == 7 else "agent") if fails else None,
            )
        )
    writer.close(
        RunSummary(
            total=count,
            passed=count - failed,
            failed=failed,
            duration_ms=count * 13,
            agent_id="weather",
            connector="scripted",
            pass_rate=round((count - failed) / count * 100, 2),
        )
    )


def fetch(url: str) -> tuple[float, int, str]:
    """(seconds, status, body) of one GET."""
    started = time.perf_counter()
    with urllib.request.urlopen(url, timeout=120) as response:
        body = response.read().decode("utf-8")
        return time.perf_counter() - started, response.status, body


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) the process has used: on a loaded machine the wall time of
    a page is mostly waiting for a core, this is what the page cost."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def resident_mib(pid: int) -> float:
    """The process's resident memory now (Linux /proc)."""
    text = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+)", text).group(1)) / 1024


def measure(path: Path) -> tuple[list[dict], dict]:
    """Start the viewer on ``path`` and time its pages; its peak RSS when it stopped."""
    server = subprocess.Popen(
        [*agent_command(), "view", str(path), "--port", "0", "--no-open"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )
    try:
        line = server.stdout.readline()
        url = re.search(r"(http://\S+)/run\?", line).group(1)
        fetch(url + "/static/viewer.css")  # the app imported, nothing indexed yet
        idle = resident_mib(server.pid)
        name = path.name
        pages = [
            ("run page, first open (file indexed)", f"/run?file={name}"),
            ("run page again", f"/run?file={name}"),
            ("page 1000", f"/run?file={name}&page=1000"),
            ("status=failed, tag=smoke", f"/run?file={name}&status=failed&tag=smoke"),
            ("search, first time", f"/run?file={name}&q=city+4242"),
            ("search again", f"/run?file={name}&q=city+4242"),
            ("case page", f"/case?file={name}&n=99999"),
            ("runs list", "/"),
        ]
        rows = []
        for title, page in pages:
            before = cpu_seconds(server.pid)
            seconds, status, body = fetch(url + page)
            cpu = cpu_seconds(server.pid) - before
            rows.append(
                {
                    "page": title,
                    "seconds": round(seconds, 3),
                    "cpu_s": round(cpu, 2),
                    "status": status,
                    "kib": round(len(body) / 1024, 1),
                }
            )
        after = resident_mib(server.pid)
    finally:
        server.send_signal(signal.SIGINT)
    _, _, usage = os.wait4(server.pid, 0)
    memory = {
        "idle_rss_mib": round(idle, 1),
        "rss_after_pages_mib": round(after, 1),
        "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
    }
    return rows, memory


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--keep", type=Path, help="write the results file here and keep it")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"view-{args.cases}.jsonl"
        started = time.perf_counter()
        if not path.exists():
            generate(path, args.cases)
        generated = time.perf_counter() - started
        size = path.stat().st_size / 2**20
        print(f"{args.cases} results, {size:.1f} MiB (written in {generated:.1f} s)")
        rows, memory = measure(path)
    print_table(
        rows,
        [
            ("page", "Page"),
            ("seconds", "Seconds"),
            ("cpu_s", "CPU s"),
            ("status", "HTTP"),
            ("kib", "KiB"),
        ],
    )
    print(", ".join(f"{key} {value}" for key, value in memory.items()))
    where = save(
        "view",
        {
            "cases": args.cases,
            "file_mib": round(size, 1),
            "pages": rows,
            "memory": memory,
            "load": os.getloadavg(),
        },
    )
    print(f"wrote {where}")


if __name__ == "__main__":
    main()

"""Reports at scale (issue 21 item 7): a real offline run of N cases (default 20,000, one in
ten failing, some under a custom message), its results file, the single-file HTML report
`agent report` renders from it (size against the results file's, the goal under 1/3), and
how long headless Chromium takes to open it (navigation start to the report's first rows
and failure pages drawn, read from the page's ``data-ready-ms``; the goal under 3 s).

Run: .venv/bin/python bench/report_size.py [--cases 20000] [--opens 3]
"""

from __future__ import annotations

import argparse
import functools
import html
import http.server
import json
import re
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from cases import echo_package
from common import ROOT, agent_command, print_table, run_once, save

sys.path.insert(0, str(ROOT))
from fixtures.chromium import CHROMIUM, HEADLESS_FLAGS


def mixed_cases(path: Path, count: int) -> Path:
    """``count`` echo cases; every tenth asserts what echo never says (half of those with a
    custom message), so one in ten fails."""
    with path.open("w", encoding="utf-8") as handle:
        for index in range(count):
            check: dict = {"type": "contains", "value": "hello"}
            if index % 10 == 9:
                check = {"type": "contains", "value": "goodbye"}
                if index % 20 == 19:
                    check["message"] = "the agent must say goodbye"
            case = {"id": f"c{index}", "input": f"case {index}: say hello", "assert": check}
            handle.write(json.dumps(case) + "\n")
    return path


class _Quiet(http.server.SimpleHTTPRequestHandler):
    """Serves the report without a log line per request."""

    def log_message(self, format: str, *args: object) -> None:
        """Nothing: the bench prints its own table."""


def open_time_ms(report: Path, profile: Path) -> float:
    """Milliseconds from navigation start to the report's rows drawn, in headless Chromium."""
    chromium = CHROMIUM
    if chromium is None:
        raise SystemExit("no chromium here (apt-get install chromium)")
    handler = functools.partial(_Quiet, directory=str(report.parent))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/{report.name}"
        completed = subprocess.run(
            [
                chromium,
                *HEADLESS_FLAGS,
                f"--user-data-dir={profile}",
                "--virtual-time-budget=30000",
                "--dump-dom",
                url,
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        server.shutdown()
    # Only the <body ...> tag: the dumped DOM of 20,000 cases is a few MB.
    body = re.search(r"<body[^>]*>", completed.stdout)
    ready = re.search(r'data-ready-ms="(\d+)"', html.unescape(body.group(0) if body else ""))
    if ready is None:
        raise SystemExit("the report never drew its rows:\n" + completed.stderr[-2000:])
    return float(ready.group(1))


def main() -> None:
    """Run the case file, render the report, open it; print and save the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=20_000)
    parser.add_argument("--parallel", type=int, default=50)
    parser.add_argument("--opens", type=int, default=3, help="Chromium opens to time")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        echo_package(folder)
        cases = mixed_cases(folder / "cases.jsonl", args.cases)
        results = folder / "results.jsonl"
        env = {"AGENTCLI_HOME": str(folder / "home")}
        argv = [*agent_command(), "eval", "bench", f"@{cases}", "--parallel", str(args.parallel)]
        wall, _, code = run_once([*argv, "-o", str(results)], cwd=folder, env=env)
        if code not in (0, 1):
            raise SystemExit(f"eval exited {code}")
        report = folder / "report.html"
        render_wall, render_peak, code = run_once(
            [*agent_command(), "report", str(results), "-o", str(report)], cwd=folder, env=env
        )
        if code != 0:
            raise SystemExit(f"report exited {code}")
        opens = [open_time_ms(report, folder / f"profile-{n}") for n in range(args.opens)]
        results_size, report_size = results.stat().st_size, report.stat().st_size
        row = {
            "cases": args.cases,
            "eval_s": round(wall, 1),
            "results_mib": round(results_size / 2**20, 2),
            "report_mib": round(report_size / 2**20, 2),
            "ratio": round(report_size / results_size, 3),
            "render_s": round(render_wall, 2),
            "render_peak_mib": round(render_peak, 1),
            "open_ms_median": round(statistics.median(opens)),
            "open_ms_max": round(max(opens)),
        }
    print_table(
        [row],
        [
            ("cases", "cases"),
            ("results_mib", "results MiB"),
            ("report_mib", "report MiB"),
            ("ratio", "report/results"),
            ("render_s", "render s"),
            ("render_peak_mib", "render peak MiB"),
            ("open_ms_median", "open ms (median)"),
            ("open_ms_max", "open ms (max)"),
        ],
    )
    print(f"saved {save('report_size', row)}")


if __name__ == "__main__":
    main()

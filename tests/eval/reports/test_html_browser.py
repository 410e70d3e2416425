"""The HTML report in a real browser: headless Chromium renders it, runs its script, and
the status filter hides the rows it should. Skipped (saying why) only where no Chromium is
installed; .ci/run installs Debian's chromium package."""

from __future__ import annotations

import functools
import http.server
import json
import re
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from agentcli.eval.reports import writer_for
from agentcli.eval.results.model import CaseResult, RunHeader, RunSummary, Status

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Chromium is not installed here (.ci/run installs Debian's chromium)"
)

HARNESS = """<!doctype html><html><body><iframe id="r" src="report.html"></iframe><script>
document.getElementById("r").addEventListener("load", function () {
  var doc = this.contentDocument;
  var out = {initial: doc.getElementById("shown-count").textContent};
  var select = doc.getElementById("status-filter");
  select.value = "failed";
  select.dispatchEvent(new Event("change"));
  out.filtered = doc.getElementById("shown-count").textContent;
  out.visible = Array.from(doc.querySelectorAll("#case-table tbody tr"))
    .filter(function (tr) { return !tr.hidden; })
    .map(function (tr) { return tr.getAttribute("data-status"); });
  out.svg = doc.querySelectorAll("svg").length;
  document.body.setAttribute("data-out", JSON.stringify(out));
});
</script></body></html>"""


def sample_report(path: Path) -> None:
    writer = writer_for(path)
    writer.open(RunHeader(environment={}, metadata={"version": "test"}))
    statuses: list[Status] = ["passed", "failed", "passed", "error", "failed"]
    for run, status in enumerate(statuses, start=1):
        writer.add(
            CaseResult(
                id="<script>alert(1)</script>" if run == 2 else "case-a",
                status=status,
                input="hi",
                output="hello",
                duration_ms=10.0 * run,
                run=run,
            )
        )
    summary = RunSummary(
        total=5,
        passed=2,
        failed=2,
        skipped=0,
        errors=1,
        timeouts=0,
        duration_ms=150,
        agent_id="probe",
        connector="scripted",
        pass_rate=40.0,
    )
    stability = [
        {
            "id": "case-a",
            "runs": 5,
            "passed": 2,
            "pass_rate": 40.0,
            "ci_low": 11.8,
            "ci_high": 76.9,
            "stability": "highly_unstable",
            "duration": {"min": 10, "avg": 30, "p50": 30, "p95": 48, "max": 50, "std": 14.1},
        }
    ]
    writer.close(summary, stability)


def test_report_renders_and_filters_in_chromium(tmp_path):
    sample_report(tmp_path / "report.html")
    (tmp_path / "harness.html").write_text(HARNESS, encoding="utf-8")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/harness.html"
        completed = subprocess.run(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                f"--user-data-dir={tmp_path / 'profile'}",
                "--virtual-time-budget=5000",
                "--dump-dom",
                url,
            ],
            capture_output=True,
            text=True,
            timeout=90,
        )
        shot = tmp_path / "shot.png"
        subprocess.run(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                f"--user-data-dir={tmp_path / 'profile2'}",
                f"--screenshot={shot}",
                "--window-size=1200,900",
                f"http://127.0.0.1:{server.server_address[1]}/report.html",
            ],
            capture_output=True,
            text=True,
            timeout=90,
        )
    finally:
        server.shutdown()
    match = re.search(r'data-out="([^"]*)"', completed.stdout)
    assert match, completed.stdout[-2000:] + completed.stderr[-2000:]
    out = json.loads(match.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    assert out["initial"] == "5 of 5 shown"
    assert out["filtered"] == "2 of 5 shown"
    assert out["visible"] == ["failed", "failed"]
    assert out["svg"] >= 2  # pass-rate chart and duration histogram
    assert shot.exists() and shot.stat().st_size > 5000

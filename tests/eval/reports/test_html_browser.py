"""The HTML report in a real browser: headless Chromium renders it, runs its script, and
the status filter hides the rows it should. Skipped (saying why) only where no Chromium is
installed; .ci/run installs Debian's chromium package."""

from __future__ import annotations

import functools
import html
import http.server
import json
import re
import subprocess
import threading
from pathlib import Path

import pytest

from agentcli.eval.reports import read_results, writer_for
from agentcli.eval.results.model import (
    AssertionResult,
    CaseResult,
    RunHeader,
    RunSummary,
    Status,
    Trace,
    Usage,
)
from fixtures.chromium import CHROMIUM, HEADLESS_FLAGS

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Chromium is not installed here (.ci/run installs Debian's chromium)"
)

HARNESS = """<!doctype html><html><body><iframe id="r" src="report.html"></iframe><script>
document.getElementById("r").addEventListener("load", function () {
  var doc = this.contentDocument;
  var rows = function () {
    return Array.from(doc.querySelectorAll("#case-table tbody tr[data-index]"))
      .filter(function (tr) { return !tr.hidden; });
  };
  var out = {initial: doc.getElementById("shown-count").textContent};
  out.order = rows().map(function (tr) { return Number(tr.getAttribute("data-index")); });
  out.opened = doc.querySelectorAll("tr.case-page").length;
  out.firstPage = doc.querySelector("tr.case-page").textContent;
  out.evilId = rows()[0].querySelector("code").textContent;
  out.scripts = doc.querySelectorAll("script").length;
  var passed = rows()[3];
  passed.querySelector("a").click();
  out.passedPage = passed.nextElementSibling.textContent;
  var select = doc.getElementById("status-filter");
  select.value = "failed";
  select.dispatchEvent(new Event("change"));
  out.filtered = doc.getElementById("shown-count").textContent;
  out.visible = rows().map(function (tr) { return tr.getAttribute("data-status"); });
  var search = doc.getElementById("search");
  select.value = "all";
  search.value = "BYE";
  search.dispatchEvent(new Event("input"));
  out.searched = rows().map(function (tr) { return Number(tr.getAttribute("data-index")); });
  out.svg = doc.querySelectorAll("svg").length;
  out.ready = doc.body.getAttribute("data-ready-ms");
  document.body.setAttribute("data-out", JSON.stringify(out));
});
</script></body></html>"""


def sample_report(path: Path) -> None:
    writer = writer_for(path)
    writer.open(RunHeader(environment={}, metadata={"version": "test"}))
    statuses: list[Status] = ["passed", "failed", "passed", "error", "failed"]
    friendly = AssertionResult(
        "contains", False, "must say bye", expected="bye", extra={"detail": "expected output to contain 'bye'"}
    )  # fmt: skip
    for run, status in enumerate(statuses, start=1):
        writer.add(
            CaseResult(
                id="<script>alert(1)</script>" if run == 2 else "case-a",
                status=status,
                input="hi",
                output="hello",
                duration_ms=10.0 * run,
                run=run,
                assertions=[friendly] if status == "failed" else [],
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
                *HEADLESS_FLAGS,
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
                *HEADLESS_FLAGS,
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
    out = json.loads(html.unescape(match.group(1)))
    assert out["initial"] == "5 of 5 shown"
    assert out["order"] == [1, 3, 4, 0, 2]  # failures first, file order within
    assert out["opened"] == 3  # the failures' pages are open at once
    for shown in ("must say bye", "expected: bye", "actual: hello",
                  "check: expected output to contain 'bye'"):  # fmt: skip
        assert shown in out["firstPage"], shown
    assert out["evilId"] == "<script>alert(1)</script>" and out["scripts"] == 2
    assert "Inputhi" in out["passedPage"] and "Outputhello" in out["passedPage"]
    assert "A passed case's trace is left out of the report" in out["passedPage"]
    assert out["filtered"] == "2 of 5 shown"
    assert out["visible"] == ["failed", "failed"]
    assert out["searched"] == [1, 4]  # searched in each case's page, not only its row
    assert out["svg"] >= 2  # pass-rate chart and duration histogram
    assert int(out["ready"]) > 0
    assert shot.exists() and shot.stat().st_size > 5000


def scale_results(path: Path, count: int) -> None:
    """A results file of ``count`` cases as an offline run writes them, one in ten failing."""
    writer = writer_for(path)
    writer.open(RunHeader(environment={}, metadata={"version": "test"}))
    for index in range(count):
        text = f"case {index}: say hello"
        failed = index % 10 == 9
        check = AssertionResult(
            "contains",
            not failed,
            'expected output to contain "goodbye"' if failed else 'output contains "hello"',
            expected="goodbye" if failed else "hello",
        )
        writer.add(
            CaseResult(
                id=f"c{index}",
                status="failed" if failed else "passed",
                input=text,
                output=text,
                duration_ms=12.5,
                error=check.message if failed else None,
                assertions=[check],
                trace=Trace(completion=text, usage=Usage(4, 4, 8, 0.0), steps=1),
            )
        )
    failed = count // 10
    writer.close(
        RunSummary(total=count, passed=count - failed, failed=failed, skipped=0, errors=0,
                   timeouts=0, duration_ms=count * 12, agent_id="bench", pass_rate=90.0)
    )  # fmt: skip


def test_a_20000_case_report_is_a_third_of_its_results_and_opens_in_3s(tmp_path):
    results, report = tmp_path / "results.jsonl", tmp_path / "report.html"
    scale_results(results, 20_000)
    loaded = read_results(results)
    writer = writer_for(report)
    writer.open(loaded.header, loaded.results)
    assert loaded.summary is not None
    writer.close(loaded.summary)
    assert report.stat().st_size < results.stat().st_size / 3
    completed = subprocess.run(
        [CHROMIUM, *HEADLESS_FLAGS, f"--user-data-dir={tmp_path / 'profile'}",
         "--virtual-time-budget=30000", "--dump-dom", report.as_uri()],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    body = re.search(r"<body[^>]*>", completed.stdout)
    assert body is not None, completed.stderr[-2000:]
    ready = re.search(r'data-ready-ms="(\d+)"', body.group(0))
    assert ready is not None and int(ready.group(1)) < 3000, body.group(0)
    # failures first: the first rows drawn are the failed cases, in file order
    first_rows = re.findall(r'<tr data-index="(\d+)" data-status="(\w+)"', completed.stdout)[:3]
    assert first_rows == [("9", "failed"), ("19", "failed"), ("29", "failed")]
    assert "200 listed" in completed.stdout  # a page of rows, not 20,000

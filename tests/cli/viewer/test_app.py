"""The viewer's routes through Starlette's TestClient: every page, escaping, read-only
methods, the Host check, security headers, 404 outside the folder, new runs on reload."""

from __future__ import annotations

import os
import re
from html import unescape

import pytest
from starlette.testclient import TestClient

from agentcli.cli.viewer.app import create_app
from agentcli.eval.reports._view import comparison
from agentcli.eval.results.model import AssertionResult
from tests.cli.viewer.runs import HOSTILE, forecast, sample_folder, write_run


@pytest.fixture
def folder(tmp_path):
    return sample_folder(tmp_path / "runs")


@pytest.fixture
def client(folder):
    with TestClient(create_app(folder), base_url="http://127.0.0.1") as client:
        yield client


def text(html: str) -> str:
    """The page's text: tags dropped, entities decoded, whitespace collapsed."""
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def test_the_runs_list(client):
    page = client.get("/")
    assert page.status_code == 200
    body = text(page.text)
    assert (
        "Started Results file Assistant Connector Cases Pass rate Duration Cost "
        "2026-12-01T11:00:00+00:00 nested/new.jsonl weather scripted 4 50.0% 1.2s "
        "$0.0041 (agent $0.0036, simulator $0.0005) "
        "2026-12-01T10:00:00+00:00 base.jsonl weather scripted 3 100.0% 1.2s"
    ) in body
    assert "repeats.jsonl unfinished - - 2 50.0% -" in body
    assert 'href="/run?file=nested%2Fnew.jsonl"' in page.text
    assert "cases.jsonl" not in body  # a case file is not a run


def test_the_run_page_puts_failures_first_and_escapes_everything(client):
    page = client.get("/run", params={"file": "nested/new.jsonl"})
    assert page.status_code == 200
    assert HOSTILE not in page.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text
    body = text(page.text)
    assert "Cases 4: 2 passed, 1 failed, 1 errors, 0 timeouts, 0 skipped" in body
    assert "1–4 of 4 results (failures first)" in body
    rows = re.findall(r'<tr data-status="(\w+)">', page.text)
    assert rows == ["failed", "error", "passed", "passed"]
    assert "paris ✗ failed smoke slow agent 42ms expected output to contain 'sunny'" in body
    assert f"{HOSTILE} ! error infra 42ms boom {HOSTILE}" in body


def test_run_filters_and_search(client):
    def shown(**params):
        page = client.get("/run", params={"file": "nested/new.jsonl", **params})
        return re.findall(r'class="case-link" href="[^"]*">([^<]*)<', page.text)

    assert shown(status="failing") == ["paris", "&lt;script&gt;alert(1)&lt;/script&gt;"]
    assert shown(tag="slow") == ["paris"]
    assert shown(attribution="infra") == ["&lt;script&gt;alert(1)&lt;/script&gt;"]
    assert shown(q="LATTE") == ["order"]
    assert shown(status="passed", q="rome") == ["rome"]
    assert shown(status="nonsense") == shown()  # an unknown filter filters nothing


def test_the_case_page_shows_assertions_tool_calls_and_usage(client):
    page = client.get("/case", params={"file": "nested/new.jsonl", "n": "0"})
    body = text(page.text)
    assert "paris Status ✗ failed on the agent Tags smoke slow Duration 42ms" in body
    assert "Cost $0.0012 (agent $0.0012)" in body
    assert (
        "Assertions Type Result Message Expected Actual "
        "contains ✗ failed expected output to contain 'sunny' sunny I cannot say "
        "tool_called ✓ passed get_forecast was called get_forecast"
    ) in body
    assert (
        'Tool calls Tool Arguments Result get_forecast (weather) { "city": "Paris" } { "sky": "sunny" }'
        in body
    )
    assert "Usage Who Input tokens Output tokens Total Cost agent 100 20 120 $0.0012" in body


def test_the_case_page_of_a_dynamic_case_shows_its_transcript(client):
    body = text(client.get("/case", params={"file": "base.jsonl", "n": "2"}).text)
    assert (
        "Transcript Turn 1 0ms user (simulator) I want a latte "
        "simulator's reasoning start with the order agent What size? "
        "Turn 2 0ms user (simulator) Large, please "
        "simulator's reasoning the agent asked the size: answer it agent Your latte is ordered "
        'Tool Arguments Result place_order { "size": "large" } ok '  # a turn's calls name no server
        "checkpoints reached: ordered"
    ) in body
    assert (
        "Checkpoints Checkpoint Reached Required Passed Message ordered turn 2 yes ✓ passed order placed"
        in body
    )
    assert "simulator 50 10 60 $0.0005" in body


def test_the_case_page_lists_the_other_runs_of_its_case(client):
    page = client.get("/case", params={"file": "repeats.jsonl", "n": "0"})
    assert "Runs of this case run 1 ✓ passed run 2 ✗ failed" in text(page.text)
    assert 'href="/case?file=repeats.jsonl&amp;n=1"' in page.text


def test_a_json_report_has_a_run_page_too(client, folder):
    write_run(folder / "report.json", [forecast("json-case", status="failed")])
    page = client.get("/run", params={"file": "report.json"})
    assert "json-case ✗ failed agent 42ms expected output to contain 'sunny'" in text(page.text)
    case = client.get("/case", params={"file": "report.json", "n": "0"})
    assert "Input What's the weather in Paris?" in text(case.text)


def test_a_file_that_changed_under_a_page_is_a_409_saying_so(client, folder):
    client.get("/run", params={"file": "base.jsonl"})
    path = folder / "base.jsonl"
    stat = path.stat()
    lines = path.read_bytes().split(b"\n")
    lines[1] = b" " * len(lines[1])  # same size, same mtime: the index still looks right
    path.write_bytes(b"\n".join(lines))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    page = client.get("/case", params={"file": "base.jsonl", "n": "0"})
    assert page.status_code == 409
    assert "result 1 is no longer where it was" in text(page.text)


def test_a_huge_output_is_cut(client, folder):
    write_run(folder / "big.jsonl", [forecast("big", output="x" * 150_000)])
    page = client.get("/case", params={"file": "big.jsonl", "n": "0"})
    assert "x" * 100_000 + "\n… (50,000 more characters)</pre>" in page.text
    assert "x" * 100_001 not in page.text


def test_the_matrix_page(client):
    page = client.get("/matrix", params={"file": "matrix.jsonl"})
    body = text(page.text)
    assert "2 cases × 2 connectors; a case passes on every connector." in body
    assert (
        "Case scripted echo Verdict paris ✅ passed ❌ failed failed rome ✅ passed ✅ passed passed"
        in body
    )
    assert 'href="/case?file=matrix.jsonl&amp;n=1"' in page.text  # the failing cell's result
    run = client.get("/run", params={"file": "matrix.jsonl"})
    assert 'id="matrix-link"' in run.text
    assert "Connector scripted, echo" in text(run.text)
    assert 'id="matrix-link"' not in client.get("/run", params={"file": "base.jsonl"}).text
    assert client.get("/matrix", params={"file": "base.jsonl"}).status_code == 404


def test_the_compare_page_is_agent_diffs_data(client):
    page = client.get("/compare", params={"base": "base.jsonl", "new": "nested/new.jsonl"})
    assert page.status_code == 200
    body = text(page.text)
    assert "Regressions: 1 · Passing: 2 · New cases: 1" in body
    assert (
        "Regressions (1) Case Base New What changed paris passed failed expected output to contain 'sunny'"
        in body
    )
    assert "--- base +++ new @@ -1 +1 @@ -The forecast for Paris is sunny +I cannot say" in body
    assert 'class="new-case" href="/case?file=nested%2Fnew.jsonl&amp;n=0"' in page.text
    assert HOSTILE not in page.text


@pytest.mark.parametrize(
    "url",
    [
        "/run?file=../outside.jsonl",
        "/run?file=%2Fetc%2Fpasswd",
        "/run?file=cases.jsonl",
        "/run",
        "/case?file=base.jsonl&n=99",
        "/case?file=base.jsonl&n=-1",
        "/compare?base=base.jsonl&new=../outside.jsonl",
        "/static/../app.py",
        "/nowhere",
    ],
)
def test_anything_outside_the_folder_is_not_found(client, folder, url):
    write_run(folder.parent / "outside.jsonl", [forecast("secret")])
    page = client.get(url)
    assert page.status_code == 404
    assert "secret" not in page.text


def test_it_is_read_only(client):
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        assert client.request(method, "/run?file=base.jsonl").status_code == 405
    assert client.head("/").status_code == 200


def test_only_a_local_host_header_is_answered(client):
    assert client.get("/", headers={"host": "attacker.example"}).status_code == 400
    assert client.get("/", headers={"host": "localhost:8750"}).status_code == 200


def test_pages_carry_a_strict_content_security_policy(client):
    headers = client.get("/").headers
    assert headers["content-security-policy"].startswith("default-src 'none'; style-src 'self'")
    assert headers["x-content-type-options"] == "nosniff"
    assert client.get("/static/viewer.js").status_code == 200


def test_a_new_run_appears_without_a_restart(client, folder):
    assert "later.jsonl" not in client.get("/").text
    write_run(folder / "later.jsonl", [forecast("z")], started="2026-12-02T00:00:00+00:00")
    assert 'href="/run?file=later.jsonl"' in client.get("/").text
    assert "z" in text(client.get("/run", params={"file": "later.jsonl"}).text)


def test_an_assertion_without_a_recorded_actual_says_so_as_the_reports_do(client, folder):
    """A record with no ``actual``: a check of the output shows the case's output (what the
    console and HTML reports show beside a failure), any other says "(not recorded)"; never
    an empty cell that reads as "the agent answered nothing"."""
    result = forecast(
        "lyon",
        status="failed",
        output="Rain in Lyon",
        assertions=[
            AssertionResult("contains", False, "expected 'sunny'", expected="sunny"),
            AssertionResult(
                "tool_called", False, "get_forecast was not called", expected="get_forecast"
            ),
            AssertionResult("is_json", True, "output is JSON"),
            AssertionResult("json_path", False, "wrong city", expected="Lyon", path="$.city"),
            AssertionResult("equals", False, "not equal", expected="", actual=""),
        ],
    )
    write_run(folder / "unrecorded.jsonl", [result])
    page = client.get("/case", params={"file": "unrecorded.jsonl", "n": "0"})
    assert page.status_code == 200
    body = text(page.text)
    assert (
        "Assertions Type Result Message Expected Actual "
        "contains ✗ failed expected 'sunny' sunny Rain in Lyon "
        "tool_called ✗ failed get_forecast was not called get_forecast (not recorded) "
        "is_json ✓ passed output is JSON Rain in Lyon "
        "json_path $.city ✗ failed wrong city Lyon (not recorded) "
        "equals ✗ failed not equal "  # an empty string recorded is shown as one
        "Tool calls"
    ) in body
    assert page.text.count('<span class="muted not-recorded">(not recorded)</span>') == 2
    for item in result.assertions:  # the reports' rows agree on every failed assertion
        rows = dict(comparison(item, result))
        if "actual" in rows:
            assert rows["actual"] in body

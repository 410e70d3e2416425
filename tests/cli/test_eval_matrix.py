"""`agent eval` over a connector matrix end to end: two scripted variants and the loopback
OpenAI-compatible server, one failing cell; the table, the results file, --json, exit codes
(--matrix-pass), --runs, --matrix files, --resume, --shard + merge, report and diff."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcli.cli.main import _register, app
from agentcli.eval.reports import read_results
from fixtures.chromium import CHROMIUM, headless_flags

_register()

A, B, LOOP = "scripted:a.yml", "scripted:b.yml", "loop"
MATRIX = ["-c", A, "-c", B, "-c", LOOP]

TABLE = (
    "  Matrix: 2 test cases × 3 connectors (a case passes on every connector)\n"
    "  Case    scripted:a.yml  scripted:b.yml  loop    Verdict\n"
    "  greet   PASSED          FAILED          PASSED  FAILED\n"
    "  bye     PASSED          PASSED          PASSED  PASSED\n"
    "  Passed  2/2             1/2             2/2     1/2\n"
)


@pytest.fixture
def project(tmp_path, monkeypatch, openai_server):
    package = tmp_path / "assistants" / "greeter"
    package.mkdir(parents=True)
    (package / "package.yao").write_text('{"name": "Greeter", "connector": "scripted:a.yml"}')
    (package / "a.yml").write_text('rules:\n  - say: "hello, {{ user }}"\n')
    (package / "b.yml").write_text(
        'rules:\n  - when: {user: "(?i)bye"}\n    say: goodbye\n  - say: hmm\n'
    )
    (tmp_path / "connectors.yml").write_text(
        f"loop: {{model: openai/echo, api_base: '{openai_server.base_url}', api_key: none}}\n"
    )
    cases = [
        {"id": "greet", "input": "hello there", "assert": {"type": "contains", "value": "hello"}},
        {
            "id": "bye",
            "input": "say goodbye",
            "assert": {"type": "regex", "value": "hello|goodbye"},
        },
    ]
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    return tmp_path


def eval_(*args: str):
    return CliRunner().invoke(app, ["eval", "greeter", "@cases.jsonl", *args])


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_every_case_runs_on_each_connector_and_the_console_ends_with_the_table(project):
    run = eval_(*MATRIX, "--parallel", "3", "-o", "out.jsonl")
    assert run.exit_code == 1, run.output  # one cell failed
    assert "ℹ Matrix: scripted:a.yml, scripted:b.yml, loop (3 connectors per test case)" in (
        run.output
    )
    assert "► [greet @ scripted:b.yml] hello there FAILED" in run.output
    table = run.output[run.output.index("  Matrix: 2 test cases") :]
    assert table.startswith(TABLE), table
    assert "TESTS FAILED" in table
    header, *results, summary = lines(project / "out.jsonl")
    assert header["metadata"]["options"]["connectors"] == [A, B, LOOP]
    assert [(r["id"], r["connector"], r["status"]) for r in results] == [
        ("greet", A, "passed"), ("greet", B, "failed"), ("greet", LOOP, "passed"),
        ("bye", A, "passed"), ("bye", B, "passed"), ("bye", LOOP, "passed"),
    ]  # fmt: skip
    assert summary["matrix"]["failing_cases"] == ["greet"]
    assert summary["matrix"]["by_connector"][B] == {
        "cases": 2, "passed": 1, "failed": 1, "pass_rate": 50.0,
    }  # fmt: skip


def test_a_single_connector_run_writes_no_matrix_keys(project):
    assert eval_("-c", A, "-o", "one.jsonl").exit_code == 0
    header, *results, summary = lines(project / "one.jsonl")
    assert "connectors" not in header["metadata"]["options"]
    assert "matrix_pass" not in header["metadata"]["options"]
    assert all("connector" not in r for r in results) and "matrix" not in summary
    assert header["metadata"]["options"]["connector"] == A


def test_matrix_pass_any_without_a_matrix_is_refused(project):
    # it was accepted and did nothing, where --alpha, --max-runs ... without theirs are exit 2
    run = eval_("-c", A, "--matrix-pass", "any", "-o", "one.jsonl")
    assert run.exit_code == 2, run.output
    assert "error: --matrix-pass any applies to a connector matrix" in run.output
    assert not (project / "one.jsonl").exists()


def test_matrix_pass_any_passes_a_case_that_passes_on_one_connector(project):
    run = eval_(*MATRIX, "--matrix-pass", "any", "-o", "any.jsonl")
    assert run.exit_code == 0, run.output
    assert "(a case passes on any connector)" in run.output
    assert "  greet   PASSED          FAILED          PASSED  PASSED\n" in run.output
    assert lines(project / "any.jsonl")[0]["metadata"]["options"]["matrix_pass"] == "any"


def test_json_events_name_the_connector_and_end_with_the_matrix(project):
    run = eval_(*MATRIX, "--json", "-o", "j.jsonl")
    assert run.exit_code == 1
    events = [json.loads(line) for line in run.stdout.splitlines()]
    results = [e for e in events if e["type"] == "test_result"]
    assert [(e["id"], e["connector"]) for e in results][:3] == [
        ("greet", A), ("greet", B), ("greet", LOOP),
    ]  # fmt: skip
    (matrix,) = [e for e in events if e["type"] == "matrix"]
    assert matrix["connectors"] == [A, B, LOOP] and matrix["pass"] == "all"
    greet = matrix["cases"][0]
    assert greet["id"] == "greet" and greet["passed"] is False
    assert greet["cells"][B] == {"status": "failed", "runs": 1, "passed": 0}


def test_under_runs_each_cell_shows_its_pass_rate(project):
    run = eval_(*MATRIX, "--runs", "3", "--parallel", "4", "-o", "r.jsonl")
    assert run.exit_code == 1, run.output
    assert (
        "  Case    scripted:a.yml  scripted:b.yml  loop          Verdict\n"
        "  greet   ✓ 100% (3/3)    ✗ 0% (0/3)      ✓ 100% (3/3)  FAILED\n"
        "  bye     ✓ 100% (3/3)    ✓ 100% (3/3)    ✓ 100% (3/3)  PASSED\n"
    ) in run.output
    assert "[greet @ scripted:b.yml] 0% (0/3) Highly Unstable" in run.output
    loaded = read_results(project / "r.jsonl")
    assert [(s["id"], s.get("connector"), s["passed"]) for s in loaded.stability_results] == [
        ("greet", A, 3), ("greet", B, 0), ("greet", LOOP, 3),
        ("bye", A, 3), ("bye", B, 3), ("bye", LOOP, 3),
    ]  # fmt: skip
    assert eval_(*MATRIX, "--runs", "3", "--matrix-pass", "any", "-o", "r2.jsonl").exit_code == 0


def test_a_matrix_file_names_the_columns_and_a_bad_one_is_exit_2(project):
    (project / "matrix.yml").write_text(f"connectors:\n  - {A}\n  - {LOOP}\n")
    run = eval_("--matrix", "matrix.yml", "-o", "m.jsonl")
    assert run.exit_code == 0, run.output
    assert [r.connector for r in read_results(project / "m.jsonl").results] == [A, LOOP, A, LOOP]
    (project / "bad.yml").write_text("connectors:\n  - [x]\n")
    bad = eval_("--matrix", "bad.yml")
    assert bad.exit_code == 2 and "bad.yml:2: entry 1 is ['x'], not a connector name" in bad.output
    unknown = eval_("-c", A, "-c", "nosuch")
    assert unknown.exit_code == 2 and "unknown connector 'nosuch'" in unknown.output
    message = CliRunner().invoke(app, ["eval", "greeter", "hi", "-c", A, "-c", B])
    assert message.exit_code == 2 and "applies to a file of cases" in message.output


def test_resume_continues_the_matrix_with_the_columns_its_header_lists(project):
    assert eval_(*MATRIX, "-o", "full.jsonl").exit_code == 1
    partial = project / "part.jsonl"
    partial.write_text(
        "".join(line + "\n" for line in (project / "full.jsonl").read_text().splitlines()[:3])
    )
    run = eval_("--resume", "part.jsonl")
    assert run.exit_code == 1, run.output
    ran = [line for line in run.output.splitlines() if line.startswith("► ")]
    assert [line.split("]")[0] for line in ran] == [
        "► [greet @ loop", "► [bye @ scripted:a.yml", "► [bye @ scripted:b.yml", "► [bye @ loop",
    ]  # fmt: skip
    assert run.output[run.output.index("  Matrix: 2 test cases") :].startswith(TABLE)
    assert [(r.id, r.connector) for r in read_results(partial).results] == [
        (r.id, r.connector) for r in read_results(project / "full.jsonl").results
    ]


def test_resume_with_other_columns_says_the_kept_cells_count_for_nothing(project):
    assert eval_(*MATRIX, "-o", "full.jsonl").exit_code == 1
    run = eval_("-c", A, "--resume", "full.jsonl")
    assert "kept results of connectors this run does not run (loop, scripted:a.yml, " in run.output
    assert "► [greet] hello there PASSED" in run.output  # the single-connector case ran


def test_shards_of_a_matrix_merge_into_its_table_and_verdict(project):
    for index in (1, 2):
        shard = eval_(*MATRIX, "--shard", f"{index}/2", "-o", f"s{index}.jsonl")
        assert shard.exit_code in (0, 1), shard.output
    merged = CliRunner().invoke(app, ["merge", "s1.jsonl", "s2.jsonl", "-o", "all.jsonl"])
    assert merged.exit_code == 1, merged.output
    summary = lines(project / "all.jsonl")[-1]
    assert summary["matrix"]["failing_cases"] == ["greet"] and summary["total"] == 6


def test_reports_show_the_matrix_and_each_cell_drills_down_to_its_result(project):
    assert eval_(*MATRIX, "-o", "out.jsonl").exit_code == 1
    html = CliRunner().invoke(app, ["report", "out.jsonl", "-o", "r.html"])
    assert html.exit_code == 0, html.output
    page = (project / "r.html").read_text()
    assert '<table id="matrix-table">' in page
    # greet @ scripted:b.yml is the second result: its cell opens that result's details
    assert '<a href="#case-1" data-open="case-1">❌ failed</a>' in page
    if CHROMIUM is not None:  # the script opens that case (as a click on the cell does)
        shown = subprocess.run(
            [CHROMIUM, *headless_flags(project / "profile"), "--dump-dom",
             (project / "r.html").as_uri() + "#case-1"],
            capture_output=True, text=True, timeout=90,
        ).stdout  # fmt: skip
        opened = re.search(r'<tr class="case-page" id="case-1">', shown)
        assert opened is not None, shown[-2000:]
        assert 'data-index="1" data-status="failed"' in shown
        assert '@ <span class="connector">scripted:b.yml</span>' in shown
    md = CliRunner().invoke(app, ["report", "out.jsonl", "-o", "r.md"])
    assert md.exit_code == 0
    text = (project / "r.md").read_text()
    assert "| `greet` | ✅ passed | [❌ failed](#result-2) | ✅ passed | ❌ failed |" in text
    assert '<a id="result-2"></a>\n\n### ❌ `greet` @ `scripted:b.yml`' in text
    extract = CliRunner().invoke(app, ["extract", "out.jsonl", "-o", "cases"])
    assert extract.exit_code == 0, extract.output
    assert (project / "cases" / "greet @ scripted_b.yml.md").is_file()  # one file per cell
    assert len(list((project / "cases").glob("*.md"))) == 6 + 1  # and the index
    junit = CliRunner().invoke(app, ["report", "out.jsonl", "-o", "r.xml"])
    assert (
        junit.exit_code == 0 and 'name="greet @ scripted:b.yml"' in (project / "r.xml").read_text()
    )


def test_diff_compares_each_case_on_each_connector(project):
    assert eval_(*MATRIX, "-o", "base.jsonl").exit_code == 1
    (project / "assistants" / "greeter" / "b.yml").write_text('rules:\n  - say: "hello bye"\n')
    (project / "assistants" / "greeter" / "a.yml").write_text('rules:\n  - say: "nope"\n')
    assert eval_(*MATRIX, "-o", "new.jsonl").exit_code == 1
    diff = CliRunner().invoke(app, ["diff", "base.jsonl", "new.jsonl"])
    assert "✗ greet @ scripted:a.yml: passed -> failed" in diff.output
    assert "✗ bye @ scripted:a.yml: passed -> failed" in diff.output
    assert "✓ greet @ scripted:b.yml: failed -> passed" in diff.output
    assert "2 regressions, 1 fix" in diff.output


def test_each_connector_records_and_replays_its_own_cassettes(project, openai_server):
    assert eval_(*MATRIX, "--record", "-o", "rec.jsonl").exit_code == 1
    folders = sorted(path.name for path in (project / "cassettes").iterdir())
    assert len(folders) == 3 and folders[0].startswith("loop")
    assert all((project / "cassettes" / name / "greet.jsonl").is_file() for name in folders)
    served = len(openai_server.requests)
    replay = eval_(*MATRIX, "--replay", "-o", "rep.jsonl")
    assert replay.exit_code == 1, replay.output
    assert len(openai_server.requests) == served  # the loop column answered from its cassettes
    assert [(r.id, r.connector, r.status) for r in read_results(project / "rep.jsonl").results] == [
        (r.id, r.connector, r.status) for r in read_results(project / "rec.jsonl").results
    ]

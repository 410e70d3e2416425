"""`agent diff` end to end, and `agent eval --baseline --gate`: exact console output, exit
codes (0 no regression, 1 a regression, 2 bad input), --json, -o files, folders of runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcli.cli.main import _register, app
from agentcli.cli.views.diff_block import DiffBlock
from agentcli.eval.compare.compute import diff_runs
from agentcli.eval.compare.console import console_lines
from agentcli.eval.compare.sources import load_run
from agentcli.eval.results.model import ToolCall
from tests.cli import test_eval
from tests.cli.imports import modules_after
from tests.cli.views.blocks import rendered
from tests.eval.compare.runs import repeats, result, write_run

_register()
runner = CliRunner()


def agent(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


@pytest.fixture
def two_runs(tmp_path):
    """A base and a new run: one regression, one fix, one changed output and tool call."""
    base = [
        result("greet", output="Hello there"),
        result("sum", "failed", output="sum=5", message='expected output to contain "sum=5"'),
        result("add", output="sum=5", calls=[ToolCall(tool="add", arguments={"a": 2, "b": 3})]),
    ]
    new = [
        result("greet", "failed", output="Hi", message='expected output to contain "Hello"'),
        result("sum", output="sum=5"),
        result("add", output="sum=6", calls=[ToolCall(tool="add", arguments={"a": 2, "b": 4})]),
    ]
    return (
        write_run(tmp_path / "base.jsonl", base, "2026-11-30T12:00:00+00:00"),
        write_run(tmp_path / "new.jsonl", new, "2026-12-01T12:00:00+00:00"),
    )


def test_the_console_shows_regressions_fixes_and_changed_outputs_at_a_fixed_width(
    two_runs, monkeypatch
):
    monkeypatch.chdir(two_runs[0].parent)
    base, new = load_run(Path("base.jsonl")), load_run(Path("new.jsonl"))
    compared = diff_runs(base.results, new.results, base_source=base.source, new_source=new.source)
    text = rendered(DiffBlock(console_lines(compared)), width=60)
    assert text.splitlines() == [
        "Comparing runs",
        "  Base: base.jsonl (started 2026-11-30T12:00:00+00:00, 3 ",
        "results)",
        "  New:  new.jsonl (started 2026-12-01T12:00:00+00:00, 3 ",
        "results)",
        "",
        "Regressions (1)",
        "  ✗ greet: passed -> failed: expected output to contain ",
        '"Hello"',
        "",
        "Fixes (1)",
        "  ✓ sum: failed -> passed",
        "",
        "Changed outputs (2)",
        "  greet:",
        "    --- base",
        "    +++ new",
        "    @@ -1 +1 @@",
        "    -Hello there",
        "    +Hi",
        "  add:",
        "    --- base",
        "    +++ new",
        "    @@ -1 +1 @@",
        "    -sum=5",
        "    +sum=6",
        "",
        "Tool-call changes (1)",
        "  add:",
        '    ~ add {"a":2,"b":3} -> {"a":2,"b":4}',
        "",
        "1 regression, 1 fix, 1 passing; changed: output in 2 cases, ",
        "tool calls in 1 case",
    ]


def test_a_regression_exits_1_and_none_exits_0(two_runs):
    base, new = two_runs
    assert agent("diff", str(base), str(new)).exit_code == 1
    assert agent("diff", str(new), str(new)).exit_code == 0
    fixed_only = agent("diff", str(new), str(base))  # greet is fixed, sum regresses
    assert fixed_only.exit_code == 1


def test_json_is_one_document_on_stdout(two_runs):
    base, new = two_runs
    outcome = agent("diff", str(base), str(new), "--json")
    assert outcome.exit_code == 1
    document = json.loads(outcome.stdout)
    assert document["format"] == "agentcli.diff/1"
    assert document["regressions"] == ["greet"]
    assert [(c["id"], c["kind"]) for c in document["cases"]] == [
        ("greet", "regression"),
        ("sum", "fix"),
        ("add", "passing"),
    ]
    assert document["cases"][2]["output_diff"][-2:] == ["-sum=5", "+sum=6"]


def test_markdown_and_html_files_are_written(two_runs, tmp_path):
    base, new = two_runs
    for name in ("diff.md", "diff.html"):
        outcome = agent("diff", str(base), str(new), "-o", str(tmp_path / name))
        assert outcome.exit_code == 1
        assert f"wrote {tmp_path / name}" in outcome.output
    assert (tmp_path / "diff.md").read_text().startswith("# Agent diff\n\n**1 regression")
    page = (tmp_path / "diff.html").read_text()
    assert "<title>Agent Diff" in page and "&quot;Hello&quot;" in page
    again = agent("diff", str(base), str(new), "-o", str(tmp_path / "diff.md"))
    assert again.exit_code == 1  # a diff of ours is replaced


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.jsonl", "new.jsonl"], "missing.jsonl: no such results file"),
        (["cases.jsonl", "new.jsonl"], "cases.jsonl:2:1: not a results file: invalid JSON"),
        (["base.jsonl"], "base.jsonl: give two results files, or one folder of runs"),
        (["base.jsonl", "new.jsonl", "-o", "d.txt"], "unknown extension '.txt'"),
        (["base.jsonl", "other.json", "-o", "other.json"], "is the input file"),
        (["base.jsonl", "new.jsonl", "-o", "cases.md"], "exists and is not a results file"),
    ],
)
def test_bad_input_exits_2_with_a_message(two_runs, tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cases.jsonl").write_text('{"id": "a"}\n{"id": "b"}\n')
    (tmp_path / "cases.md").write_text("my notes\n")
    write_run(tmp_path / "other.json", [result("greet")])
    outcome = agent("diff", *args)
    assert outcome.exit_code == 2
    assert message in outcome.stderr
    assert "Traceback" not in outcome.output


def test_a_folder_compares_its_newest_two_runs_and_says_which(tmp_path):
    write_run(tmp_path / "output-1.jsonl", [result("a")], "2026-01-01T00:00:00+00:00")
    write_run(tmp_path / "output-2.jsonl", [result("a", "failed")], "2026-01-02T00:00:00+00:00")
    write_run(tmp_path / "output-3.jsonl", [result("a")], "2026-01-03T00:00:00+00:00")
    (tmp_path / "inputs.jsonl").write_text('{"id": "a", "input": "x"}\n{"id": "b"}\n')
    outcome = agent("diff", str(tmp_path))
    assert outcome.exit_code == 0  # output-2 -> output-3: a fix
    assert (
        f"comparing the newest two results files in {tmp_path}: "
        f"{tmp_path / 'output-2.jsonl'} -> {tmp_path / 'output-3.jsonl'}"
    ) in outcome.stderr
    assert "✓ a: failed -> passed" in outcome.stdout


def test_repeats_show_the_test_and_its_p_value(tmp_path):
    base = write_run(tmp_path / "base.jsonl", repeats("flaky", 1, 5) + repeats("broken", 5, 5))
    new = write_run(tmp_path / "new.jsonl", repeats("flaky", 2, 5) + repeats("broken", 0, 5))
    outcome = agent("diff", str(base), str(new))
    assert outcome.exit_code == 1
    assert (
        "✗ broken: 5/5 passed -> 0/5 passed (Fisher's exact test (two-sided): p=0.007937 < 0.05)"
    ) in outcome.stdout
    assert (
        "• flaky: 1/5 passed -> 2/5 passed (Fisher's exact test (two-sided): p=1 ≥ 0.05)"
        in outcome.stdout
    )
    assert agent("diff", str(base), str(new), "--alpha", "0.005").exit_code == 0


def test_help_imports_neither_scipy_nor_the_diff(tmp_path):
    for args in (["--help"], ["diff", "--help"]):
        loaded = modules_after(args, tmp_path, "")
        assert not [m for m in loaded if m.startswith(("scipy", "agentcli.eval.compare"))]


def test_scipy_is_imported_only_when_there_are_repeats(tmp_path):
    once = [write_run(tmp_path / f"{n}.jsonl", [result("a")]) for n in ("a", "b")]
    assert "scipy" not in modules_after(["diff", *map(str, once)], tmp_path, "scipy")
    runs = [write_run(tmp_path / f"r{n}.jsonl", repeats("a", 2, 3)) for n in ("a", "b")]
    assert "scipy" in modules_after(["diff", *map(str, runs)], tmp_path, "scipy")


# --- agent eval --baseline --gate regressions ---------------------------------------------

project = test_eval.project  # assistants/probe in a project folder; cwd is the project


def cases(path: Path, greeting: str, echo: str) -> str:
    """A case file: ``hello`` expects ``greeting``, ``echo`` expects ``echo``."""
    rows = [
        {"id": "hello", "input": "hello", "assert": {"type": "contains", "value": greeting}},
        {"id": "echo", "input": "say hi", "assert": {"type": "contains", "value": echo}},
        {"id": "add", "input": "add 2 3", "assert": {"type": "contains", "value": "sum=5"}},
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return f"@{path.name}"


def test_the_gate_passes_a_failure_already_in_the_baseline_and_fails_a_new_one(project):
    baseline_cases = cases(project / "base-cases.jsonl", "Hello", "nope")  # echo fails
    assert agent("eval", "probe", baseline_cases, "-o", "base.jsonl").exit_code == 1
    same = cases(project / "same.jsonl", "Hello", "nope")
    plain = agent("eval", "probe", same, "-o", "plain.jsonl", "--baseline", "base.jsonl")
    assert plain.exit_code == 1, plain.output  # without --gate the run's own verdict stands
    assert "Still failing: echo: failed -> failed" in plain.stdout
    gated = agent(
        "eval", "probe", same, "-o", "gated.jsonl", "--baseline", "base.jsonl",
        "--gate", "regressions",
    )  # fmt: skip
    assert gated.exit_code == 0, gated.stdout
    assert "Gate: no regressions against the baseline (1 case(s) already failing" in gated.stdout
    assert gated.stdout.index("Summary") < gated.stdout.index("Baseline: base.jsonl")
    worse = cases(project / "worse.jsonl", "Goodbye", "nope")  # hello fails now
    broken = agent(
        "eval", "probe", worse, "-o", "pr.jsonl", "--baseline", "base.jsonl",
        "--gate", "regressions",
    )  # fmt: skip
    assert broken.exit_code == 1
    assert "✗ Regression: hello: passed -> failed" in broken.stdout
    assert "✗ Gate: 1 regression(s) against the baseline: hello" in broken.stdout


def test_the_gate_reads_merged_shards_as_its_baseline(project):
    good = cases(project / "good.jsonl", "Hello", "hi")
    for shard in ("1/2", "2/2"):
        name = f"shard-{shard[0]}.jsonl"
        assert agent("eval", "probe", good, "--shard", shard, "-o", name).exit_code == 0
    assert agent("merge", "shard-1.jsonl", "shard-2.jsonl", "-o", "main.jsonl").exit_code == 0
    worse = cases(project / "worse.jsonl", "Hello", "nope")
    gated = agent(
        "eval", "probe", worse, "-o", "pr.html", "--baseline", "main.jsonl",
        "--gate", "regressions",
    )  # fmt: skip
    assert gated.exit_code == 1
    assert "✗ Regression: echo: passed -> failed" in gated.stdout
    assert "New:  pr.html.jsonl" in gated.stdout  # a report's stream is read back
    assert "2 passing" in gated.stdout


def test_the_gate_tests_repeats_for_significance(project):
    good = cases(project / "good.jsonl", "Hello", "hi")
    assert agent("eval", "probe", good, "--runs", "5", "-o", "base.jsonl").exit_code == 0
    worse = cases(project / "worse.jsonl", "Hello", "nope")
    gated = agent(
        "eval", "probe", worse, "--runs", "5", "-o", "pr.jsonl", "--baseline", "base.jsonl",
        "--gate", "regressions",
    )  # fmt: skip
    assert gated.exit_code == 1
    assert "Regression: echo: 5/5 passed -> 0/5 passed (Fisher's exact test" in gated.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--baseline", "nowhere.jsonl"], "--baseline nowhere.jsonl: no such results file"),
        (["--gate", "regressions"], "--gate regressions needs --baseline FILE"),
        (["--alpha", "0.01"], "--alpha 0.01 needs --baseline FILE"),
        (["--baseline", "cases.jsonl"], "cases.jsonl: this is a case file (cases to run), not a"),
    ],
)
def test_a_bad_baseline_exits_2_before_anything_runs(project, args, message):
    case_file = cases(project / "cases.jsonl", "Hello", "hi")
    outcome = agent("eval", "probe", case_file, "-o", "out.jsonl", *args)
    assert outcome.exit_code == 2
    assert message in outcome.stderr
    assert not (project / "out.jsonl").exists()


# --- one connector against a connector matrix -----------------------------------------------
# A run on one connector records no connector in its results (its header names it), so
# without pairing by the header's connector every case was "removed" and every cell "new":
# adding a second -c switched the regression gate off.


def test_the_gate_pairs_a_single_connector_baseline_with_its_column_of_a_matrix(project):
    good = cases(project / "good.jsonl", "Hello", "hi")
    assert agent("eval", "probe", good, "-o", "base.jsonl").exit_code == 0  # scripted only
    worse = cases(project / "worse.jsonl", "Goodbye", "hi")  # hello fails now
    gated = agent(
        "eval", "probe", worse, "-c", "scripted", "-c", "echo", "-o", "pr.jsonl",
        "--baseline", "base.jsonl", "--gate", "regressions",
    )  # fmt: skip
    assert gated.exit_code == 1, gated.stdout
    assert "✗ Regression: hello @ scripted: passed -> failed" in gated.stdout
    assert "New: hello @ echo: failed" in gated.stdout
    assert "Removed" not in gated.stdout
    assert "note: base.jsonl ran on scripted alone: its cases are compared with" in gated.stdout
    assert "✗ Gate: 1 regression(s) against the baseline: hello @ scripted" in gated.stdout
    compared = agent("diff", "base.jsonl", "pr.jsonl", "--json")
    assert compared.exit_code == 1
    document = json.loads(compared.stdout)
    assert document["regressions"] == ["hello @ scripted"]
    assert document["summary"]["removed"] == 0
    assert document["summary"]["passing"] == 2  # echo @ scripted, add @ scripted
    assert document["notes"] == [
        "base.jsonl ran on scripted alone: its cases are compared with the scripted cells"
        " of pr.jsonl"
    ]


def test_a_single_connector_run_gated_against_a_matrix_baseline_pairs_with_its_column(project):
    good = cases(project / "good.jsonl", "Hello", "hi")
    matrix = agent("eval", "probe", good, "-c", "scripted", "-c", "echo", "-o", "main.jsonl")
    assert matrix.exit_code == 1  # echo fails hello and add: a cell of the baseline
    worse = cases(project / "worse.jsonl", "Hello", "nope")  # echo fails now
    gated = agent(
        "eval", "probe", worse, "-c", "echo", "-o", "pr.jsonl", "--baseline", "main.jsonl",
        "--gate", "regressions",
    )  # fmt: skip
    assert gated.exit_code == 1, gated.stdout
    assert "✗ Regression: echo @ echo: passed -> failed" in gated.stdout
    assert "Still failing: hello @ echo" in gated.stdout
    assert "Removed: hello @ scripted: was passed" in gated.stdout  # no scripted column now


def test_two_single_connector_runs_still_pair_by_id_whatever_their_connectors(project):
    good = cases(project / "good.jsonl", "Hello", "hi")
    assert agent("eval", "probe", good, "-o", "scripted.jsonl").exit_code == 0
    assert agent("eval", "probe", good, "-c", "echo", "-o", "echo.jsonl").exit_code == 1
    compared = agent("diff", "scripted.jsonl", "echo.jsonl", "--json")
    document = json.loads(compared.stdout)
    assert document["regressions"] == ["hello", "add"]  # one model against another
    assert document["notes"] == []

"""``agent eval`` end to end for dynamic cases, generated cases and script tests: the
fixtures (barista, sim.*) in a scratch project, and the bundled examples (coffee, expense,
tests.*) exactly as a user runs them."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcli.cli.main import _register, app
from agentcli.eval.reports import read_results
from tests.eval.reports.page import report_data

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures" / "assistants"
EXAMPLES = ROOT / "assistants"

_register()
runner = CliRunner()

RULES = [["what can i get", "A latte please"], ["size", "Medium"], ["correct", "yes"]]


def dynamic_case(case_id: str, use: str | None = "sim.user", **sim) -> dict:
    simulator: dict = {"options": {"metadata": {"rules": RULES, **sim}}}
    if use:
        simulator["use"] = use
    return {
        "id": case_id,
        "input": "I want to order coffee",
        "simulator": simulator,
        "checkpoints": [
            {"id": "greeting", "assert": {"type": "regex", "value": "(?i)hello"}},
            {"id": "ask_size", "after": ["greeting"], "assert": {"type": "regex", "value": "size"}},
            {
                "id": "confirm",
                "after": ["ask_size"],
                "assert": {"type": "regex", "value": "confirm"},
            },
        ],
        "max_turns": 6,
    }


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project with assistants/barista and assistants/sim; cwd is the project."""
    shutil.copytree(FIXTURES / "barista", tmp_path / "assistants" / "barista")
    shutil.copytree(FIXTURES / "sim", tmp_path / "assistants" / "sim")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AGENT_ROOT", raising=False)
    return tmp_path


def write_cases(path: Path, cases: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    return path


def invoke(*args: str):
    return runner.invoke(app, ["eval", *args], catch_exceptions=False)


# --- dynamic cases ------------------------------------------------------------------------


def test_dynamic_cases_console_reports_and_exit_code(project):
    write_cases(project / "dyn.jsonl", [dynamic_case("order")])
    result = invoke("barista", "@dyn.jsonl", "-v", "-o", "out.jsonl")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    start = lines.index("► [order] (dynamic, 3 checkpoints)")
    assert lines[start + 2] == "  │ Turn 1: User: I want to order coffee"
    assert "  │   ✓ checkpoint: ask_size" in lines
    assert re.search(r"└─ PASSED \(3 turns, 3/3 checkpoints, [\d.]+(µs|ms|s)\)", result.output)
    (loaded,) = read_results(project / "out.jsonl").results
    assert [t.turn for t in loaded.turns or []] == [1, 2, 3]
    assert [c.reached_at_turn for c in loaded.checkpoints or []] == [1, 2, 3]
    assert invoke("barista", "@dyn.jsonl", "-o", "out.md").exit_code == 0
    text = (project / "out.md").read_text()
    assert "Transcript" in text and "A latte please" in text and "ask_size" in text
    # The HTML report lists a passed case in its row (its conversation stays in the
    # results file, the Markdown report and agent view).
    assert invoke("barista", "@dyn.jsonl", "-o", "out.html").exit_code == 0
    (row,) = report_data((project / "out.html").read_text())["cases"]
    assert row[2] == "passed"


def test_simulator_option_is_the_default_and_else_the_builtin_one_plays(project):
    write_cases(project / "dyn.jsonl", [dynamic_case("order", use=None)])
    shipped = invoke("barista", "@dyn.jsonl", "-v", "-o", "out.json")
    # builtin.simulator knows no coffee: it restates its (empty) goal, the order never ends.
    assert shipped.exit_code == 1, shipped.output
    assert "Turn 2: User: I'd like to get some help." in shipped.output
    unknown = invoke("barista", "@dyn.jsonl", "--simulator", "sim.nobody")
    assert unknown.exit_code == 2 and "simulator 'sim.nobody'" in unknown.output
    ok = invoke("barista", "@dyn.jsonl", "--simulator", "sim.user", "-o", "out.json")
    assert ok.exit_code == 0, ok.output


def test_parallel_dynamic_cases_print_whole_blocks_and_keep_report_order(project):
    cases = [dynamic_case(f"c{i}") for i in range(4)] + [dynamic_case("quitter", give_up_at=2)]
    write_cases(project / "dyn.jsonl", cases)
    result = invoke("barista", "@dyn.jsonl", "-v", "--parallel", "5", "-o", "out.json")
    assert result.exit_code == 1
    lines = result.output.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("► [")]
    assert len(starts) == 5
    for i in starts:
        case_id = lines[i][3 : lines[i].index("]")]
        assert lines[i + 1] == f"  │ Dynamic test: {case_id} (max 6 turns)"
        end = next(j for j in range(i, len(lines)) if re.match(r"  └─ [A-Z]+ \(", lines[j]))
        assert not any(line.startswith("► [") for line in lines[i + 1 : end])
    report = json.loads((project / "out.json").read_text())
    assert [r["id"] for r in report["results"]] == ["c0", "c1", "c2", "c3", "quitter"]
    assert report["results"][-1]["status"] == "failed"


def test_json_events_for_dynamic_cases(project):
    write_cases(project / "dyn.jsonl", [dynamic_case("order")])
    result = invoke("barista", "@dyn.jsonl", "--json", "-o", "out.json")
    events = [json.loads(line) for line in result.output.splitlines()]
    kinds = [e["type"] for e in events]
    assert "dynamic_start" in kinds and "dynamic_result" in kinds
    assert "test_start" not in kinds and "test_result" not in kinds
    end = next(e for e in events if e["type"] == "dynamic_result")
    assert (end["id"], end["status"], end["turns"], end["checkpoints_reached"]) == (
        "order",
        "passed",
        3,
        3,
    )


# --- generated cases ----------------------------------------------------------------------


def test_generated_cases_dry_run_writes_a_runnable_case_file(project):
    result = invoke(
        "-i",
        "agents:sim.writer?count=3&focus=smoke&shape=extras",
        "-n",
        "barista",
        "--dry-run",
        "-o",
        "gen.jsonl",
    )
    assert result.exit_code == 0, result.output
    assert "○ [barista-smoke-1] hello" in result.output
    assert "ignored unknown field(s) rationale" in result.output
    lines = (project / "gen.jsonl").read_text().splitlines()
    assert [json.loads(line)["id"] for line in lines] == [
        "barista-smoke-1",
        "barista-smoke-2",
        "barista-smoke-3",
    ]
    ran = invoke("barista", "@gen.jsonl", "-o", "out.json")
    assert ran.exit_code == 0, ran.output
    dynamic = invoke(
        "-i", "agents:sim.writer?shape=dynamic", "-n", "barista", "--dry-run", "-o", "d.jsonl"
    )
    assert dynamic.exit_code == 0
    (written,) = (json.loads(line) for line in (project / "d.jsonl").read_text().splitlines())
    assert written["simulator"]["use"] == "sim.user" and len(written["checkpoints"]) == 2


def test_generated_cases_run_directly_and_bad_generators_are_usage_errors(project):
    ran = invoke("-i", "scripts:gen.Generate?count=2", "-n", "barista", "-o", "out.json")
    assert ran.exit_code == 0, ran.output
    assert "Input: scripts:gen.Generate?count=2 (2 test cases)" in ran.output
    report = json.loads((project / "out.json").read_text())
    assert report["metadata"]["input_file"] == "scripts:gen.Generate?count=2"
    garbage = invoke("-i", "agents:sim.writer?shape=garbage", "-n", "barista")
    assert garbage.exit_code == 2
    assert "the generator answered no JSON" in garbage.output
    invalid = invoke("-i", "agents:sim.writer?shape=invalid&count=2", "-n", "barista")
    assert invalid.exit_code == 2
    assert 'agents:sim.writer:1: assert[0]: unknown assertion type "contians"' in invalid.output
    assert "Traceback" not in garbage.output + invalid.output
    positional = invoke("barista", "agents:sim.writer?count=2", "--dry-run")
    assert positional.exit_code == 0 and "○ [barista-any-2]" in positional.output
    json_dry = invoke("-i", "agents:sim.writer?count=1", "-n", "barista", "--dry-run", "--json")
    (event,) = [json.loads(line) for line in json_dry.output.splitlines()]
    assert event["type"] == "dry_run_case" and event["case"]["id"] == "barista-any-1"


# --- script tests -------------------------------------------------------------------------


def test_script_tests_by_option_and_by_path_with_run_filter(project):
    ok = invoke("barista", "--scripts", "checks", "--run", "OrderTool|Memory", "-o", "s.json")
    assert ok.exit_code == 0, ok.output
    assert "Script Test" in ok.output
    assert "Script: assistants/barista/src/checks_test.py (11 test functions)" in ok.output
    assert "► [TestOrderTool] PASSED" in ok.output
    assert 'Filter: "OrderTool|Memory" (2 test cases match)' in ok.output
    report = json.loads((project / "s.json").read_text())
    assert [r["id"] for r in report["results"]] == ["TestOrderTool", "TestMemory"]
    raised = invoke("-i", "scripts.barista.checks", "--run", "Raises|Fatal|Skipped", "-o", "r.md")
    assert raised.exit_code == 1
    assert "► [TestRaises] ERROR" in raised.output
    assert "► [TestSkipped] SKIPPED" in raised.output
    markdown = (project / "r.md").read_text()
    assert (
        "ValueError: bad value 42" in markdown and "Traceback (most recent call last)" in markdown
    )
    short = invoke("barista", "-s", "checks", "--run", "OrderTool", "--json", "-o", "j.json")
    kinds = [json.loads(line)["type"] for line in short.output.splitlines()]
    assert [k for k in kinds if k.startswith("test_")] == ["test_start", "test_result"]


def test_script_test_usage_errors(project):
    nomatch = invoke("barista", "--scripts", "checks", "--run", "Nothing")
    assert nomatch.exit_code == 2 and "no test cases match" in nomatch.output
    missing = invoke("barista", "--scripts", "nothere")
    assert missing.exit_code == 2 and "test file not found" in missing.output
    both = invoke("barista", "hello", "--scripts", "checks")
    assert both.exit_code == 2 and "not both" in both.output
    nowhere = invoke("-i", "scripts.nobody.checks")
    assert nowhere.exit_code == 2 and "no assistant package found" in nowhere.output


# --- the bundled examples -----------------------------------------------------------------


@pytest.fixture
def examples(tmp_path, monkeypatch):
    """Run from a scratch folder against the repository's assistants (nothing written there)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AGENT_ROOT", raising=False)
    return tmp_path


def example(*args: str):
    return invoke(*args, "--root", str(EXAMPLES))


def test_example_dynamic_cases(examples):
    coffee = example("coffee", f"@{EXAMPLES}/coffee/tests/dynamic.jsonl", "-v", "-o", "c.json")
    assert coffee.exit_code == 0, coffee.output
    assert "► [coffee-order] (dynamic, 3 checkpoints)" in coffee.output
    assert "  │   ✓ checkpoint: confirm" in coffee.output
    gives_up = example("coffee", f"@{EXAMPLES}/coffee/tests/gives-up.jsonl", "-o", "g.json")
    assert gives_up.exit_code == 1
    assert "the simulator declared the goal achieved" in gives_up.output
    expense = example("expense", f"@{EXAMPLES}/expense/tests/dynamic.jsonl", "-o", "e.json")
    assert expense.exit_code == 0, expense.output
    report = json.loads((examples / "e.json").read_text())
    optional = {c["id"]: c for c in report["results"][0]["checkpoints"]}["suggest-category"]
    assert optional["required"] is False


def test_example_script_tests_and_generator(examples):
    scripts = example("-i", "scripts.expense.setup", "-o", "s.json")
    assert scripts.exit_code == 0, scripts.output
    report = json.loads((examples / "s.json").read_text())
    assert "TestWithAgentAssertion" in [r["id"] for r in report["results"]]
    generated = example(
        "-i",
        "agents:tests.generator-agent?count=5",
        "-n",
        "expense",
        "--dry-run",
        "-o",
        "gen.jsonl",
    )
    assert generated.exit_code == 0, generated.output
    assert len((examples / "gen.jsonl").read_text().splitlines()) == 5
    ran = example("expense", f"@{examples}/gen.jsonl", "-o", "out.json")
    assert ran.exit_code == 0, ran.output

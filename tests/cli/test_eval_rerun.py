"""``agent eval`` end to end for issue 16's re-run items: ``--last-failed`` / ``--rerun``, the
recap at the end of every run (``summary.failures`` under ``--json``), failure attribution
with ``--retries``, ``--runs auto`` and the preflight of what cases reference."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agentcli.eval.reports import read_results
from tests.cli.test_eval import invoke, write_cases

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures" / "assistants"


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project with the probe, sim, flaky and dice fixtures; cwd is the project."""
    for name in ("probe", "sim", "flaky", "dice"):
        shutil.copytree(FIXTURES / name, tmp_path / "assistants" / name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PROBE_LOG", str(tmp_path / "hooks.log"))
    monkeypatch.delenv("AGENT_ROOT", raising=False)
    return tmp_path


def outputs(folder: Path) -> list[Path]:
    return sorted(folder.glob("output-*.jsonl"))


# --- --last-failed and --rerun ---------------------------------------------------------------

MIXED = [
    {"id": "hello", "input": "hello", "assert": {"type": "contains", "value": "Hello"}},
    {"id": "wrong", "input": "add 2 3", "assert": {"type": "contains", "value": "sum=6"}},
    {
        "id": "json",
        "input": "json",
        "assert": {"type": "json_path", "path": "city", "value": "Paris"},
    },
]


def test_last_failed_reruns_only_the_failures_of_the_newest_results_into_a_fresh_file(project):
    cases = write_cases(project / "suite" / "cases.jsonl", MIXED)
    first = invoke("probe", f"@{cases}")
    assert first.exit_code == 1
    (earlier,) = outputs(cases.parent)
    # The case is fixed; only it runs again, and the fresh file holds every case.
    fixed = [*MIXED]
    fixed[1] = {**MIXED[1], "assert": {"type": "contains", "value": "sum=5"}}
    write_cases(cases, fixed)
    again = invoke("probe", f"@{cases}", "--last-failed")
    assert again.exit_code == 0, again.output
    assert f"Re-run: 1 failed case of {earlier} (2 results of the others kept)" in again.output
    assert "► [wrong]" in again.output and "► [hello]" not in again.output
    fresh = [path for path in outputs(cases.parent) if path != earlier]
    assert len(fresh) == 1
    merged = read_results(fresh[0])
    assert [(r.id, r.status) for r in merged.results] == [
        ("hello", "passed"),
        ("json", "passed"),
        ("wrong", "passed"),
    ]
    assert (merged.summary.total, merged.summary.passed) == (3, 3)
    assert merged.header.metadata["options"]["rerun"] == str(earlier)
    assert read_results(earlier).summary.failed == 1  # the earlier file is left as it was
    # Nothing failed in the newest file now: nothing to run, and no new file.
    calm = invoke("probe", f"@{cases}", "--last-failed")
    assert calm.exit_code == 0
    assert f"No failed cases in {fresh[0]}: nothing to re-run" in calm.output
    assert len(outputs(cases.parent)) == 2


def test_rerun_names_the_results_file_and_keeps_its_failures_when_they_fail_again(project):
    cases = write_cases(project / "cases.jsonl", MIXED)
    assert invoke("probe", "@cases.jsonl", "-o", "base.jsonl").exit_code == 1
    again = invoke("probe", "@cases.jsonl", "--rerun", "base.jsonl", "-o", "again.jsonl")
    assert again.exit_code == 1
    rerun = read_results(project / "again.jsonl")
    assert [r.id for r in rerun.results] == ["hello", "json", "wrong"]
    assert rerun.results[2].attempts is None and rerun.results[2].attribution == "agent"
    assert cases.exists()


def test_rerun_and_last_failed_refuse_what_they_cannot_do(project):
    write_cases(project / "cases.jsonl", MIXED)
    none_yet = invoke("probe", "@cases.jsonl", "--last-failed")
    assert none_yet.exit_code == 2
    assert "--last-failed: no results file (output-*.jsonl) beside cases.jsonl" in none_yet.output
    missing = invoke("probe", "@cases.jsonl", "--rerun", "gone.jsonl")
    assert missing.exit_code == 2 and "--rerun gone.jsonl: no such results file" in missing.output
    assert invoke("probe", "@cases.jsonl", "-o", "base.jsonl").exit_code == 1
    both = invoke("probe", "@cases.jsonl", "--rerun", "base.jsonl", "--resume", "base.jsonl")
    assert both.exit_code == 2 and "give --rerun or --resume, not both" in both.output
    over = invoke("probe", "@cases.jsonl", "--rerun", "base.jsonl", "-o", "base.jsonl")
    assert over.exit_code == 2  # the file it re-runs is an input: never written over
    write_cases(project / "other.jsonl", [MIXED[0]])
    elsewhere = invoke("probe", "@other.jsonl", "--rerun", "base.jsonl")
    assert elsewhere.exit_code == 2
    assert "none of the 1 failed case of base.jsonl is in this case file" in elsewhere.output


# --- the recap and summary.failures ----------------------------------------------------------


def test_every_run_ends_with_a_recap_of_what_did_not_pass(project):
    write_cases(project / "cases.jsonl", MIXED)
    result = invoke("probe", "@cases.jsonl", "-o", "out.jsonl")
    lines = result.output.splitlines()
    start = lines.index("  Short Summary: 1 failing case (1 agent)")
    assert lines[start + 2] == '  FAILED  [wrong] agent: expected output to contain "sum=6"'
    assert lines.index("  Summary") < start < lines.index("  ❌ TESTS FAILED")
    passing = invoke("probe", "@cases.jsonl", "--run", "hello", "-o", "ok.jsonl")
    assert "Short Summary" not in passing.output


def test_json_summary_lists_the_failures(project):
    write_cases(project / "cases.jsonl", MIXED)
    result = invoke("probe", "@cases.jsonl", "--json", "-o", "out.jsonl")
    events = [json.loads(line) for line in result.stdout.splitlines()]
    (summary,) = [e for e in events if e["type"] == "summary"]
    assert summary["failures"] == [
        {
            "id": "wrong",
            "status": "failed",
            "reason": 'expected output to contain "sum=6"',
            "attribution": "agent",
        }
    ]
    assert summary["attribution"] == {"agent": 1}


# --- failure attribution and --retries -------------------------------------------------------


def _dynamic(case_id: str, **sim) -> dict:
    return {
        "id": case_id,
        "input": "I want a coffee",
        "simulator": {"use": "sim.user", "options": {"metadata": sim}},
        "checkpoints": [{"id": "never", "assert": {"type": "contains", "value": "unsaid"}}],
        "max_turns": 3,
    }


CLASSES = [
    {"id": "agent", "input": "hello", "assert": {"type": "contains", "value": "Goodbye"}},
    {
        "id": "judge",
        "input": "hello",
        "assert": {"type": "agent", "use": "agents:sim.judge", "value": "explode"},
    },
    {"id": "infra", "input": "sleep 5", "timeout": "300ms"},
    {"id": "harness", "input": "hello", "before": "env_test.BeforeFails"},
    {
        "id": "script",
        "input": "hello",
        "assert": {"type": "script", "script": "env_test.BeforeFails"},
    },
    _dynamic("simulator", style="error"),
    _dynamic("gave_up", give_up_at=2),
    _dynamic("no_goal"),
]


def test_each_failure_is_attributed_and_retries_rerun_only_infra_and_judge(project):
    write_cases(project / "cases.jsonl", CLASSES)
    result = invoke("probe", "@cases.jsonl", "--retries", "1", "-o", "out.jsonl")
    assert result.exit_code == 1
    loaded = read_results(project / "out.jsonl")
    assert [(r.id, r.status, r.attribution, r.attempts) for r in loaded.results] == [
        ("agent", "failed", "agent", None),
        ("judge", "failed", "judge", 2),
        ("infra", "timeout", "infra", 2),
        ("harness", "error", "harness", None),
        ("script", "failed", "harness", None),
        ("simulator", "error", "simulator", None),
        ("gave_up", "failed", "simulator", None),
        ("no_goal", "failed", "agent", None),
    ]
    assert loaded.summary.extra["attribution"] == {
        "agent": 2,
        "simulator": 2,
        "judge": 1,
        "infra": 1,
        "harness": 2,
    }
    assert (
        "  Short Summary: 8 failing cases (2 agent, 2 simulator, 1 judge, 1 infra, 2 harness)"
        in (result.output.splitlines())
    )


def test_a_provider_error_is_infra_and_retried(project):
    write_cases(project / "cases.jsonl", [{"id": "x", "input": "once"}])
    result = invoke("flaky", "@cases.jsonl", "-o", "out.jsonl")
    (failed,) = read_results(project / "out.jsonl").results
    assert (failed.status, failed.attribution) == ("error", "infra")
    assert "  ERROR   [x] infra: [provider_error] upstream hiccup" in result.output.splitlines()
    write_cases(project / "cases.jsonl", [{"id": "x", "input": "twice"}])
    again = invoke("flaky", "@cases.jsonl", "--retries", "1", "-o", "again.jsonl")
    assert again.exit_code == 0
    lines = again.output.splitlines()
    # The attempt that was retried is a warning, not an ERROR line; the case shows once.
    assert not [line for line in lines if "ERROR" in line], again.output
    assert [line for line in lines if line.startswith("► [x]")] == [
        next(line for line in lines if line.startswith("► [x]") and "PASSED" in line)
    ]
    assert any("retrying [x] (attempt 2/2)" in line for line in lines)


def test_results_without_a_failure_carry_no_attribution(project):
    write_cases(project / "cases.jsonl", MIXED[:1])
    assert invoke("probe", "@cases.jsonl", "-o", "out.jsonl").exit_code == 0
    line = (project / "out.jsonl").read_text().splitlines()[1]
    assert '"attribution"' not in line


# --- --runs auto ------------------------------------------------------------------------------

DICE = [
    {"id": "stable", "input": "pass 100% #1", "assert": {"type": "equals", "value": "pass"}},
    {"id": "flaky", "input": "pass 60% #1", "assert": {"type": "equals", "value": "pass"}},
]


def test_runs_auto_decides_a_stable_case_in_the_minimum_and_spends_more_on_a_flaky_one(project):
    write_cases(project / "dice.jsonl", DICE)
    result = invoke(
        "dice", "@dice.jsonl", "--runs", "auto", "--min-pass-rate", "60", "-o", "a.jsonl"
    )
    loaded = read_results(project / "a.jsonl")
    runs = {s["id"]: s["runs"] for s in loaded.stability_results}
    assert runs["stable"] == 5  # the fewest runs in which a pass can be decided against 60%
    assert runs["flaky"] > 5
    adaptive = loaded.summary.extra["adaptive"]
    assert adaptive["min_runs"] == 5 and adaptive["max_runs"] == 10
    assert adaptive["runs_used"] == runs["stable"] + runs["flaky"]
    assert adaptive["saved_runs"] == 20 - adaptive["runs_used"]
    assert loaded.header.metadata["options"]["runs"] == "auto"
    assert "    Runs/Case:       auto (5-10)" in result.output.splitlines()
    assert f"    Saved:           {adaptive['saved_runs']} of 20 runs" in result.output


def test_runs_auto_defaults_to_an_80_percent_bar_and_gives_the_verdict_of_fixed_runs(project):
    write_cases(project / "dice.jsonl", DICE)
    auto = invoke("dice", "@dice.jsonl", "--runs", "auto", "-o", "auto.jsonl")
    fixed = invoke("dice", "@dice.jsonl", "--runs", "10", "--min-pass-rate", "80", "-o", "f.jsonl")
    assert auto.exit_code == fixed.exit_code == 1
    below = read_results(project / "auto.jsonl").summary.extra["cases_below_threshold"]
    assert below == read_results(project / "f.jsonl").summary.extra["cases_below_threshold"]
    assert below == ["flaky"]
    assert "Runs: auto, 7-10 per test case" in auto.output


def test_runs_auto_refuses_what_it_cannot_mean(project):
    write_cases(project / "dice.jsonl", DICE)
    bad = invoke("dice", "@dice.jsonl", "--runs", "often")
    assert bad.exit_code == 2 and "--runs 'often': give a whole number of runs" in bad.output
    alone = invoke("dice", "@dice.jsonl", "--max-runs", "5")
    assert alone.exit_code == 2 and "--max-runs 5 needs --runs auto" in alone.output


# --- preflight ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("case", "message"),
    [
        (
            {
                "id": "j",
                "input": "hi",
                "assert": {"type": "agent", "use": "agents:sim.jduge", "value": "x"},
            },
            "cases.jsonl:2: case j: judge 'sim.jduge': ",
        ),
        (
            {
                "id": "k",
                "input": "hi",
                "assert": {
                    "type": "agent",
                    "use": "agents:sim.judge",
                    "value": "x",
                    "options": {"connector": "nowhere"},
                },
            },
            "cases.jsonl:2: case k: judge 'sim.judge': unknown connector 'nowhere'",
        ),
        (
            {"id": "s", "input": "hi", "assert": {"type": "script", "script": "env_test.Chekc"}},
            "cases.jsonl:2: case s: script assertion 'env_test.Chekc': src/env_test.py has no "
            "function 'Chekc'",
        ),
        (
            {"id": "c", "input": "hi", "options": {"connector": "nowhere"}},
            "cases.jsonl:2: case c: connector 'nowhere': unknown connector 'nowhere'",
        ),
    ],
)
def test_preflight_names_the_case_and_its_line_before_anything_runs(project, case, message):
    write_cases(project / "cases.jsonl", [MIXED[0], case])
    result = invoke("probe", "@cases.jsonl", "-o", "out.jsonl")
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"error: {message}"), result.output
    assert not (project / "out.jsonl").exists()
    assert not (project / "hooks.log").exists()

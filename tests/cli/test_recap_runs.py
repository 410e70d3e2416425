"""The recap under ``--runs`` end to end, on the offline ``scripted`` model: a case whose runs
met ``--min-pass-rate`` is not listed as failing (it is ``FLAKY``), so the recap, the
``--json`` summary, ``agent report``, the exit code and ``--rerun`` agree on what failed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcli.cli.main import _register, app

_register()  # the commands, as `agent` registers them on start
runner = CliRunner()
RULE1 = "─" * 63

# Each rule's replies are used in turn, one per run: "half" passes 3 of 5, "fifth" 4 of 5.
SCRIPTED = """\
rules:
  - when: {user: "half"}
    say: ["good", "bad", "good", "bad", "good"]
  - when: {user: "fifth"}
    say: ["good", "good", "good", "good", "bad"]
  - say: "good"
"""
CASES = [
    {"id": case, "input": case, "assert": {"type": "contains", "value": "good"}}
    for case in ("half", "fifth", "steady")
]
REASON = 'agent: expected output to contain "good"'


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    package = tmp_path / "assistants" / "flaky"
    package.mkdir(parents=True)
    (package / "package.yao").write_text('{"name": "Flaky", "connector": "scripted"}\n')
    (package / "scripted.yml").write_text(SCRIPTED)
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(case) + "\n" for case in CASES))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AGENT_ROOT", raising=False)
    return tmp_path


def agent(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


def recap_lines(output: str) -> list[str]:
    """The recap: from the rule above ``Short Summary`` to the line before the next blank."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("  Short Summary")) - 1
    end = lines.index("", start)
    return lines[start:end]


def test_cases_that_met_the_bar_are_flaky_not_failing_and_the_run_passes(project):
    result = agent("eval", "flaky", "@cases.jsonl", "--runs", "5", "--min-pass-rate", "60",
                   "-o", "r60.jsonl")  # fmt: skip
    assert result.exit_code == 0, result.output
    expected = [
        RULE1,
        "  Short Summary: 0 failing cases, 2 flaky (met --min-pass-rate 60%)",
        RULE1,
        f"  FLAKY   [half] (runs 2, 4 failed) {REASON}",
        f"  FLAKY   [fifth] (run 5 failed) {REASON}",
    ]
    assert recap_lines(result.output) == expected
    assert all(len(line) <= 80 for line in expected)
    assert "✨ ALL TESTS PASSED ✨" in result.output
    # `agent report` tells the same of the file, and --rerun finds nothing failed in it
    assert recap_lines(agent("report", "r60.jsonl").output) == expected
    rerun = agent("eval", "flaky", "@cases.jsonl", "--rerun", "r60.jsonl", "-o", "again.jsonl")
    assert "No failed cases in r60.jsonl: nothing to re-run" in rerun.output


def test_a_case_below_the_bar_fails_and_one_at_the_bar_is_flaky(project):
    result = agent("eval", "flaky", "@cases.jsonl", "--runs", "5", "--min-pass-rate", "80",
                   "-o", "r80.jsonl")  # fmt: skip
    assert result.exit_code == 1
    expected = [
        RULE1,
        "  Short Summary: 1 failing case (1 agent), 1 flaky (met --min-pass-rate 80%)",
        RULE1,
        f"  FAILED  [half] (runs 2, 4) {REASON}",
        f"  FLAKY   [fifth] (run 5 failed) {REASON}",
    ]
    assert recap_lines(result.output) == expected
    assert all(len(line) <= 80 for line in expected)
    assert "    Below 80%:       half" in result.output
    assert recap_lines(agent("report", "r80.jsonl").output) == expected


def test_json_summary_failures_are_the_cases_below_the_bar_and_flaky_the_others(project):
    result = agent("eval", "flaky", "@cases.jsonl", "--runs", "5", "--min-pass-rate", "80",
                   "--json", "-o", "r80.jsonl")  # fmt: skip
    events = [json.loads(line) for line in result.stdout.splitlines()]
    (summary,) = [event for event in events if event["type"] == "summary"]
    failure = {"status": "failed", "reason": REASON[7:], "attribution": "agent"}
    assert summary["failures"] == [{"id": "half", **failure, "runs": [2, 4]}]
    assert summary["cases_below_threshold"] == ["half"]
    assert summary["flaky"] == [{"id": "fifth", **failure, "runs": [5]}]
    at_60 = agent("eval", "flaky", "@cases.jsonl", "--runs", "5", "--min-pass-rate", "60",
                  "--json", "-o", "r60.jsonl")  # fmt: skip
    (summary,) = [json.loads(line) for line in at_60.stdout.splitlines() if '"summary"' in line]
    assert summary["failures"] == [] and summary["cases_below_threshold"] == []
    assert [flaky["id"] for flaky in summary["flaky"]] == ["half", "fifth"]
    assert at_60.exit_code == 0


def test_a_run_without_failed_runs_has_no_flaky_key_and_no_recap(project):
    result = agent("eval", "flaky", "@cases.jsonl", "--run", "steady", "--runs", "3", "--json",
                   "-o", "ok.jsonl")  # fmt: skip
    (summary,) = [json.loads(line) for line in result.stdout.splitlines() if '"summary"' in line]
    assert summary["failures"] == [] and "flaky" not in summary
    assert "Short Summary" not in agent("report", "ok.jsonl").output

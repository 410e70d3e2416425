"""Every bundled example assistant passes its own eval cases offline, and its deliberately
failing file fails (exit 1): what the README promises a new user."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcli.cli.main import _register, app

ROOT = Path(__file__).resolve().parents[1]
_register()
EXAMPLES = sorted(
    p.relative_to(ROOT)
    for p in (ROOT / "assistants").rglob("tests/*.jsonl")
    if not p.name.startswith("output-") and p.name not in ("failing.jsonl", "gives-up.jsonl")
)


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))


def test_examples_are_found():
    names = {str(p) for p in EXAMPLES}
    assert {
        "assistants/expense/tests/inputs.jsonl",
        "assistants/expense/tests/trajectory.jsonl",
        "assistants/expense/tests/world.jsonl",
        "assistants/weather/tests/inputs.jsonl",
        "assistants/helpdesk/tests/inputs.jsonl",
    } <= names
    assert len(EXAMPLES) >= 6


@pytest.mark.parametrize("cases", EXAMPLES, ids=str)
def test_example_cases_pass_offline(cases, tmp_path):
    out = tmp_path / "results.jsonl"
    result = CliRunner().invoke(app, ["eval", "-i", str(cases), "-o", str(out)])
    assert result.exit_code == 0, result.output
    summary = json.loads(out.read_text().splitlines()[-1])
    assert summary["type"] == "summary" and summary["failed"] == summary["errors"] == 0
    assert summary["passed"] >= 1


@pytest.mark.parametrize(
    "cases",
    [
        "assistants/expense/tests/failing.jsonl",
        "assistants/keyword/tests/failing.jsonl",
        "assistants/coffee/tests/gives-up.jsonl",
        "assistants/shop/tests/failing.jsonl",
    ],
)
def test_failing_demos_fail(cases, tmp_path):
    result = CliRunner().invoke(app, ["eval", "-i", cases, "-o", str(tmp_path / "r.jsonl")])
    assert result.exit_code == 1, result.output
    assert "❌ TESTS FAILED" in result.output

"""A package's search settings that every case's search would fail on are bad input before
the first case: exit 2 at the package.yao line, no results file."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcli.cli.main import _register, app

ASSISTANTS = Path(__file__).resolve().parents[3] / "assistants"

_register()


@pytest.mark.parametrize(
    ("setting", "said"),
    [
        ('"db": {"models": ["nope"]}', "db.models names 'nope', but the package has no data"),
        ('"kb": {"collections": ["faq"], "embedding": "nosuchconn"}', "kb.embedding 'nosuchconn'"),
    ],
)
def test_a_search_setting_no_case_could_use_stops_the_run_before_it_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str, said: str
) -> None:
    # each case errored ("assistant 'hd' has no data models", "unknown connector") instead
    package = shutil.copytree(ASSISTANTS / "helpdesk", tmp_path / "assistants" / "hd")
    file = package / "package.yao"
    text = file.read_text()
    if setting.startswith('"kb"'):
        start = text.index('"kb":')
        text = text[:start] + text[text.index("\n", start) + 1 :]  # the shipped kb line
    file.write_text(text.replace('"name":', f'{setting},\n  "name":', 1))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    cases = "assistants/hd/tests/inputs.jsonl"
    result = CliRunner().invoke(app, ["eval", "hd", f"@{cases}", "-o", "out.jsonl"])
    assert result.exit_code == 2, result.output
    assert f"{file}:" in result.output and said in result.output
    assert not (tmp_path / "out.jsonl").exists()

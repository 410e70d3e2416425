"""``/save``: what a chat saves is a case that checks the behaviour it saw, so it fails
when that behaviour changes (a case with no assertions would always pass)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcli.cli.chat import save_case
from agentcli.cli.main import _register, app
from agentcli.errors import ConfigError

_register()
runner = CliRunner()

HISTORY = [
    {"role": "user", "content": "hi"},
    {"role": "assistant", "content": "Hello!"},
    {"role": "user", "content": "Where is order A-1001?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "orders__order_status", "arguments": '{"order_id": "A-1001"}'},
            },
            {"id": "c2", "type": "function", "function": {"name": "ping", "arguments": "{}"}},
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": '{"found": true}'},
    {"role": "tool", "tool_call_id": "c2", "content": "pong"},
    {"role": "assistant", "content": "Order A-1001 has shipped.\nAnything else?"},
]


def test_save_case_asserts_the_tool_calls_and_the_answer_of_the_last_turn(tmp_path: Path):
    path = tmp_path / "saved.jsonl"
    assert save_case(HISTORY, path, case_id="s-1", about="saved") == "s-1"
    assert save_case(HISTORY[:2], path, case_id="s-1", about="saved") == "s-1-2"
    first, second = (json.loads(line) for line in path.read_text().splitlines())
    assert first == {
        "id": "s-1",
        "description": "saved",
        "input": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "Hello!"},
            {"role": "user", "content": "Where is order A-1001?"},
        ],
        "assert": [
            {
                "type": "trajectory",
                "value": [
                    {"name": "order_status", "arguments": {"order_id": "A-1001"}},
                    {"name": "ping"},
                ],
            },
            {"type": "contains", "value": "Order A-1001 has shipped."},
        ],
    }
    assert second["input"] == "hi"
    assert second["assert"] == [
        {"type": "trajectory", "value": []},
        {"type": "contains", "value": "Hello!"},
    ]


def test_a_long_answer_is_asserted_by_its_start_cut_at_a_word(tmp_path: Path):
    answer = "word " * 60
    path = tmp_path / "saved.jsonl"
    save_case(
        [{"role": "user", "content": "q"}, {"role": "assistant", "content": answer}],
        path,
        case_id="x",
        about="",
    )
    (contains,) = [a for a in json.loads(path.read_text())["assert"] if a["type"] == "contains"]
    assert contains["value"] == ("word " * 24).strip()
    assert answer.startswith(contains["value"])


def test_nothing_said_is_an_error(tmp_path: Path):
    with pytest.raises(ConfigError, match="nothing to save yet"):
        save_case([], tmp_path / "x.jsonl", case_id="x", about="")


def test_a_saved_case_passes_as_saved_and_fails_once_the_behaviour_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AGENT_ROOT", raising=False)
    assert runner.invoke(app, ["init", "desk"]).exit_code == 0
    chat = runner.invoke(
        app, ["run", "desk", "--chat"], input="Where is order A-1001?\n/save saved.jsonl\n"
    )
    assert chat.exit_code == 0, chat.output
    same = runner.invoke(app, ["eval", "desk", "@saved.jsonl", "-o", "a.json"])
    assert same.exit_code == 0, same.output
    rules = tmp_path / "desk" / "scripted.yml"
    rules.write_text(rules.read_text().replace("{{ match.order | upper }}", "A-1002"))
    changed = runner.invoke(app, ["eval", "desk", "@saved.jsonl", "-o", "b.json"])
    assert changed.exit_code == 1, changed.output
    (result,) = json.loads((tmp_path / "b.json").read_text())["results"]
    assert [a["passed"] for a in result["assertions"]] == [False, False]

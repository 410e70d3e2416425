"""The results reader: a case file given where results are expected is named as one, with
the command that turns it into results (not a JSON parser's "Extra data")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.errors import AgentCliError
from agentcli.eval.results.reader import parse_results


@pytest.mark.parametrize(
    "text",
    [
        '{"id": "a", "input": "hi", "assert": {"type": "contains", "value": "x"}}\n{"id": "b"}\n',
        '// my cases\n\n{"id": "a", "input": "hi"}\n',
        '{"id": "d", "checkpoints": [{"id": "c", "assert": {"type": "contains", "value": "x"}}]}\n',
    ],
)
def test_a_case_file_is_named_as_one(text: str) -> None:
    with pytest.raises(AgentCliError) as caught:
        parse_results(Path("cases.jsonl"), text)
    assert (
        caught.value.message
        == "cases.jsonl: this is a case file (cases to run), not a results file"
    )
    assert (
        caught.value.hint is not None and "agent eval ASSISTANT @cases.jsonl" in caught.value.hint
    )


def test_other_text_still_says_where_the_json_breaks() -> None:
    with pytest.raises(AgentCliError) as caught:
        parse_results(Path("notes.jsonl"), '{"id": "a"}\n{"id": "b"}\n')
    assert "notes.jsonl:2:1: not a results file: invalid JSON (Extra data)" in str(caught.value)


def test_a_result_held_twice_is_read_twice_with_a_warning_naming_both_lines(tmp_path):
    lines = [
        {"type": "header", "metadata": {"agent_id": "a"}},
        {"type": "result", "id": "x", "status": "passed", "run": 1},
        {"type": "result", "id": "x", "status": "passed", "run": 2},  # another run: no repeat
        {"type": "result", "id": "x", "status": "failed", "run": 1},
        {"type": "summary", "total": 2, "passed": 2},
    ]
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    loaded = parse_results(path, path.read_text(encoding="utf-8"))
    assert [r.status for r in loaded.results] == ["passed", "passed", "failed"]
    assert loaded.warnings == [
        f"{path}:4: result 'x' (run 1) is in the file twice (first at {path}:2)"
    ]

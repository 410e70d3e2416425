"""A case's `tools` (stubs, unmatched, faults) and a case file's `defaults` item: read into
typed values, every mistake a `file:line` problem with a did-you-mean where one helps."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentcli.errors import CaseFileError, ConfigError
from agentcli.eval.cases.load import open_cases
from agentcli.eval.cases.world import CaseTools, ToolStub
from agentcli.faults import FaultPlan, parse_faults


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    """Problems name the file relative to the current directory."""
    monkeypatch.chdir(tmp_path)


def write(tmp_path: Path, *items: dict[str, Any]) -> Path:
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(item) + "\n" for item in items))
    return path


def problems(tmp_path: Path, *items: dict[str, Any]) -> list[str]:
    with pytest.raises(CaseFileError) as caught:
        open_cases(write(tmp_path, *items), project_root=tmp_path)
    return caught.value.problems


def case(tools: Any, **more: Any) -> dict[str, Any]:
    return {"id": "c", "input": "hi", "tools": tools, **more}


def test_tools_are_read_into_typed_values(tmp_path):
    tools = {
        "stubs": [
            {"name": "get_forecast", "arguments": {"city": "regex:^P"}, "result": {"t": 1}},
            {"name": "list_cities", "error": "down", "delay": "250ms", "once": True},
        ],
        "unmatched": "error",
        "faults": {"rate": 0.25, "kinds": ["timeout"], "seed": 9},
    }
    [parsed] = open_cases(write(tmp_path, case(tools)), project_root=tmp_path)
    assert parsed.tools == CaseTools(
        stubs=(
            ToolStub("get_forecast", {"city": "regex:^P"}, True, {"t": 1}),
            ToolStub("list_cities", error="down", delay=0.25, once=True),
        ),
        unmatched="error",
        faults=FaultPlan(0.25, ("timeout",), 9),
    )
    assert parsed.to_dict()["tools"]["faults"] == {"rate": 0.25, "kinds": ["timeout"], "seed": 9}


def test_the_files_defaults_apply_to_every_case_under_its_own(tmp_path):
    defaults = {"defaults": {"tools": {"stubs": [{"name": "b", "result": 2}], "unmatched": "error",
                                       "faults": "rate=0.5,seed=3"}}}  # fmt: skip
    own = case({"stubs": [{"name": "a", "result": 1}], "unmatched": "run"})
    plain = {"id": "p", "input": "hi"}
    first, second = open_cases(write(tmp_path, defaults, own, plain), project_root=tmp_path)
    assert [s.name for s in first.tools.stubs] == ["a", "b"]  # the case's stubs first
    assert first.tools.unmatched == "run" and first.tools.faults == FaultPlan(0.5, seed=3)
    assert second.tools.unmatched == "error" and [s.name for s in second.tools.stubs] == ["b"]


def test_defaults_are_streamed_too(tmp_path, monkeypatch):
    from agentcli.eval.cases import load

    monkeypatch.setattr(load, "KEEP_PARSED", 1)
    defaults = {"defaults": {"tools": {"unmatched": "error"}}}
    cases = open_cases(
        write(tmp_path, defaults, {"id": "a", "input": "x"}, {"id": "b", "input": "y"}),
        project_root=tmp_path,
    )
    assert cases._cases is None
    assert [c.tools.unmatched for c in cases] == ["error", "error"]


@pytest.mark.parametrize(
    ("tools", "expected"),
    [
        ({"stub": []}, 'tools: unknown field "stub" (did you mean "stubs"?)'),
        ({"unmatched": "eror"}, 'tools.unmatched: must be one of "run", "error", got "eror" (did you mean "error"?)'),
        ({"stubs": [{"nme": "x"}]}, 'tools.stubs[0]: unknown field "nme" (did you mean "name"?)'),
        ({"stubs": [{"name": "x", "reslt": 1}]}, 'tools.stubs[0]: unknown field "reslt" (did you mean "result"?)'),
        ({"stubs": [{"name": "x", "result": 1, "error": "e"}]}, "tools.stubs[0]: a stub answers with result or error, not both"),
        ({"stubs": [{"name": "x", "delay": "soon"}]}, "tools.stubs[0].delay: invalid duration"),
        ({"stubs": [{"name": "x", "arguments": {"a": "regex:("}}]}, "tools.stubs[0].arguments: invalid regex"),
        ({"stubs": [{"name": "x", "arguments": {"a": {"$aprox": 1}}}]}, 'did you mean "$approx"?'),
        ({"faults": {"rate": 1.5}}, "tools.faults.rate: must be at most 1"),
        ({"faults": {"rate": 0.1, "kinds": ["timout"]}}, 'tools.faults.kinds[0]: must be one of "timeout", "error", "malformed", got "timout" (did you mean "timeout"?)'),
        ({"faults": {"rat": 0.1}}, 'tools.faults: unknown field "rat" (did you mean "rate"?)'),
        ({"faults": "rate=0.1,kinds=eror"}, "tools.faults: kinds: 'eror' is not one of timeout, error, malformed (did you mean \"error\"?)"),
    ],
)  # fmt: skip
def test_mistakes_in_tools_are_file_line_problems(tmp_path, tools, expected):
    found = problems(tmp_path, {"id": "a", "input": "x"}, case(tools))
    assert any(p.startswith("cases.jsonl:2: ") and expected in p for p in found), found


def test_a_typo_of_tools_is_caught(tmp_path):
    [found] = problems(tmp_path, {"id": "a", "input": "x", "tool": {}})
    assert found.endswith('unknown field "tool" (did you mean "tools"?)')


def test_mistakes_in_defaults_are_problems_of_their_line(tmp_path):
    found = problems(tmp_path, {"defaults": {"tool": {}}}, {"id": "a", "input": "x"})
    assert found == ['cases.jsonl:1: defaults: unknown field "tool" (did you mean "tools"?)']
    found = problems(tmp_path, {"defaults": {"tools": {"stubs": [{"name": "x", "result": 1,
                                                                   "error": "e"}]}}})  # fmt: skip
    assert found[0] == (
        "cases.jsonl:1: defaults.tools.stubs[0]: a stub answers with result or error, not both"
    )


def test_defaults_must_come_first(tmp_path):
    found = problems(tmp_path, {"id": "a", "input": "x"}, {"defaults": {}})
    assert found == ["cases.jsonl:2: defaults must be the file's first item (before every case)"]


@pytest.mark.parametrize(
    ("text", "plan"),
    [
        ("rate=0.2,kinds=timeout|error|malformed,seed=42", FaultPlan(0.2, seed=42)),
        ("rate=1", FaultPlan(1.0)),
        ("seed=3, rate=0.5 ,kinds=error", FaultPlan(0.5, ("error",), 3)),
    ],
)
def test_faults_text(text, plan):
    assert parse_faults(text) == plan
    assert parse_faults(str(plan)) == plan


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("rate=2", "rate must be a number from 0 to 1, got '2'"),
        ("rate=x", "rate must be a number from 0 to 1"),
        ("kinds=error", "rate is required"),
        ("rate=0.1,kind=error", "'kind=error' is not one of rate=, kinds=, seed="),
        ("rate=0.1,seed=1.5", "seed must be a whole number"),
        ("rate=0.1,kinds=slow", "'slow' is not one of timeout, error, malformed"),
    ],
)
def test_bad_faults_text_is_a_config_error(text, message):
    with pytest.raises(ConfigError, match="--faults") as caught:
        parse_faults(text)
    assert message in caught.value.message

"""The ``file`` assertion on a case's sandbox: exists / contains / regex / json_path, its
load-time rules, and the case file's ``sandbox`` field (checked, with did-you-mean)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from agentcli.errors import CaseFileError
from agentcli.eval.cases.model import Assertion
from agentcli.eval.cases.parse import parse_case
from agentcli.eval.checks.assertions import AssertionEnv, Subject, evaluate, validate_assertion


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "out.txt").write_text("total=5050\n")
    (work / "report.json").write_text(json.dumps({"passed": 2, "failed": [], "by": {"a": 1}}))
    os.symlink(tmp_path / "secret.txt", work / "link.txt")
    (tmp_path / "secret.txt").write_text("secret")
    return work


async def check(workdir: Path | None, **fields: Any) -> tuple[bool, str]:
    assertion = Assertion.from_obj({"type": "file", **fields})
    assert validate_assertion(assertion) is None
    [result] = await evaluate([assertion], Subject.of("", sandbox=workdir), AssertionEnv())
    return result.passed, result.message


@pytest.mark.parametrize(
    "fields, passed, message",
    [
        ({"path": "out.txt"}, True, 'file "out.txt" exists in the sandbox'),
        ({"path": "missing.txt"}, False, 'file "missing.txt" does not exist in the sandbox'),
        ({"path": "missing.txt", "exists": False}, True, 'file "missing.txt" does not exist'),
        ({"path": "out.txt", "exists": False}, False, 'file "out.txt" exists in the sandbox'),
        ({"path": "out.txt", "contains": "5050"}, True, 'file "out.txt" contains "5050"'),
        ({"path": "out.txt", "contains": "42"}, False, 'file "out.txt" does not contain "42"'),
        ({"path": "out.txt", "regex": r"^total=\d+$"}, True, "matches /^total=\\d+$/"),
        ({"path": "out.txt", "regex": "^x"}, False, 'file "out.txt" does not match /^x/'),
        ({"path": "report.json", "json_path": "$.passed", "value": 2}, True, "has $.passed = 2"),
        ({"path": "report.json", "json_path": "by.a", "value": 1}, True, "has $.by.a = 1"),
        ({"path": "report.json", "json_path": "failed"}, True, "has $.failed"),
        (
            {"path": "report.json", "json_path": "$.passed", "value": 3},
            False,
            'file "report.json" at $.passed: expected 3, got 2',
        ),
        ({"path": "report.json", "json_path": "$.nope"}, False, 'file "report.json" at $.nope'),
        ({"path": "out.txt", "json_path": "$.a"}, False, 'file "out.txt" at $.a'),
        (
            {"path": "out.txt", "contains": "total", "regex": "5050"},
            True,
            'contains "total" and matches /5050/',
        ),
    ],
)
async def test_file_checks(workdir: Path, fields: dict[str, Any], passed: bool, message: str):
    got_passed, got_message = await check(workdir, **fields)
    assert got_passed is passed
    assert message in got_message


async def test_a_symlink_out_of_the_sandbox_fails_without_reading_it(workdir: Path) -> None:
    passed, message = await check(workdir, path="link.txt", contains="secret")
    assert not passed
    assert "leads outside the workspace" in message and 'secret"' not in message


async def test_without_a_sandbox_the_assertion_says_so(workdir: Path) -> None:
    passed, message = await check(None, path="out.txt")
    assert (
        not passed
        and message == 'the case has no sandbox to look in (give it or its package a "sandbox")'
    )


async def test_negate_inverts_a_file_assertion(workdir: Path) -> None:
    assertion = Assertion.from_obj(
        {"type": "file", "path": "out.txt", "contains": "x", "negate": True}
    )
    [result] = await evaluate([assertion], Subject.of("", sandbox=workdir), AssertionEnv())
    assert result.passed


@pytest.mark.parametrize(
    "obj, problem",
    [
        ({"type": "file"}, 'file needs a "path" in the sandbox'),
        ({"type": "file", "path": "../x"}, 'file "path" must be relative'),
        ({"type": "file", "path": "/etc/passwd"}, 'file "path" must be relative'),
        ({"type": "file", "path": "a", "exists": False, "contains": "x"}, '"exists": false cannot'),
        ({"type": "file", "path": "a", "regex": "("}, "file: "),
        ({"type": "file", "path": "a", "json_path": "$[[["}, "file: invalid json_path"),
        ({"type": "file", "path": "a", "value": 3}, 'file: "value" is what "json_path" must equal'),
        ({"type": "contains", "value": "x", "contains": "y"}, '"contains" is only used by file'),
        ({"type": "equals", "value": 1, "exists": True}, '"exists" is only used by file'),
    ],
)
def test_load_time_rules(obj: dict[str, Any], problem: str) -> None:
    found = validate_assertion(Assertion.from_obj(obj))
    assert found is not None and problem in found


def parse_problems(obj: dict[str, Any], tmp_path: Path) -> list[str]:
    with pytest.raises(CaseFileError) as caught:
        parse_case(obj, source_file=tmp_path / "cases.jsonl", line=3, project_root=tmp_path)
    return [problem.split("cases.jsonl:3: ", 1)[1] for problem in caught.value.problems]


def test_case_sandbox_field_is_checked_with_did_you_mean(tmp_path: Path) -> None:
    base = {"id": "c", "input": "hi"}
    found = parse_problems({**base, "sandbox": {"tool": True}}, tmp_path)
    assert found == ['sandbox: unknown field "tool" (did you mean "tools"?)']
    found = parse_problems({**base, "sandbox": {"backend": "bwarp"}}, tmp_path)
    assert 'did you mean "bwrap"?' in found[0]
    found = parse_problems({**base, "sandbox": {"timeout": "soon"}}, tmp_path)
    assert found[0].startswith("sandbox.timeout: invalid duration")
    found = parse_problems({**base, "sandbox": {"files": {"a.py": 3}}}, tmp_path)
    assert "sandbox.files.a.py" in found[0] or "sandbox.files" in found[0]
    found = parse_problems(
        {**base, "assert": {"type": "file", "path": "a", "exist": True}}, tmp_path
    )
    assert 'unknown field "exist" (did you mean "exists"?)' in found[0]


def test_case_sandbox_parses_and_round_trips(tmp_path: Path) -> None:
    obj = {
        "id": "c",
        "input": "hi",
        "sandbox": {"backend": "bwrap", "timeout": "10s", "files": {"a.py": "print(1)"}},
        "assert": [{"type": "file", "path": "out.json", "json_path": "$.a", "value": 1}],
    }
    case = parse_case(obj, source_file=tmp_path / "c.jsonl", line=1, project_root=tmp_path)
    assert case.sandbox == obj["sandbox"]
    assert case.to_dict()["sandbox"] == obj["sandbox"]
    assert case.to_dict()["assert"] == obj["assert"]

"""Issue 13, item 1: a user regex with catastrophic backtracking never hangs a run.

Every place a user pattern meets text (a ``regex`` assertion, a ``regex:`` value in
``tool_result``, a dynamic checkpoint, a scripted rule's ``when.user``, ``--run``) is searched
with a time bound: ``agent eval`` runs as a real process and must end within its subprocess
timeout, with the case failed (or errored, for the model) and the reason in the results file.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from .harness import FIXTURES, agent, check_complete

TEXT = "a" * 50 + "!"  # 2**50 backtracking steps for (a+)+$ in Python's re
BACKTRACKING = "(a|aa)+$"  # catastrophic in every backtracking engine, regex included
SLOW = "took longer than 1s on 51 characters (catastrophic backtracking?)"
LIMIT = 20  # seconds: each run takes ~1-3 s; the old code never ended


def package(project: Path, name: str, rules: str) -> None:
    """``assistants/<name>``: the scripted model with ``rules`` and a ``pad`` tool giving TEXT."""
    folder = project / "assistants" / name
    (folder / "mcps").mkdir(parents=True)
    (folder / "src").mkdir()
    (folder / "package.yao").write_text(json.dumps({"name": name, "connector": "scripted"}))
    (folder / "scripted.yml").write_text(rules, encoding="utf-8")
    (folder / "mcps" / "pad.mcp.yao").write_text(
        json.dumps({"label": "Pad", "transport": "process", "tools": {"pad": "tools.Pad"}})
    )
    (folder / "src" / "tools.py").write_text(f"def Pad(args):\n    return {TEXT!r}\n")


ECHO_RULES = """rules:
  - when: {user: "^pad$"}
    call: {name: pad, arguments: {}}
  - when: {tool_result: pad}
    say: "padded"
  - say: "{{ user }}"
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with ``assistants/echoer`` (echoes, or calls ``pad``) and the simulators."""
    package(tmp_path, "echoer", ECHO_RULES)
    shutil.copytree(FIXTURES / "sim", tmp_path / "assistants" / "sim")
    return tmp_path


def write_cases(project: Path, *cases: dict[str, Any]) -> Path:
    path = project / "cases.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    return path


def run_eval(project: Path, *args: str) -> tuple[Any, dict[str, dict[str, Any]], float]:
    """``agent eval echoer @cases.jsonl -o out.jsonl ARGS``: (process, results by id, seconds)."""
    started = time.monotonic()
    done = agent(project, "eval", "echoer", "@cases.jsonl", "-o", "out.jsonl", *args, timeout=LIMIT)
    elapsed = time.monotonic() - started
    count = sum(1 for _ in (project / "cases.jsonl").open())
    outcome = check_complete(project / "out.jsonl", count)
    return done, {r.id: r.to_dict() for r in outcome.report.results}, elapsed


def messages(result: dict[str, Any]) -> str:
    """Every assertion message of a result (checkpoint turns included), one per line."""
    found = [a.get("message", "") for a in result.get("assertions") or []]
    for turn in result.get("turns") or []:
        found += [a.get("message", "") for a in turn.get("assertions") or []]
    return "\n".join(found)


def regex_case(case_id: str, pattern: str) -> dict[str, Any]:
    return {"id": case_id, "input": TEXT, "assert": {"type": "regex", "value": pattern}}


def test_a_backtracking_regex_assertion_fails_the_case_with_the_reason(project):
    write_cases(project, regex_case("slow", BACKTRACKING), regex_case("nested", "(a+)+$"))
    done, results, elapsed = run_eval(project)
    assert done.returncode == 1, done.stdout + done.stderr
    assert results["slow"]["status"] == "failed"
    reason = f'regex assertion error: regex "{BACKTRACKING}" {SLOW} — simplify the pattern'
    assert messages(results["slow"]) == reason
    assert reason in done.stdout
    # (a+)+$ is the example: the regex engine answers it at once, without a match.
    assert results["nested"]["status"] == "failed"
    assert messages(results["nested"]) == "expected output to match /(a+)+$/"
    assert elapsed < 15


def test_negate_does_not_turn_a_timed_out_regex_into_a_pass(project):
    case = regex_case("slow", BACKTRACKING)
    case["assert"]["negate"] = True
    write_cases(project, case)
    done, results, _ = run_eval(project)
    assert done.returncode == 1
    assert results["slow"]["status"] == "failed" and SLOW in messages(results["slow"])


def test_under_parallel_every_result_reaches_the_file(project):
    ok = {"id": "ok", "input": "hello", "assert": {"type": "regex", "value": "^hel+o$"}}
    write_cases(project, regex_case("slow", BACKTRACKING), ok)
    done, results, _ = run_eval(project, "--parallel", "2")
    assert done.returncode == 1, done.stdout + done.stderr
    assert results["ok"]["status"] == "passed"
    assert results["slow"]["status"] == "failed" and SLOW in messages(results["slow"])


def test_a_backtracking_tool_result_pattern_fails_the_case(project):
    expected = {"tool": "pad", "result": f"regex:{BACKTRACKING}"}
    write_cases(
        project,
        {"id": "tool", "input": "pad", "assert": {"type": "tool_result", "value": expected}},
    )
    done, results, _ = run_eval(project)
    assert done.returncode == 1, done.stdout + done.stderr
    assert results["tool"]["status"] == "failed"
    assert messages(results["tool"]).startswith("tool_result assertion error: regex")
    assert SLOW in messages(results["tool"])


def test_a_backtracking_checkpoint_fails_the_dynamic_case(project):
    case = {
        "id": "dyn",
        "input": TEXT,
        "simulator": {"use": "sim.user", "options": {"metadata": {"default": "again"}}},
        "checkpoints": [{"id": "echo", "assert": {"type": "regex", "value": BACKTRACKING}}],
        "max_turns": 1,
    }
    write_cases(project, case)
    done, results, _ = run_eval(project)
    assert done.returncode == 1, done.stdout + done.stderr
    assert results["dyn"]["status"] == "failed"
    (checkpoint,) = results["dyn"]["checkpoints"]
    assert checkpoint["reached"] is False
    assert checkpoint["message"].startswith(f'regex assertion error: regex "{BACKTRACKING}" {SLOW}')


def test_a_backtracking_scripted_rule_errors_that_case_only(project):
    package(project, "picky", f'rules:\n  - when: {{user: "{BACKTRACKING}"}}\n    say: hit\n')
    write_cases(
        project,
        {"id": "slow", "input": TEXT, "assert": {"type": "contains", "value": "hit"}},
        {"id": "short", "input": "aa", "assert": {"type": "contains", "value": "hit"}},
    )
    started = time.monotonic()
    done = agent(project, "eval", "picky", "@cases.jsonl", "-o", "out.jsonl", timeout=LIMIT)
    assert time.monotonic() - started < 15
    assert done.returncode == 1, done.stdout + done.stderr
    report = check_complete(project / "out.jsonl", 2).report
    results = {r.id: r.to_dict() for r in report.results}
    assert results["short"]["status"] == "passed"
    assert results["slow"]["status"] == "error"
    error = json.dumps(results["slow"], ensure_ascii=False)
    assert "scripted.yml: rules[0].when.user: regex" in error and SLOW in error
    assert "internal error" not in done.stdout + done.stderr


def test_a_backtracking_run_filter_is_a_usage_error(project):
    write_cases(project, {"id": TEXT, "input": "hi"}, {"id": "b", "input": "hi"})
    done = agent(
        project,
        "eval",
        "echoer",
        "@cases.jsonl",
        "--run",
        BACKTRACKING,
        "-o",
        "out.jsonl",
        timeout=LIMIT,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert f'--run pattern "{BACKTRACKING}" {SLOW}' in done.stdout + done.stderr


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [
        ("((a{1000}){1000}){1000}", "expand to more than 100,000 steps"),
        ("x{e<=1}", '"{e<=1}" reads as a fuzzy-match constraint here'),
        ("[[:alpha:]]", '"[:alpha:]" inside [...] reads as a POSIX class'),
    ],
)
def test_patterns_the_matcher_cannot_take_as_re_does_are_load_errors(project, pattern, problem):
    ok = {"id": "ok", "input": "hi", "assert": {"type": "contains", "value": "hi"}}
    write_cases(
        project, ok, {"id": "bad", "input": "x", "assert": {"type": "regex", "value": pattern}}
    )
    done = agent(project, "eval", "echoer", "@cases.jsonl", "-o", "out.jsonl", timeout=LIMIT)
    assert done.returncode == 2, done.stdout + done.stderr
    assert (
        f"cases.jsonl:2: assert: invalid regex {json.dumps(pattern)}: " in done.stderr + done.stdout
    )
    assert problem in done.stderr + done.stdout
    assert not (project / "out.jsonl").exists()

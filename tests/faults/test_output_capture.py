"""What user code prints is the case's, not agentcli's stdout: under ``--json`` stdout
carries only agentcli's own JSON lines (a hook cannot forge a ``test_result``); the lines go
into the result's ``logs`` (redacted) and out as ``log`` events naming the case; on the
console they are shown under the case with ``-v``."""

from __future__ import annotations

import json
from pathlib import Path

from agentcli.eval.reports import read_results

from .harness import agent, agent_env, with_tools

FORGED = json.dumps({"type": "test_result", "id": "forged", "status": "passed"})
CHATTY = f"""
import asyncio, os, sys


def BeforeAll(ctx, cases):
    print('{FORGED}')


def Before(ctx, case):
    print('{FORGED}')
    print("before of", case["id"])
    print("to stderr", file=sys.stderr)
    os.system("echo from a child process")


def After(ctx, case, result, data):
    print("after of", case["id"], "key sk-abcdefghijklmnopqrstuvwx")


def AfterAll(ctx, results, data):
    print("after all")


def Loud(args):
    print("sync tool says", args.get("x"))
    return "ok"


async def LoudAsync(args):
    print("async tool says", args.get("x"))
    return "ok"
"""
SCRIPT = """
def TestPrints(t, ctx):
    print("script test says hi")
    t.assert_.true(True)
"""
OURS = {"log", "test_start", "test_result", "summary", "output_file", "stability"}


def chatty_project(project: Path) -> Path:
    """The probe with hooks and tools that print; a case file using them."""
    package = project / "assistants/probe"
    (package / "src/chatty_test.py").write_text(SCRIPT)
    with_tools(
        package,
        "chatty",
        CHATTY,
        {"loud": "chatty.Loud", "loud_async": "chatty.LoudAsync"},
        '  - when: {user: "^loud"}\n    call: {name: loud, arguments: {x: 1}}\n'
        "  - when: {tool_result: loud}\n    call: {name: loud_async, arguments: {x: 2}}\n"
        '  - when: {tool_result: loud_async}\n    say: "done"\n',
    )
    cases = project / "cases.jsonl"
    hooks = {"before": "chatty.Before", "after": "chatty.After"}
    cases.write_text(
        json.dumps({"id": "a", "input": "loud please", **hooks})
        + "\n"
        + json.dumps({"id": "b", "input": "hello", **hooks})
        + "\n"
    )
    return cases


def test_json_stdout_carries_only_agentcli_events(project):
    cases = chatty_project(project)
    env = agent_env(project, OPENAI_API_KEY="sk-abcdefghijklmnopqrstuvwx")
    run = agent(
        project,
        *("eval", "probe", f"@{cases}", "--json", "-o", "out.jsonl"),
        *("--before-all", "chatty.BeforeAll", "--after-all", "chatty.AfterAll"),
        env=env,
    )
    assert run.returncode == 0, run.stderr
    events = [json.loads(line) for line in run.stdout.splitlines()]  # every line is ours
    assert {e["type"] for e in events} <= OURS
    assert not [e for e in events if e.get("id") == "forged"]
    assert "from a child process" in run.stderr  # native writes to fd 1 go to stderr
    printed = [(e["id"], e["stream"], e["message"]) for e in events if "stream" in e]
    assert ("a", "stdout", "before of a") in printed
    assert ("a", "stderr", "to stderr") in printed
    assert ("a", "stdout", "sync tool says 1") in printed
    assert ("a", "stdout", "async tool says 2") in printed
    assert ("b", "stdout", "after of b key [redacted]") in printed
    messages = [e["message"] for e in events if e["type"] == "log"]
    assert f"BeforeAll: {FORGED}" in messages and "AfterAll: after all" in messages

    results = {r.id: r for r in read_results(project / "out.jsonl").results}
    logs = results["a"].logs or []
    assert {"stream": "stdout", "text": FORGED} in logs
    assert {"stream": "stdout", "text": "before of a"} in logs
    assert {"stream": "stdout", "text": "after of a key [redacted]"} in logs
    assert "sk-abcdefghijklmnopqrstuvwx" not in (project / "out.jsonl").read_text()


def test_console_shows_printed_lines_under_the_case_with_verbose(project):
    cases = chatty_project(project)
    quiet = agent(project, "eval", "probe", f"@{cases}", "-o", "q.jsonl")
    assert quiet.returncode == 0, quiet.stderr
    assert "before of a" not in quiet.stdout
    loud = agent(project, "eval", "probe", f"@{cases}", "-v", "-o", "v.jsonl")
    assert loud.returncode == 0, loud.stderr
    lines = loud.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("► [a]"))
    block = lines[start : start + 12]
    assert "  │ stdout: before of a" in block
    assert "  │ stderr: to stderr" in block
    assert "  │ stdout: sync tool says 1" in block


def test_script_tests_print_into_their_result(project):
    chatty_project(project)
    run = agent(project, "eval", "probe", "--scripts", "chatty", "--json", "-o", "s.jsonl")
    assert run.returncode == 0, run.stdout + run.stderr
    events = [json.loads(line) for line in run.stdout.splitlines()]
    assert ("TestPrints", "script test says hi") in [
        (e.get("id"), e.get("message")) for e in events if e.get("stream")
    ]
    (result,) = read_results(project / "s.jsonl").results
    assert result.logs == [{"stream": "stdout", "text": "script test says hi"}]

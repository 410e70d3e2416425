"""User modules of ``src/`` (tools, hooks) that misbehave while being imported: one that
calls ``sys.exit()`` is an error naming the file, never the process's exit code; one that
blocks is cut by the case timeout (tools) and by Ctrl-C or SIGTERM (exit as interrupted,
promptly), in ``agent list --check`` and ``agent eval`` alike."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from .harness import agent, agent_env, check_complete, start_agent

ECHO_RULES = "rules:\n  - when: {user: '^tool'}\n    call: {name: echo, arguments: {}}\n"
ECHO_RULES += "  - when: {tool_result: echo}\n    say: done\n  - say: 'echo: {{ user }}'\n"


def package(project: Path, files: dict[str, str]) -> Path:
    """``assistants/mod``: a scripted assistant with a ``process`` tool ``echo`` in
    ``src/tools.py``, plus ``files``; and ``cases.jsonl`` of two cases that call it."""
    folder = project / "assistants" / "mod"
    (folder / "src").mkdir(parents=True)
    (folder / "mcps").mkdir()
    (folder / "package.yao").write_text('{"name": "Mod", "connector": "scripted"}')
    (folder / "scripted.yml").write_text(ECHO_RULES)
    (folder / "mcps" / "tools.mcp.yao").write_text(
        '{"transport": "process", "tools": {"echo": "tools.Echo"}}'
    )
    (folder / "src" / "tools.py").write_text("def Echo(args):\n    return 'ok'\n")
    for name, text in files.items():
        (folder / name).write_text(text)
    cases = [{"id": f"c{n}", "input": "tool please"} for n in range(2)]
    (project / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    return folder


def test_a_tools_module_that_exits_at_import_is_an_error_naming_it(project: Path) -> None:
    package(project, {"src/tools.py": "import sys\nsys.exit(9)\n"})
    checked = agent(project, "list", "--check", timeout=20)
    assert checked.returncode == 1, (checked.stdout, checked.stderr)  # not 9
    assert "src/tools.py:2: importing failed: the module called sys.exit(9)" in checked.stdout
    output = project / "out.jsonl"
    ran = agent(project, "eval", "mod", "@cases.jsonl", "-o", str(output), timeout=20)
    assert ran.returncode == 1, (ran.stdout, ran.stderr)
    outcome = check_complete(output, 2)
    assert outcome.statuses == {"error": 2}
    for result in outcome.report.results:
        assert "tools.py:2: importing failed: the module called sys.exit(9)" in result.error


def test_a_hooks_module_that_exits_at_import_is_an_error_naming_it(project: Path) -> None:
    package(project, {"src/index.py": "raise SystemExit('bye')\n"})
    checked = agent(project, "list", "--check", timeout=20)
    assert checked.returncode == 1, (checked.stdout, checked.stderr)
    assert "src/index.py:1: importing failed: the module called sys.exit('bye')" in (checked.stdout)
    ran = agent(project, "eval", "mod", "@cases.jsonl", "-o", "out.jsonl", timeout=20)
    assert ran.returncode == 2, (ran.stdout, ran.stderr)  # the package cannot load
    assert "index.py:1: importing failed: the module called sys.exit('bye')" in ran.stderr


def test_a_tools_module_that_blocks_at_import_is_cut_by_the_case_timeout(project: Path) -> None:
    package(project, {"src/tools.py": "import time\ntime.sleep(60)\n"})
    output = project / "out.jsonl"
    started = time.monotonic()
    ran = agent(
        project, "eval", "mod", "@cases.jsonl", "-o", str(output), "--timeout", "1s", timeout=20
    )
    assert time.monotonic() - started < 6
    assert ran.returncode == 1, (ran.stdout, ran.stderr)
    assert check_complete(output, 2).statuses == {"timeout": 2}


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("command", ["list", "eval"])
def test_a_signal_stops_a_hooks_module_blocking_at_import(
    project: Path, command: str, signum: int
) -> None:
    package(project, {"src/index.py": "import time\ntime.sleep(60)\n"})
    args = ["list", "--check"] if command == "list" else ["eval", "mod", "@cases.jsonl"]
    process = start_agent(project, *args, env=agent_env(project))
    time.sleep(1.0)  # well into the import (the command starts in ~0.4 s)
    process.send_signal(signum)
    try:
        _, stderr = process.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise AssertionError(f"agent {command} still running 5s after {signum!r}") from None
    # Ends as interrupted: by SIGINT itself (as Ctrl-C should), 130 after SIGTERM.
    assert process.returncode == (-signal.SIGINT if signum == signal.SIGINT else 130), stderr
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr


def test_the_guard_restores_the_signal_handlers(tmp_path: Path) -> None:
    from agentcli.pysource import load_source_module

    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    module = tmp_path / "plain.py"
    module.write_text("VALUE = 1\n")
    assert load_source_module(module, "plain").VALUE == 1
    assert {s: signal.getsignal(s) for s in before} == before

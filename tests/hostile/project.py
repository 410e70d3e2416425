"""The project every corpus entry runs in: an ``assistants/hostile`` package (offline rules,
process tools that misbehave on request, eval hooks that misbehave on request) and a
simulated user, which an entry then overwrites or adds to."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["BASE", "STANDARD_CASES", "Fifo", "Lazy", "Link", "Sparse", "materialize"]

FORGED = json.dumps({"type": "test_result", "id": "forged", "status": "passed"})
"""What a hook or tool prints to try to forge an event of the ``--json`` stream."""

REDOS_TEXT = "a" * 40 + "!"
"""A subject on which ``(a+)+$`` backtracks for hours."""

# Tools the rules call: "tool <name>" calls <name>, and its result ends the turn.
TOOLS = {
    "echo": "return args.get('text')",
    "recursive": "loop = []\n    loop.append(loop)\n    return loop",
    "bytes": "return b'\\xff\\xfe'",
    "hugeint": "return 10**5000",
    "nan": "return {'nan': float('nan'), 'inf': float('inf')}",
    "huge": "return 'x' * 2_000_000",
    "object": "return object()",
    "surrogate": "return '\\ud800 lone'",
    "print": "print(FORGED, flush=True)\n    return 'printed'",
    "exit": "sys.exit(4)",
    "raise": "raise KeyError('no such thing')",
    "sleep": "time.sleep(60)  # blocks the thread it runs on; the harness interrupts",
}
TOOLS_PY = f"import json, sys, time\n\nFORGED = {FORGED!r}\n\n" + "".join(
    f"\ndef {name.capitalize()}(args):\n    {body}\n\n" for name, body in TOOLS.items()
)
TOOLS_MCP = json.dumps(
    {"transport": "process", "tools": {n: f"tools.{n.capitalize()}" for n in TOOLS}}, indent=1
)
RULES = "\n".join(
    [
        "rules:",
        '  - when: {user: "^echo-tool (.*)"}',
        '    call: {name: echo, arguments: {text: "{{ match[1] }}"}}',
        "  - when: {tool_result: echo}",
        '    say: "{{ result }}"',
        *(
            f'  - when: {{user: "^tool {n}$"}}\n    call: {{name: {n}, arguments: {{}}}}\n'
            f'  - when: {{tool_result: {n}}}\n    say: "done {n}"'
            for n in TOOLS
        ),
        '  - when: {user: "^json"}',
        "    say: {intent: weather, city: Paris, days: [1, 2]}",
        '  - say: "echo: {{ user }}"',
    ]
)
# Eval hooks: the well-behaved pair, then one per way user code misbehaves.
HOOKS_PY = f'''"""Eval hooks of the hostile fixture."""
import os, subprocess, sys, time

FORGED = {FORGED!r}


def Before(ctx, case):
    return {{"seen": case["id"]}}


def After(ctx, case, result, data):
    return None


def BeforeRaise(ctx, case):
    raise ValueError("no database")


def BeforeExit(ctx, case):
    sys.exit(3)


def BeforeExitNone(ctx, case):
    raise SystemExit


def BeforePrintForged(ctx, case):
    print(FORGED, flush=True)


def BeforePrintPartial(ctx, case):
    sys.stdout.write("half a line, no newline")
    sys.stdout.flush()


def BeforePrintSurrogate(ctx, case):
    print("lone \\ud800 surrogate", flush=True)


def BeforeSubprocessPrints(ctx, case):
    subprocess.run(["echo", FORGED], check=False)


def BeforePrintHuge(ctx, case):
    print("x" * 5_000_000, flush=True)
    print("y" * 5_000_000, file=sys.stderr, flush=True)


def BeforeSleep(ctx, case):
    time.sleep(60)


def BeforeUnserializable(ctx, case):
    return {{"object": object(), "set": {{1, 2}}, "bytes": b"\\xff"}}


def BeforeRecursive(ctx, case):
    loop = {{}}
    loop["loop"] = loop
    return loop


def AfterRaise(ctx, case, result, data):
    raise RuntimeError("cleanup failed")


def AfterExit(ctx, case, result, data):
    sys.exit(0)


def AfterSleep(ctx, case, result, data):
    time.sleep(60)


def AfterMutates(ctx, case, result, data):
    if isinstance(result, dict):
        result["status"] = 5
        result["id"] = None
        result["assertions"] = "gone"


def BeforeAllSleep(ctx, cases):
    time.sleep(60)


def BeforeAllPrint(ctx, cases):
    print(FORGED, flush=True)


def BeforeAllExit(ctx, cases):
    sys.exit(5)


def BeforeAllMutates(ctx, cases):
    if isinstance(cases, list):
        cases.clear()


def AfterAllRaise(ctx, results, data):
    raise RuntimeError("teardown failed")


def AfterAllExit(ctx, results, data):
    sys.exit(6)


def AfterAllSleep(ctx, results, data):
    time.sleep(60)


def AfterAllPrint(ctx, results, data):
    print(FORGED, flush=True)
'''
SIM_RULES = f"rules:\n  - say: {{message: {REDOS_TEXT!r}, goal_achieved: false, reasoning: r}}\n"

BASE: dict[str, str] = {
    "assistants/hostile/package.yao": '{"name": "Hostile", "connector": "scripted"}\n',
    "assistants/hostile/scripted.yml": RULES + "\n",
    "assistants/hostile/mcps/tools.mcp.yao": TOOLS_MCP + "\n",
    "assistants/hostile/src/tools.py": TOOLS_PY,
    "assistants/hostile/src/env_test.py": HOOKS_PY,
    "assistants/simuser/package.yao": '{"name": "Simulated user", "connector": "scripted"}\n',
    "assistants/simuser/scripted.yml": SIM_RULES,
}
"""The files of the project every entry starts from (relative to the project folder)."""

STANDARD_CASES = "\n".join(
    json.dumps(case)
    for case in [
        {"id": "hello", "input": "hello", "assert": {"type": "contains", "value": "echo"}},
        {"id": "tool", "input": "echo-tool hi", "assert": {"type": "tool_called", "value": "echo"}},
        {"id": "json", "input": "json please", "assert": {"type": "is_json"}},
    ]
)
"""Three plain cases: what package and results entries run (and resume) with."""
STANDARD_IDS = ("hello", "tool", "json")


@dataclass(frozen=True, slots=True)
class Fifo:
    """A named pipe: opening it for reading blocks until someone writes."""


@dataclass(frozen=True, slots=True)
class Link:
    """A symbolic link to ``target``."""

    target: str


@dataclass(frozen=True, slots=True)
class Sparse:
    """A file of ``size`` zero bytes that takes no disk space."""

    size: int


@dataclass(frozen=True, slots=True)
class Lazy:
    """Content made only when the entry is built (the corpus stays small in memory, and so
    do the processes forked from one that imported it)."""

    make: Callable[[], str | bytes]


Content = str | bytes | Fifo | Link | Sparse | Lazy


def materialize(folder: Path, files: dict[str, Content]) -> None:
    """Write the base project and then ``files`` (which win) into ``folder``."""
    for relative, content in {**BASE, **files}.items():
        if isinstance(content, Lazy):
            content = content.make()
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink() or path.exists():
            path.unlink()
        if isinstance(content, Fifo):
            os.mkfifo(path)
        elif isinstance(content, Link):
            path.symlink_to(content.target)
        elif isinstance(content, Sparse):
            with path.open("wb") as handle:
                handle.truncate(content.size)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_bytes(content.encode("utf-8", "surrogatepass"))

"""The commands in the documentation work as documented.

- Every fenced ``bash`` block of README.md and docs/*.md preceded by ``<!-- runnable -->``
  (or ``<!-- runnable exit=N -->``) is run offline: each ``agent ...`` command (``.venv/bin/
  agent`` too; install steps such as ``python3 -m venv`` and ``pip install`` in a ``&&``
  chain are skipped) runs as ``python -m agentcli ...`` in a temporary copy of
  ``assistants/`` and ``fixtures/`` with its own ``AGENTCLI_HOME`` and ``HOME``, so results
  files and memory never land in the repository. The last command must exit with N
  (default 0), every earlier one with 0.
- Every ``agent`` command line in any bash block parses against the real command line:
  the command exists and so does every flag, with a value of the right type.
- In docs/*.md, ``$`` is never left for the shell to expand in an ``agent`` command line
  (``"submit $25"`` reaches the program as ``"submit 5"``).
- Local links of docs/*.md point at files and headings that exist.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import typer
import typer.main

from agentcli.cli.main import COMMANDS

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted((ROOT / "docs").glob("*.md"))
FILES = [ROOT / "README.md", *DOCS]
COPIED = ("assistants", "fixtures")
COMMAND_TIMEOUT = 60

_FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.DOTALL | re.MULTILINE)
_MARKER = re.compile(r"<!--\s*runnable(?:\s+exit=(\d+))?\s*-->")
_MARKER_LINE = re.compile(r"^[ \t]*<!--\s*runnable\b.*$", re.MULTILINE)
_OPERATORS = {"&&", "||", ";", "|", "&"}
_REDIRECTS = {">", ">>", "<", "<<", ">&", "<&", "|&"}
_AGENT = ("agent", ".venv/bin/agent")
# Steps of an install line that the test environment has already done.
_SETUP = re.compile(r"^(python3?|pip3?|\.venv/bin/pip|\.venv/bin/python)$")


@dataclass(slots=True, frozen=True)
class Block:
    """A fenced code block: its file, first line, language, text and runnable marker."""

    path: Path
    line: int
    language: str
    text: str
    runnable: bool
    exit_code: int

    @property
    def label(self) -> str:
        """``docs/eval.md:12``."""
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def blocks(path: Path) -> list[Block]:
    """Every fenced block of ``path``, with the marker on the line before it (if any)."""
    text = path.read_text(encoding="utf-8")
    found = []
    for match in _FENCE.finditer(text):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marker = _MARKER.fullmatch(before.strip())
        found.append(
            Block(
                path=path,
                line=text.count("\n", 0, match.start()) + 2,
                language=match.group(1),
                text=match.group(2),
                runnable=marker is not None,
                exit_code=int(marker.group(1) or 0) if marker else 0,
            )
        )
    return found


def command_lines(block: Block) -> list[str]:
    """The block's logical lines (``\\`` continuations joined), without comments and blanks."""
    lines, pending = [], ""
    for raw in block.text.splitlines():
        if raw.rstrip().endswith("\\"):
            pending += raw.rstrip()[:-1] + " "
            continue
        line = (pending + raw).strip()
        pending = ""
        if line and not line.startswith("#"):
            lines.append(line)
    return lines


def segments(line: str) -> list[list[str]]:
    """The simple commands of a shell line, split at ``&&``, ``|``, ``;``; a redirection and
    its target are dropped."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    result: list[list[str]] = [[]]
    skip_next = False
    for token in lexer:
        if skip_next:
            skip_next = False
        elif token in _OPERATORS:
            result.append([])
        elif token in _REDIRECTS:
            skip_next = True
        else:
            result[-1].append(token)
    return [words for words in result if words]


def agent_commands(block: Block) -> list[tuple[str, list[str]]]:
    """``(line, argv after "agent")`` for every agent command of a bash block."""
    found = []
    for line in command_lines(block):
        for words in segments(line):
            if words[0] in _AGENT:
                found.append((line, words[1:]))
    return found


def unexpanded_dollars(line: str) -> list[str]:
    """The ``$...`` a POSIX shell would expand in ``line`` (outside single quotes, unescaped)."""
    problems, quote, index = [], "", 0
    while index < len(line):
        char = line[index]
        if char == "\\" and quote != "'":
            index += 2
            continue
        if char in "'\"" and quote in ("", char):
            quote = "" if quote == char else char
        elif (
            char == "$" and quote != "'" and re.match(r"[\w{(@*#?!-]", line[index + 1 : index + 2])
        ):
            problems.append(line[index : index + 8])
        index += 1
    return problems


ALL_BLOCKS = [block for path in FILES for block in blocks(path)]
BASH = [block for block in ALL_BLOCKS if block.language == "bash"]
RUNNABLE = [block for block in BASH if block.runnable]


# --- the documented command line parses ----------------------------------------------------


def _cli() -> typer.main.TyperGroup:
    """The real commands, registered on an app of our own (the global one stays untouched)."""
    app = typer.Typer(
        add_completion=False, context_settings={"help_option_names": ["-h", "--help"]}
    )
    for name in COMMANDS:
        importlib.import_module(f"agentcli.cli.{name}").register(app)
    return typer.main.get_command(app)


def parse_problem(group: typer.main.TyperGroup, argv: list[str]) -> str | None:
    """Why ``agent <argv>`` would be refused by the command line parser, or None."""
    while argv and argv[0] in ("--debug", "--version", "-h", "--help"):
        if argv[0] != "--debug":
            return None
        argv = argv[1:]
    if not argv:
        return "no command"
    command = group.commands.get(argv[0])
    if command is None:
        return f"no command {argv[0]!r}"
    parent = group.make_context("agent", [argv[0]])
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            command.make_context(argv[0], list(argv[1:]), parent=parent)
    except typer.Exit:
        return None  # --help
    except Exception as error:
        format_message = getattr(error, "format_message", None)
        message = format_message() if callable(format_message) else str(error)
        return f"{type(error).__name__}: {message}"
    return None


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_documented_command_lines_parse(path):
    group = _cli()
    problems = []
    for block in (b for b in BASH if b.path == path):
        for line, argv in agent_commands(block):
            problem = parse_problem(group, argv)
            if problem:
                problems.append(f"{block.label}: {line}\n    {problem}")
    assert not problems, "\n".join(problems)


def test_the_parse_check_can_fail():
    group = _cli()
    assert parse_problem(group, ["eval", "expense", "@x.jsonl", "--runs", "3"]) is None
    assert parse_problem(group, ["eval", "--help"]) is None
    assert "No such option" in parse_problem(group, ["eval", "expense", "--nope"])
    assert "--parallel" in parse_problem(group, ["eval", "expense", "--parallel", "many"])
    assert parse_problem(group, ["evaluate", "expense"]) == "no command 'evaluate'"


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_dollar_is_left_to_the_shell(path):
    problems = [
        f"{block.label}: {line}\n    the shell expands {found!r}: use single quotes"
        for block in BASH
        if block.path == path
        for line, _ in agent_commands(block)
        for found in unexpanded_dollars(line)
    ]
    assert not problems, "\n".join(problems)


def test_the_dollar_check_can_fail():
    assert unexpanded_dollars("agent eval expense 'submit $25'") == []
    assert unexpanded_dollars('agent run expense "Submit \\$500"') == []
    assert unexpanded_dollars('agent eval expense --run "^T00[1-3]$"') == []
    assert unexpanded_dollars('agent eval expense "submit $25 for lunch"') == ["$25 for "]


# --- runnable blocks ---------------------------------------------------------------------


def test_runnable_markers_sit_on_bash_blocks():
    for path in FILES:
        text = path.read_text(encoding="utf-8")
        for match in _MARKER_LINE.finditer(text):
            after = text[match.end() :].lstrip("\n")
            line = text.count("\n", 0, match.start()) + 1
            assert _MARKER.fullmatch(match.group().strip()), (
                f"{path.relative_to(ROOT)}:{line}: write <!-- runnable --> or <!-- runnable exit=N -->"
            )
            assert after.startswith("```bash\n"), (
                f"{path.relative_to(ROOT)}:{line}: marker not on a bash block"
            )


def test_each_guide_has_runnable_examples():
    marked = {str(block.path.relative_to(ROOT)) for block in RUNNABLE}
    assert {"README.md", "docs/eval.md", "docs/assistants.md"} <= marked
    assert len(RUNNABLE) >= 12


def runnable_steps(block: Block) -> list[list[str]]:
    """The agent commands a runnable block runs (argv after ``agent``), checked to be safe."""
    steps = []
    for line in command_lines(block):
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        tokens = list(lexer)
        extra = sorted({t for t in tokens if t in _OPERATORS | _REDIRECTS} - {"&&"})
        assert not extra, f"{block.label}: runnable commands cannot use {extra}: {line}"
        for words in segments(line):
            if _SETUP.match(words[0]):
                continue  # the environment is installed already
            assert words[0] in _AGENT, f"{block.label}: not an agent command: {line}"
            for word in words[1:]:
                target = Path(word.lstrip("@"))
                assert not word.lstrip("@").startswith(("/", "~")) and ".." not in target.parts, (
                    f"{block.label}: {word!r} would reach outside the temporary project"
                )
            steps.append(words[1:])
    assert steps, f"{block.label}: a runnable block without an agent command"
    return steps


@pytest.fixture
def project(tmp_path):
    """A throw-away project: copies of assistants/ and fixtures/, a home of its own."""
    for name in COPIED:
        shutil.copytree(
            ROOT / name,
            tmp_path / name,
            ignore=shutil.ignore_patterns("__pycache__", "output-*.jsonl", ".pytest_cache"),
        )
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("AGENT_ROOT", "AGENT_CONNECTOR")}
    env.update(
        AGENTCLI_HOME=str(home),
        HOME=str(home),
        NO_COLOR="1",
        COLUMNS="100",
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])),
    )
    return tmp_path, env


@pytest.mark.parametrize("block", RUNNABLE, ids=lambda b: b.label)
def test_runnable_block(block, project):
    cwd, env = project
    steps = runnable_steps(block)
    for index, argv in enumerate(steps):
        expected = block.exit_code if index == len(steps) - 1 else 0
        done = subprocess.run(
            [sys.executable, "-m", "agentcli", *argv],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT,
        )
        assert done.returncode == expected, (
            f"{block.label}: agent {shlex.join(argv)}\n"
            f"exit {done.returncode}, documented {expected}\n"
            f"--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}"
        )
        assert "Traceback" not in done.stderr, done.stderr


# --- links -----------------------------------------------------------------------------------

_LINK = re.compile(r"\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6} (.+)$", re.MULTILINE)


def anchors(path: Path) -> set[str]:
    """GitHub's anchors for the headings of ``path`` (outside code blocks)."""
    text = _FENCE.sub("", path.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    found = set()
    for heading in _HEADING.findall(text):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_local_links_resolve(path):
    text = _FENCE.sub("", path.read_text(encoding="utf-8"))
    problems = []
    for target in _LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        linked = (path.parent / file).resolve() if file else path
        if not linked.exists():
            problems.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            problems.append(f"{target}: no such heading in {linked.name}")
    assert not problems, "\n".join(problems)

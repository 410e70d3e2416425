"""The public API holds still: ``agentcli.runtime.__all__`` is exactly the documented set,
and every ``from agentcli... import ...`` shown in a code block of the docs resolves.

A name leaving ``__all__`` (or a new one arriving) is an API change: update the list here
and the docs together, on purpose.
"""

from __future__ import annotations

import ast
import importlib
import re
import textwrap
from pathlib import Path

import pytest

import agentcli.runtime

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTED = [
    ROOT / "README.md",
    *(ROOT / "docs" / name for name in ("runtime.md", "assistants.md", "eval.md")),
]

RUNTIME_ALL = [
    "DIRECT_TOOL_CALL",
    "Agent",
    "AgentConfig",
    "AgentContext",
    "AgentLoopConfig",
    "AgentState",
    "Block",
    "Channel",
    "Entry",
    "JsonlStorage",
    "LoopConfig",
    "MemoryStorage",
    "Message",
    "Plugin",
    "ProviderConfig",
    "QueueConfig",
    "Replace",
    "Step",
    "StepInfo",
    "StepOutcome",
    "Tool",
    "ToolCall",
    "ToolConfig",
    "ToolContext",
    "ToolResult",
    "TurnError",
    "TurnResult",
    "agent_loop",
    "agent_loop_continue",
    "as_messages",
    "assistant_message",
    "custom_message",
    "decide_step",
    "image_parts",
    "per_model_call",
    "seed_000_name",
    "system_message",
    "to_llm_messages",
    "user_message",
]

_FENCE = re.compile(r"^(?P<indent>[ \t]*)```[^\n]*\n(?P<body>.*?)^(?P=indent)```", re.M | re.S)
# one import statement inside a block that is not Python as a whole (a console session)
_IMPORT_LINE = re.compile(
    r"^[ \t]*(from[ \t]+agentcli[\w.]*[ \t]+import[ \t]+(?:\([^)]*\)|[^\n]+))", re.M
)


def _imports_of(block: str) -> list[ast.ImportFrom]:
    """The ``from agentcli... import`` statements of one code block."""
    try:
        tree = ast.parse(textwrap.dedent(block))
    except SyntaxError:
        statements = []
        for match in _IMPORT_LINE.finditer(block):
            try:
                statements.extend(ast.parse(match.group(1)).body)
            except SyntaxError:
                continue
        tree = ast.Module(body=statements, type_ignores=[])
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "agentcli"
    ]


def _documented_imports() -> list[tuple[str, str, str]]:
    """(where, module, name) for every name a documented code block imports from agentcli."""
    found: dict[tuple[str, str], str] = {}
    for doc in DOCUMENTED:
        text = doc.read_text(encoding="utf-8")
        for block in _FENCE.finditer(text):
            line = text.count("\n", 0, block.start()) + 1
            for node in _imports_of(block.group("body")):
                assert node.module is not None  # _imports_of keeps agentcli modules only
                for alias in node.names:
                    where = f"{doc.relative_to(ROOT)}:{line + node.lineno}"
                    found.setdefault((node.module, alias.name), where)
    return sorted((where, module, name) for (module, name), where in found.items())


DOC_IMPORTS = _documented_imports()


def test_runtime_all_is_pinned() -> None:
    assert sorted(agentcli.runtime.__all__) == sorted(RUNTIME_ALL)
    assert len(set(agentcli.runtime.__all__)) == len(agentcli.runtime.__all__)


@pytest.mark.parametrize("name", RUNTIME_ALL)
def test_runtime_all_names_resolve(name: str) -> None:
    assert getattr(agentcli.runtime, name, None) is not None, name


def test_the_docs_show_imports() -> None:
    """The collector finds what the docs show (an empty list would pass everything)."""
    shown = {(module, name) for _where, module, name in DOC_IMPORTS}
    assert ("agentcli.runtime", "Agent") in shown
    assert ("agentcli.models.offline", "EchoModel") in shown
    assert ("agentcli.errors", "AgentBusyError") in shown
    assert ("agentcli.eval.run.scripts", "src_import") in shown


@pytest.mark.parametrize(
    ("where", "module", "name"), DOC_IMPORTS, ids=[f"{m}.{n}" for _, m, n in DOC_IMPORTS]
)
def test_documented_import_resolves(where: str, module: str, name: str) -> None:
    imported = importlib.import_module(module)
    if not hasattr(imported, name):  # ``from agentcli import runtime``: a submodule
        try:
            importlib.import_module(f"{module}.{name}")
        except ModuleNotFoundError:
            pytest.fail(f"{where}: `from {module} import {name}` does not resolve")


def test_collector_reads_imports_in_a_block_that_is_not_python() -> None:
    block = "$ agent run x\nfrom agentcli.errors import ConfigError\nfrom agentcli.runtime import (\n    Agent,\n    Tool,\n)\n"
    names = [(node.module, [a.name for a in node.names]) for node in _imports_of(block)]
    assert names == [("agentcli.errors", ["ConfigError"]), ("agentcli.runtime", ["Agent", "Tool"])]

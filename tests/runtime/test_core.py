"""The runtime's structure: the turn machinery works on the AgentCore's public surface."""

from __future__ import annotations

import ast
from pathlib import Path

import agentcli.runtime
from agentcli.models.offline import EchoModel
from agentcli.runtime import Agent
from agentcli.runtime.core import AgentCore

RUNTIME = Path(agentcli.runtime.__file__).parent


def private_reaches(source: str) -> list[str]:
    """``x._name`` where ``x`` is not ``self`` / ``cls``: private state of another object."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Attribute):
            continue
        name = node.attr
        if not name.startswith("_") or (name.startswith("__") and name.endswith("__")):
            continue
        owner = node.value
        if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
            continue
        found.append(f"{ast.unparse(node)} (line {node.lineno})")
    return found


def test_the_check_finds_a_private_reach() -> None:
    assert private_reaches("def f(agent):\n    agent._emit(1)\n    self._ok = 2\n") == [
        "agent._emit (line 2)"
    ]


def test_no_runtime_module_reaches_into_another_objects_private_state() -> None:
    offenders = {
        path.name: found
        for path in sorted(RUNTIME.glob("*.py"))
        if (found := private_reaches(path.read_text()))
    }
    assert offenders == {}


def test_the_agent_is_a_facade_over_its_core() -> None:
    agent = Agent(EchoModel(), instructions="be brief")
    core = agent._core
    assert isinstance(core, AgentCore)
    assert (core.model, core.instructions, core.config) == (
        agent.model,
        "be brief",
        agent.config,
    )
    agent.model = replacement = EchoModel()
    assert core.model is replacement  # one source of truth, not two copies

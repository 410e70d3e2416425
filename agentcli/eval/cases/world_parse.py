"""Reading a case's ``tools`` (and a case file's ``defaults``) into ``CaseTools``: the schema
has checked the shapes; what is left is what a schema cannot say (a stub with both a
result and an error, a bad duration or regex, the ``--faults`` text form)."""

from __future__ import annotations

from typing import Any

from agentcli.durations import parse_duration
from agentcli.errors import ConfigError
from agentcli.eval.cases.world import CaseTools, ToolStub
from agentcli.eval.checks.matching import value_problems
from agentcli.faults import FaultPlan, fault_plan, faults_from_text

__all__ = ["DEFAULTS_KEY", "is_defaults", "read_tools"]

DEFAULTS_KEY = "defaults"


def is_defaults(obj: Any) -> bool:
    """Whether a case file's item is its ``{"defaults": {...}}`` (no id: not a case)."""
    return isinstance(obj, dict) and DEFAULTS_KEY in obj and "id" not in obj


def read_tools(raw: dict[str, Any], where: str, found: list[str]) -> CaseTools:
    """A schema-valid ``tools`` object as ``CaseTools``; problems go to ``found`` as
    ``<where>.field: message``."""
    stubs = tuple(
        _stub(item, f"{where}.stubs[{index}]", found)
        for index, item in enumerate(raw.get("stubs") or [])
    )
    faults = _faults(raw["faults"], f"{where}.faults", found) if "faults" in raw else None
    return CaseTools(stubs=stubs, unmatched=raw.get("unmatched"), faults=faults)


def _stub(raw: dict[str, Any], where: str, found: list[str]) -> ToolStub:
    """One stub, checked."""
    if "result" in raw and "error" in raw:
        found.append(f"{where}: a stub answers with result or error, not both")
    for problem in value_problems(raw.get("arguments")):
        found.append(f"{where}.arguments: {problem}")
    delay = 0.0
    if "delay" in raw:
        try:
            delay = parse_duration(raw["delay"]) if isinstance(raw["delay"], str) else raw["delay"]
        except ConfigError as error:
            found.append(f"{where}.delay: {error.message}")
    return ToolStub(
        name=raw["name"],
        arguments=raw.get("arguments"),
        has_arguments="arguments" in raw,
        result=raw.get("result"),
        error=raw.get("error"),
        delay=float(delay),
        once=bool(raw.get("once", False)),
    )


def _faults(raw: dict[str, Any] | str, where: str, found: list[str]) -> FaultPlan | None:
    """A case's fault plan: an object, or the ``--faults`` text."""
    try:
        return faults_from_text(raw) if isinstance(raw, str) else fault_plan(raw)
    except ValueError as error:
        found.append(f"{where}: {error}")
    return None

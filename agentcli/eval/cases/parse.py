"""One case object to a ``Case``: checked against ``case.schema.json`` (Draft 2020-12), then
semantically (assertion values, regexes, checkpoint dependencies, durations, ``file://``
inputs); every problem of the case is raised at once as ``file:line: message`` entries.

Unknown fields are rejected (with a "did you mean" hint) in cases, assertions, options,
simulators and checkpoints, because a typo such as ``asserts`` would otherwise silently
turn a case into one that always passes. Message objects, ``metadata`` and ``expected``
stay open.
"""

from __future__ import annotations

import difflib
import json
import re
from graphlib import CycleError, TopologicalSorter
from pathlib import Path
from typing import Any

from agentcli.assistant.sandbox.spec import spec_problems
from agentcli.durations import parse_duration
from agentcli.errors import CaseFileError, ConfigError
from agentcli.eval.cases.files import display_path, schema_problems
from agentcli.eval.cases.inputs import normalize_input
from agentcli.eval.cases.model import (
    DEFAULT_MAX_TURNS,
    Assertion,
    Case,
    CaseOptions,
    CaseSource,
    Checkpoint,
    Simulator,
    SimulatorOptions,
    StateFixture,
)
from agentcli.eval.cases.world import CaseTools
from agentcli.eval.cases.world_parse import read_tools
from agentcli.eval.checks.assertions import validate_assertion

__all__ = ["parse_case"]

_HOOK_REFERENCE = re.compile(r"[\w./-]+\.[A-Za-z_]\w*")


def parse_case(
    obj: dict[str, Any],
    *,
    source_file: Path | str,
    line: int,
    project_root: Path,
    validated: bool = False,
    defaults: CaseTools | None = None,
) -> Case:
    """A validated ``Case`` from one case object; raises ``CaseFileError`` listing its problems.
    ``validated`` skips the schema check for an object already checked (a streamed file's
    second reading); ``defaults`` are the ``tools`` of the file's defaults."""
    shown = display_path(str(source_file))
    prefix = f"{shown}:{line}: "
    problems = [] if validated else [prefix + p for p in schema_problems(obj)]
    if problems:
        raise CaseFileError(problems)
    found: list[str] = []
    case = Case(
        id=obj["id"],
        input=obj.get("input"),
        assert_=_assertions(obj.get("assert"), "assert", found),
        expected=obj.get("expected"),
        user=obj.get("user"),
        team=obj.get("team"),
        metadata=dict(obj.get("metadata") or {}),
        tags=_tags(obj.get("tags")),
        options=_case_options(obj.get("options") or {}),
        skip=bool(obj.get("skip", False)),
        before=obj.get("before"),
        after=obj.get("after"),
        simulator=_simulator(obj["simulator"]) if "simulator" in obj else None,
        checkpoints=_checkpoints(obj.get("checkpoints") or [], found),
        max_turns=obj.get("max_turns", DEFAULT_MAX_TURNS),
        source=CaseSource(shown, line),
        state_before=_state_before(obj.get("state")),
    )
    if "tools" in obj:
        case.tools = read_tools(obj["tools"], "tools", found).over(defaults)
    else:
        case.tools = defaults
    for hook in ("before", "after"):
        ref = getattr(case, hook)
        if ref is not None and not _HOOK_REFERENCE.fullmatch(ref):
            found.append(f'{hook}: hook reference must be "<file>.<Func>", got {json.dumps(ref)}')
    if "timeout" in obj:
        try:
            case.timeout = parse_duration(obj["timeout"])
        except ConfigError as exc:
            found.append(f"timeout: {exc.message}")
    if "sandbox" in obj:
        case.sandbox = dict(obj["sandbox"])
        found.extend(spec_problems(case.sandbox))
    if case.simulator is not None and not case.checkpoints:
        found.append('simulator: a dynamic case needs "checkpoints"')
    if case.input is None and not case.is_dynamic:
        found.append('missing required field "input"')
    try:
        case.messages = normalize_input(
            case.input, base_dir=Path(source_file).parent, project_root=project_root
        )
    except CaseFileError as exc:
        found.extend(exc.problems)
    if found:
        raise CaseFileError([prefix + p for p in found])
    return case


def _assertions(raw: Any, where: str, found: list[str]) -> list[Assertion]:
    """Assertions from one object, a list, or a bare type name; checks each one's value."""
    if raw is None:
        return []
    items = raw if isinstance(raw, list) else [raw]
    result = []
    for index, item in enumerate(items):
        assertion = Assertion.from_obj(item)
        problem = validate_assertion(assertion)
        if problem:
            found.append(
                f"{where}[{index}]: {problem}" if isinstance(raw, list) else f"{where}: {problem}"
            )
        result.append(assertion)
    return result


def _state_before(raw: dict[str, Any] | None) -> StateFixture | None:
    """``state.before`` of a schema-valid case (None without one)."""
    before = (raw or {}).get("before")
    if not before:
        return None
    return StateFixture(
        memory={kind: dict(owners) for kind, owners in (before.get("memory") or {}).items()},
        models={name: list(rows) for name, rows in (before.get("models") or {}).items()},
    )


def _case_options(raw: dict[str, Any]) -> CaseOptions:
    """``options`` of a schema-valid case."""
    return CaseOptions(
        connector=raw.get("connector"),
        mode=raw.get("mode"),
        max_steps=int(raw["max_steps"]) if raw.get("max_steps") is not None else None,
        metadata=dict(raw.get("metadata") or {}),
        skip=dict(raw.get("skip") or {}),
    )


def _simulator(raw: dict[str, Any]) -> Simulator:
    """``simulator`` of a schema-valid case."""
    options = raw.get("options") or {}
    return Simulator(
        use=raw.get("use"),
        options=SimulatorOptions(
            metadata=dict(options.get("metadata") or {}), connector=options.get("connector")
        ),
    )


def _checkpoints(raw: list[dict[str, Any]], found: list[str]) -> list[Checkpoint]:
    """Checkpoints, checked for duplicate ids, unknown ``after`` ids and dependency cycles."""
    checkpoints = [
        Checkpoint(
            id=item["id"],
            assert_=_assertions(item["assert"], f"checkpoints[{i}].assert", found),
            description=item.get("description"),
            after=list(item.get("after") or []),
            required=item.get("required", True),
        )
        for i, item in enumerate(raw)
    ]
    ids = [c.id for c in checkpoints]
    for index, checkpoint in enumerate(checkpoints):
        if checkpoint.id in ids[:index]:
            found.append(
                f"checkpoints[{index}].id: duplicate checkpoint id {json.dumps(checkpoint.id)}"
            )
        for dep in checkpoint.after:
            if dep == checkpoint.id:
                found.append(f"checkpoints[{index}].after: a checkpoint cannot wait for itself")
            elif dep not in ids:
                close = difflib.get_close_matches(dep, ids, n=1)
                hint = f' (did you mean "{close[0]}"?)' if close else ""
                found.append(
                    f"checkpoints[{index}].after: unknown checkpoint {json.dumps(dep)}{hint}"
                )
    cycle = _dependency_cycle(checkpoints)
    if cycle:
        found.append(f"checkpoints: dependency cycle {' -> '.join(cycle)}")
    return checkpoints


def _dependency_cycle(checkpoints: list[Checkpoint]) -> list[str] | None:
    """One ``after`` cycle as a path of ids (``a -> b -> a``: a waits for b, which waits
    for a), if the checkpoints have one."""
    graph = {c.id: [d for d in c.after if d != c.id] for c in checkpoints}
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as error:
        # graphlib lists each node before the ones that wait for it: the other way round.
        return list(reversed(error.args[1]))
    return None


def _tags(value: Any) -> list[str]:
    """A case's ``tags`` (a single tag may be written as a plain string), in order, once each."""
    if value is None:
        return []
    tags = [value] if isinstance(value, str) else list(value)
    return list(dict.fromkeys(tags))

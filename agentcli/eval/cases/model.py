"""Eval cases: the ``Case`` value type and loading ``.jsonl`` / ``.json`` / ``.yaml`` case files.

Every case is checked against ``case.schema.json`` (Draft 2020-12) and then semantically
(assertion values, regexes, checkpoint dependencies, durations, ``file://`` inputs). All
problems of a file are collected and raised together as one ``CaseFileError`` whose entries
read ``file:line: message``, so nothing runs while the file has a mistake.

Unknown fields are rejected (with a "did you mean" hint) in cases, assertions, options,
simulators and checkpoints, because a typo such as ``asserts`` would otherwise silently
turn a case into one that always passes. Message objects, ``metadata`` and ``expected``
stay open.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentcli.errors import CaseFileError, ConfigError
from agentcli.eval.cases.files import display_path, read_items, schema_problems
from agentcli.eval.cases.inputs import build_messages, messages_text, normalize_input
from agentcli.eval.checks.assertions import validate_assertion
from agentcli.jsonsafe import json_type_words

__all__ = [
    "Assertion",
    "Case",
    "CaseInfo",
    "CaseOptions",
    "CaseSet",
    "CaseSource",
    "Checkpoint",
    "Simulator",
    "SimulatorOptions",
    "input_text",
    "load_cases",
    "normalize_input",
    "open_cases",
    "parse_case",
    "parse_duration",
]

DEFAULT_MAX_TURNS = 20
# A systematic mistake in a 100k-line file should not print 100k lines.
MAX_PROBLEMS = 100

_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


@dataclass(slots=True)
class Assertion:
    """One check on a case's output: ``{type, value, path, script, use, options, message, negate}``."""

    type: str
    value: Any = None
    path: str | None = None
    script: str | None = None
    use: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    message: str | None = None
    negate: bool = False

    @classmethod
    def from_obj(cls, obj: dict[str, Any] | str) -> Assertion:
        """From a schema-valid assertion object, or a bare type name."""
        if isinstance(obj, str):
            return cls(type=obj)
        return cls(
            type=obj["type"],
            value=obj.get("value"),
            path=obj.get("path"),
            script=obj.get("script"),
            use=obj.get("use"),
            options=dict(obj.get("options") or {}),
            message=obj.get("message"),
            negate=bool(obj.get("negate", False)),
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON form with only the fields that are set (``type`` first)."""
        data: dict[str, Any] = {"type": self.type}
        for key in ("value", "path", "script", "use"):
            if getattr(self, key) is not None:
                data[key] = getattr(self, key)
        if self.options:
            data["options"] = self.options
        if self.message is not None:
            data["message"] = self.message
        if self.negate:
            data["negate"] = True
        return data


@dataclass(slots=True)
class CaseOptions:
    """Per-case agent options: connector, mode, metadata for the hooks, skip flags."""

    connector: str | None = None
    mode: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    skip: dict[str, bool] = field(default_factory=dict)


@dataclass(slots=True)
class SimulatorOptions:
    """What the simulator gets: persona/goal/extra metadata and its connector."""

    metadata: dict[str, Any] = field(default_factory=dict)
    connector: str | None = None


@dataclass(slots=True)
class Simulator:
    """The simulated user of a dynamic case (``use`` falls back to ``--simulator``)."""

    use: str | None = None
    options: SimulatorOptions = field(default_factory=SimulatorOptions)


@dataclass(slots=True)
class Checkpoint:
    """A goal of a dynamic case, asserted after each turn once its ``after`` ids are reached."""

    id: str
    assert_: list[Assertion]
    description: str | None = None
    after: list[str] = field(default_factory=list)
    required: bool = True


@dataclass(slots=True, frozen=True)
class CaseSource:
    """Where a case was defined (``file`` as shown to the user)."""

    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(slots=True)
class Case:
    """One eval case, as written in the case file (SPEC 5.3), plus its normalised messages."""

    id: str
    input: Any = None
    assert_: list[Assertion] = field(default_factory=list)
    expected: Any = None
    user: str | None = None
    team: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    options: CaseOptions = field(default_factory=CaseOptions)
    skip: bool = False
    timeout: float | None = None
    before: str | None = None
    after: str | None = None
    simulator: Simulator | None = None
    checkpoints: list[Checkpoint] = field(default_factory=list)
    max_turns: int = DEFAULT_MAX_TURNS
    source: CaseSource | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)

    @property
    def is_dynamic(self) -> bool:
        """True for a simulator conversation (a case with checkpoints)."""
        return bool(self.checkpoints)

    def effective_assertions(self) -> list[Assertion]:
        """``assert``, or an ``equals`` on ``expected`` when there is no assert."""
        if self.assert_ or self.expected is None:
            return self.assert_
        return [Assertion(type="equals", value=self.expected)]

    def build_messages(self) -> list[dict[str, Any]]:
        """The input as model-ready messages (local files read and encoded now)."""
        return build_messages(self.messages)

    def to_dict(self) -> dict[str, Any]:
        """The case as a case-file object (defaults left out); used by ``--dry-run``."""
        data: dict[str, Any] = {"id": self.id}
        if self.input is not None:
            data["input"] = self.input
        if self.assert_:
            data["assert"] = [a.to_dict() for a in self.assert_]
        optional = {
            "expected": self.expected,
            "user": self.user,
            "team": self.team,
            "metadata": self.metadata or None,
            "options": _options_dict(self.options),
            "skip": self.skip or None,
            "timeout": self.timeout,
            "before": self.before,
            "after": self.after,
            "simulator": _simulator_dict(self.simulator),
            "checkpoints": [_checkpoint_dict(c) for c in self.checkpoints] or None,
            "max_turns": self.max_turns if self.max_turns != DEFAULT_MAX_TURNS else None,
        }
        data.update((k, v) for k, v in optional.items() if v is not None)
        return data


def _options_dict(options: CaseOptions) -> dict[str, Any] | None:
    """Case-file form of ``options`` (None when all defaults)."""
    data = {
        k: v
        for k, v in (
            ("connector", options.connector),
            ("mode", options.mode),
            ("metadata", options.metadata),
            ("skip", options.skip),
        )
        if v
    }
    return data or None


def _simulator_dict(simulator: Simulator | None) -> dict[str, Any] | None:
    """Case-file form of ``simulator``."""
    if simulator is None:
        return None
    data: dict[str, Any] = {}
    if simulator.use:
        data["use"] = simulator.use
    opts = {"metadata": simulator.options.metadata, "connector": simulator.options.connector}
    opts = {k: v for k, v in opts.items() if v}
    if opts:
        data["options"] = opts
    return data


def _checkpoint_dict(checkpoint: Checkpoint) -> dict[str, Any]:
    """Case-file form of a checkpoint."""
    data: dict[str, Any] = {"id": checkpoint.id}
    if checkpoint.description is not None:
        data["description"] = checkpoint.description
    data["assert"] = [a.to_dict() for a in checkpoint.assert_]
    if checkpoint.after:
        data["after"] = checkpoint.after
    if not checkpoint.required:
        data["required"] = False
    return data


def input_text(case: Case) -> str:
    """The case input as one line of text for the console and reports."""
    if isinstance(case.input, str):
        return case.input
    return messages_text(case.messages)


def parse_duration(value: Any) -> float:
    """Seconds from a number or ``"30s"``, ``"2m"``, ``"1h"``, ``"1500ms"``, ``"1m30s"``."""
    seconds: float | None = None
    if isinstance(value, int | float) and not isinstance(value, bool):
        seconds = float(value)
    elif isinstance(value, str):
        text = value.strip().lower()
        if re.fullmatch(r"\d+(?:\.\d+)?", text):
            seconds = float(text)
        elif text and _DURATION_PART.sub("", text) == "":
            seconds = sum(float(n) * _UNIT_SECONDS[u] for n, u in _DURATION_PART.findall(text))
    if seconds is None or not math.isfinite(seconds) or seconds <= 0:
        raise ConfigError(
            f"invalid duration {json.dumps(value, default=str)}: "
            "use seconds or a number with a unit, e.g. 30s, 2m, 1h, 1500ms"
        )
    return seconds


# --- loading -------------------------------------------------------------------------------


def load_cases(path: Path, *, project_root: Path) -> list[Case]:
    """Every case of a ``.jsonl``, ``.json`` or ``.yaml/.yml`` file; all problems raised at once."""
    cases: list[Case] = []
    _scan(path, project_root, cases.append)
    return cases


@dataclass(slots=True, frozen=True)
class CaseInfo:
    """What a run must know of a case before running it (checks, counts, filters)."""

    id: str
    skip: bool
    connector: str | None
    dynamic: bool
    simulator: str | None
    hooks: tuple[str, ...] = ()  # the case's before/after references

    @classmethod
    def of(cls, case: Case) -> CaseInfo:
        """The info of a parsed case."""
        return cls(
            id=case.id,
            skip=bool(case.skip),
            connector=case.options.connector,
            dynamic=case.is_dynamic,
            simulator=case.simulator.use if case.simulator is not None else None,
            hooks=tuple(ref for ref in (case.before, case.after) if ref),
        )


class CaseSet:
    """The cases of a run. From a ``.jsonl`` file they are parsed again, case by case, as the
    run iterates them, so a 100,000-case file is never held in memory as objects; other
    sources (read whole anyway) keep their cases. ``where`` narrows the set by id."""

    def __init__(
        self,
        infos: list[CaseInfo],
        *,
        cases: list[Case] | None = None,
        path: Path | None = None,
        project_root: Path | None = None,
        ids: frozenset[str] | None = None,
    ) -> None:
        self.infos = infos
        self.path = path
        self.project_root = project_root
        self._cases = cases
        self._ids = ids

    @classmethod
    def of(cls, cases: list[Case]) -> CaseSet:
        """A set over cases already parsed (generated cases, script tests)."""
        return cls([CaseInfo.of(c) for c in cases], cases=list(cases))

    def where(self, keep: Callable[[str], bool]) -> CaseSet:
        """The cases whose id ``keep`` accepts, in the same order."""
        infos = [info for info in self.infos if keep(info.id)]
        ids = frozenset(info.id for info in infos)
        return CaseSet(
            infos, cases=self._cases, path=self.path, project_root=self.project_root, ids=ids
        )

    def __len__(self) -> int:
        return len(self.infos)

    def __iter__(self) -> Iterator[Case]:
        for case in self._all():
            if self._ids is None or case.id in self._ids:
                yield case

    def _all(self) -> Iterator[Case]:
        if self._cases is not None:
            yield from self._cases
            return
        assert self.path is not None and self.project_root is not None
        shown = display_path(str(self.path))
        problems: list[str] = []
        for line, obj in read_items(self.path, shown, problems):
            yield parse_case(
                obj,
                source_file=self.path,
                line=line,
                project_root=self.project_root,
                validated=True,
            )
        if problems:
            raise CaseFileError(problems, hint="the file changed while the run was reading it")


def open_cases(path: Path, *, project_root: Path) -> CaseSet:
    """Validate a case file completely (every problem raised at once, before anything runs)
    and return it as a ``CaseSet``."""
    streamed = path.suffix.lower() == ".jsonl"
    infos: list[CaseInfo] = []
    kept: list[Case] | None = None if streamed else []

    def add(case: Case) -> None:
        infos.append(CaseInfo.of(case))
        if kept is not None:
            kept.append(case)

    _scan(path, project_root, add)
    return CaseSet(infos, cases=kept, path=path, project_root=project_root)


def _scan(path: Path, project_root: Path, add: Callable[[Case], None]) -> None:
    """Parse and validate every case, handing each to ``add``; raise every problem at once."""
    shown = display_path(str(path))
    suffix = path.suffix.lower()
    if suffix not in (".jsonl", ".json", ".yaml", ".yml"):
        raise CaseFileError(f"{shown}: unsupported case file type; use .jsonl, .json or .yaml")
    if not path.is_file():
        raise CaseFileError(f"{shown}: file not found")
    problems: list[str] = []
    count = 0
    first_line: dict[str, int] = {}
    try:
        for line, obj in read_items(path, shown, problems):
            if not isinstance(obj, dict):
                problems.append(
                    f"{shown}:{line}: a case must be an object, got {json_type_words(obj, array='a list')}"
                )
                continue
            case_id = obj.get("id")
            if isinstance(case_id, str) and case_id:
                if case_id in first_line:
                    problems.append(
                        f"{shown}:{line}: duplicate id {json.dumps(case_id, ensure_ascii=False)}"
                        f" (first defined at line {first_line[case_id]})"
                    )
                else:
                    first_line[case_id] = line
            try:
                add(parse_case(obj, source_file=path, line=line, project_root=project_root))
                count += 1
            except CaseFileError as exc:
                problems.extend(exc.problems)
    except UnicodeDecodeError as exc:
        problems.append(f"{shown}: not UTF-8 text ({exc.reason} at byte {exc.start})")
    except OSError as exc:
        problems.append(f"{shown}: cannot read: {exc.strerror}")
    if not count and not problems:
        problems.append(f"{shown}: no cases found")
    if problems:
        if len(problems) > MAX_PROBLEMS:
            hidden = len(problems) - MAX_PROBLEMS
            problems = [*problems[:MAX_PROBLEMS], f"... and {hidden} more problems"]
        raise CaseFileError(problems)


# --- parsing one case ---------------------------------------------------------------------


def parse_case(
    obj: dict[str, Any],
    *,
    source_file: Path | str,
    line: int,
    project_root: Path,
    validated: bool = False,
) -> Case:
    """A validated ``Case`` from one case object; raises ``CaseFileError`` listing its problems.
    ``validated`` skips the schema check for an object already checked (a streamed file's
    second reading)."""
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
        options=_case_options(obj.get("options") or {}),
        skip=bool(obj.get("skip", False)),
        before=obj.get("before"),
        after=obj.get("after"),
        simulator=_simulator(obj["simulator"]) if "simulator" in obj else None,
        checkpoints=_checkpoints(obj.get("checkpoints") or [], found),
        max_turns=obj.get("max_turns", DEFAULT_MAX_TURNS),
        source=CaseSource(shown, line),
    )
    for hook in ("before", "after"):
        ref = getattr(case, hook)
        if ref is not None and not re.fullmatch(r"[\w./-]+\.[A-Za-z_]\w*", ref):
            found.append(f'{hook}: hook reference must be "<file>.<Func>", got {json.dumps(ref)}')
    if "timeout" in obj:
        try:
            case.timeout = parse_duration(obj["timeout"])
        except ConfigError as exc:
            found.append(f"timeout: {exc.message}")
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


def _case_options(raw: dict[str, Any]) -> CaseOptions:
    """``options`` of a schema-valid case."""
    return CaseOptions(
        connector=raw.get("connector"),
        mode=raw.get("mode"),
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
    """One ``after`` cycle (as a path of ids) if the checkpoints have one."""
    graph = {c.id: [d for d in c.after if d != c.id] for c in checkpoints}
    state: dict[str, int] = {}  # 1 = on the current path, 2 = finished
    for node in graph:
        if node not in state:
            cycle = _visit(graph, state, node, [node])
            if cycle:
                return cycle
    return None


def _visit(
    graph: dict[str, list[str]], state: dict[str, int], node: str, path: list[str]
) -> list[str] | None:
    """Depth-first from ``node``; the cycle found, if any. (Not a closure: a recursive
    closure is a reference cycle, and this runs for every case.)"""
    state[node] = 1
    for dep in graph.get(node, []):
        if state.get(dep) == 1:
            return [*path[path.index(dep) :], dep]
        if dep in graph and dep not in state:
            cycle = _visit(graph, state, dep, [*path, dep])
            if cycle:
                return cycle
    state[node] = 2
    return None

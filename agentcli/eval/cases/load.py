"""Case files to cases: ``open_cases`` validates a whole ``.jsonl`` / ``.json`` / ``.yaml``
file before anything runs (every problem of the file raised together as one
``CaseFileError`` of ``file:line: message`` entries) and gives a ``CaseSet``, which streams
a ``.jsonl`` file's cases to the run instead of holding them all.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from agentcli.errors import CaseFileError
from agentcli.eval.cases.files import defaults_problems, display_path, read_items
from agentcli.eval.cases.model import Assertion, Case, CaseSource
from agentcli.eval.cases.parse import parse_case
from agentcli.eval.cases.world import CaseTools
from agentcli.eval.cases.world_parse import DEFAULTS_KEY, is_defaults, read_tools
from agentcli.faults import FaultPlan
from agentcli.jsonsafe import json_type_words

__all__ = ["KEEP_PARSED", "MAX_PROBLEMS", "CaseInfo", "CaseSet", "load_cases", "open_cases"]

# A systematic mistake in a 100k-line file should not print 100k lines.
MAX_PROBLEMS = 100

# A .jsonl file of up to this many cases keeps the cases its validation parsed (a few MB),
# so the run does not parse each one again on the network path (W2); a longer file is
# parsed again case by case as the run goes, so 100,000 cases are never held (W3).
KEEP_PARSED = 5_000


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
    faults: FaultPlan | None = None  # its tools.faults (None: the run's --faults)
    source: CaseSource | None = None  # where the case is defined (file:line)
    judges: tuple[tuple[str, str | None], ...] = ()  # (use, connector) of agent assertions
    scripts: tuple[str, ...] = ()  # the functions of script assertions
    tags: tuple[str, ...] = ()  # for --tag / --exclude-tag
    state_models: tuple[str, ...] = ()  # the data models its state.before seeds
    # Nothing can fail it but an error: no assertion, no expected, no checkpoint, no After
    # hook (which may fail it) -- worth a warning before the run.
    unchecked: bool = False

    @classmethod
    def of(cls, case: Case) -> CaseInfo:
        """The info of a parsed case."""
        checks = [*case.assert_, *(a for point in case.checkpoints for a in point.assert_)]
        judges = {(a.use, _connector(a)) for a in checks if a.type == "agent" and a.use}
        scripts = {a.script for a in checks if a.type == "script" and a.script}
        return cls(
            id=case.id,
            skip=bool(case.skip),
            connector=case.options.connector,
            dynamic=case.is_dynamic,
            simulator=case.simulator.use if case.simulator is not None else None,
            hooks=tuple(ref for ref in (case.before, case.after) if ref),
            faults=case.tools.faults if case.tools is not None else None,
            source=case.source,
            judges=tuple(sorted(judges, key=str)) if judges else (),
            scripts=tuple(sorted(scripts)) if scripts else (),
            tags=tuple(case.tags),
            state_models=tuple(case.state_before.models) if case.state_before else (),
            unchecked=not (case.effective_assertions() or case.checkpoints or case.after),
        )


def _connector(assertion: Assertion) -> str | None:
    """The connector an ``agent`` assertion asks its judge to use (``options.connector``)."""
    value = (assertion.options or {}).get("connector")
    return value if isinstance(value, str) and value else None


class CaseSet:
    """The cases of a run. From a ``.jsonl`` file of more than ``KEEP_PARSED`` cases they are
    parsed again, case by case, as the run iterates them, so a 100,000-case file is never
    held in memory as objects; smaller files and other sources keep their cases. ``where``
    narrows the set by id."""

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
        return self.matching(lambda info: keep(info.id))

    def matching(self, keep: Callable[[CaseInfo], bool]) -> CaseSet:
        """The cases whose info ``keep`` accepts (ids, tags), in the same order."""
        infos = [info for info in self.infos if keep(info)]
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
        defaults: CaseTools | None = None
        for line, obj in read_items(self.path, shown, problems):
            if is_defaults(obj):
                defaults = read_defaults(obj, f"{shown}:{line}: ", problems)
                continue
            yield parse_case(
                obj,
                source_file=self.path,
                line=line,
                project_root=self.project_root,
                validated=True,
                defaults=defaults,
            )
        if problems:
            raise CaseFileError(problems, hint="the file changed while the run was reading it")


def open_cases(path: Path, *, project_root: Path) -> CaseSet:
    """Validate a case file completely (every problem raised at once, before anything runs)
    and return it as a ``CaseSet``."""
    streamed = path.suffix.lower() == ".jsonl"
    infos: list[CaseInfo] = []
    kept: list[Case] = []

    def add(case: Case) -> None:
        infos.append(CaseInfo.of(case))
        if not streamed or len(kept) < KEEP_PARSED:
            kept.append(case)

    _scan(path, project_root, add)
    whole = not streamed or len(infos) <= KEEP_PARSED
    return CaseSet(infos, cases=kept if whole else None, path=path, project_root=project_root)


def read_defaults(obj: dict[str, object], prefix: str, problems: list[str]) -> CaseTools | None:
    """The ``tools`` of a case file's ``{"defaults": {...}}`` item (its problems added to
    ``problems``, each after ``prefix``, the item's ``file:line: ``)."""
    found = defaults_problems(obj)
    tools = None
    raw = obj[DEFAULTS_KEY]
    if not found and isinstance(raw, dict) and "tools" in raw:
        tools = read_tools(raw["tools"], f"{DEFAULTS_KEY}.tools", found)
    problems.extend(prefix + problem for problem in found)
    return None if found else tools


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
    defaults: CaseTools | None = None
    cases_seen = False
    try:
        for line, obj in read_items(path, shown, problems):
            if is_defaults(obj):
                if cases_seen:
                    problems.append(
                        f"{shown}:{line}: {DEFAULTS_KEY} must be the file's first item"
                        " (before every case)"
                    )
                else:
                    defaults = read_defaults(obj, f"{shown}:{line}: ", problems)
                continue
            cases_seen = True
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
                add(
                    parse_case(
                        obj,
                        source_file=path,
                        line=line,
                        project_root=project_root,
                        defaults=defaults,
                    )
                )
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

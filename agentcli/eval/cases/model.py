"""Eval cases as values: ``Case`` and what it holds (assertions, options, the simulator,
checkpoints, where it was defined), as a case file writes them (SPEC 5.3).

Reading them: ``parse.py`` turns one case object into a ``Case`` (every problem found);
``load.py`` validates whole files and streams their cases to a run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentcli.eval.cases.inputs import build_messages, messages_text
from agentcli.eval.cases.world import CaseTools

__all__ = [
    "DEFAULT_MAX_TURNS",
    "Assertion",
    "Case",
    "CaseOptions",
    "CaseSource",
    "Checkpoint",
    "Simulator",
    "SimulatorOptions",
    "StateFixture",
    "input_text",
]

DEFAULT_MAX_TURNS = 20


@dataclass(slots=True)
class Assertion:
    """One check on a case's output: ``{type, value, path, script, use, options, message,
    negate, min, max}`` (``min``/``max``: the bounds of a count, as ``steps`` takes them; a
    ``trajectory`` also takes ``mode``, ``arguments_mode`` and ``scope``; a ``file``
    ``contains``, ``exists``, ``json_path`` and ``regex``)."""

    type: str
    value: Any = None
    path: str | None = None
    script: str | None = None
    use: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    message: str | None = None
    negate: bool = False
    minimum: int | None = None  # "min"
    maximum: int | None = None  # "max"
    mode: str | None = None
    arguments_mode: str | None = None
    scope: str | None = None
    # file: what the named file (``path``) of the case's sandbox must hold
    contains: str | None = None
    exists: bool | None = None
    json_path: str | None = None
    regex: str | None = None
    judge_samples: int | None = None  # agent: how many times the judge is asked
    query: str | dict[str, Any] | None = None  # state: SQL text or a model query

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
            use=obj.get("use") or _default_use(obj["type"]),
            options=dict(obj.get("options") or {}),
            message=obj.get("message"),
            negate=bool(obj.get("negate", False)),
            minimum=_whole(obj.get("min")),
            maximum=_whole(obj.get("max")),
            mode=obj.get("mode"),
            arguments_mode=obj.get("arguments_mode"),
            scope=obj.get("scope"),
            contains=obj.get("contains"),
            exists=obj.get("exists"),
            json_path=obj.get("json_path"),
            regex=obj.get("regex"),
            judge_samples=_whole(obj.get("judge_samples")),
            query=obj.get("query"),
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON form with only the fields that are set (``type`` first)."""
        data: dict[str, Any] = {"type": self.type}
        for key in _OPTIONAL_KEYS:
            if getattr(self, key) is not None:
                data[key] = getattr(self, key)
        if self.options:
            data["options"] = self.options
        if self.message is not None:
            data["message"] = self.message
        if self.negate:
            data["negate"] = True
        if self.minimum is not None:
            data["min"] = self.minimum
        if self.maximum is not None:
            data["max"] = self.maximum
        if self.judge_samples is not None:
            data["judge_samples"] = self.judge_samples
        return data


_OPTIONAL_KEYS = (
    "value", "path", "script", "use", "mode", "arguments_mode", "scope",
    "contains", "exists", "json_path", "regex", "query",
)  # fmt: skip


def _default_use(kind: str) -> str | None:
    """The judge an ``agent`` assertion without ``use`` asks: the shipped validator, so a
    project of its own has one without copying it."""
    if kind != "agent":
        return None
    from agentcli.builtin import DEFAULT_JUDGE

    return DEFAULT_JUDGE


def _whole(value: Any) -> int | None:
    """A schema-valid integer bound (``2.0`` is an integer to JSON Schema) as an int."""
    return int(value) if value is not None else None


@dataclass(slots=True)
class CaseOptions:
    """Per-case agent options: connector, mode, step limit, metadata for the hooks, skip
    flags."""

    connector: str | None = None
    mode: str | None = None
    max_steps: int | None = None
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


@dataclass(slots=True)
class StateFixture:
    """``state.before`` of a case: memory values by namespace and owner
    (``{"user": {"test-user": {"budget": 100}}}``) and the rows each data model's table
    holds when the case starts (``{"order": [{...}]}``: the table emptied, then filled)."""

    memory: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    models: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON form (as the case file writes it under ``state.before``)."""
        data: dict[str, Any] = {}
        if self.memory:
            data["memory"] = self.memory
        if self.models:
            data["models"] = self.models
        return data


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
    tags: list[str] = field(default_factory=list)  # for --tag / --exclude-tag selection
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
    sandbox: dict[str, Any] | None = None  # over the package's sandbox (spec.merge_spec)
    tools: CaseTools | None = None  # stubs, unmatched, faults (with the file's defaults)
    state_before: StateFixture | None = None  # "state": {"before": ...}

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
            "tags": list(self.tags) or None,
            "options": _options_dict(self.options),
            "skip": self.skip or None,
            "timeout": self.timeout,
            "before": self.before,
            "after": self.after,
            "simulator": _simulator_dict(self.simulator),
            "checkpoints": [_checkpoint_dict(c) for c in self.checkpoints] or None,
            "max_turns": self.max_turns if self.max_turns != DEFAULT_MAX_TURNS else None,
            "sandbox": self.sandbox,
            "tools": (self.tools.to_dict() or None) if self.tools is not None else None,
            "state": {"before": self.state_before.to_dict()} if self.state_before else None,
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
            ("max_steps", options.max_steps),
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

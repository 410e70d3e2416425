"""What ``agent eval`` was asked: the parsed options, the kind of input, the ``--ctx``
file, and the checks that need nothing loaded (options a single message cannot take)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from agentcli.datafiles import loads_json, read_text
from agentcli.errors import ConfigError, PackageError
from agentcli.eval.run.runner import DEFAULT_TIMEOUT
from agentcli.eval.run.services import EvalContext

__all__ = [
    "CASE_EXTENSIONS",
    "EvalRequest",
    "InputSpec",
    "classify_input",
    "load_context_file",
    "refuse_case_options",
]

CASE_EXTENSIONS = (".jsonl", ".json", ".yaml", ".yml")


@dataclass(slots=True)
class InputSpec:
    """What the input names: ``message`` text, a case ``file``, generated cases
    (``agents`` / ``scripts``), or ``script_tests``."""

    kind: str
    value: str
    path: Path | None = None


@dataclass(slots=True)
class EvalRequest:
    """The options of ``agent eval``, parsed."""

    assistant: str | None = None
    input: str | None = None
    root: Path | None = None
    cwd: Path = field(default_factory=Path.cwd)
    connector: str | None = None
    user: str | None = None
    team: str | None = None
    locale: str | None = None
    ctx_file: Path | None = None
    timeout: float = DEFAULT_TIMEOUT
    parallel: int = 1
    runs: int = 1
    run_filter: str | None = None
    fail_fast: bool = False
    dry_run: bool = False
    simulator: str | None = None
    before_all: str | None = None
    after_all: str | None = None
    output: Path | None = None
    scripts: str | None = None
    min_pass_rate: float = 100.0
    shard: str | None = None
    retries: int = 0
    resume: Path | None = None
    force: bool = False  # -o may replace an existing file that is not a results file


def classify_input(raw: str, cwd: Path) -> InputSpec:
    """Yao's input forms: ``@file``, a case-file path, ``agents:...``, ``scripts:...``,
    ``scripts.<assistant>.<module>``, else message text."""
    if raw.startswith("@"):
        name = raw[1:]
        if not name:
            raise ConfigError(
                "missing file path after @",
                hint="agent eval expense @assistants/expense/tests/inputs.jsonl",
            )
        path = _case_file(cwd / name, f" (resolved from {name!r})")
        return InputSpec("file", raw, path)
    if raw.startswith("agents:"):
        return InputSpec("agents", raw)
    if raw.startswith("scripts:"):
        return InputSpec("scripts", raw)
    if re.fullmatch(r"scripts\.[\w-]+(\.[\w-]+)+", raw):
        return InputSpec("script_tests", raw)
    if raw.lower().endswith(CASE_EXTENSIONS) and "\n" not in raw:
        return InputSpec("file", raw, _case_file(cwd / raw, "", hint="check the path"))
    return InputSpec("message", raw)


def _case_file(path: Path, origin: str, *, hint: str | None = None) -> Path:
    """The resolved case file ``path``; a ConfigError when it is missing, a directory or a
    name the system refuses (too long, a NUL byte)."""
    try:
        resolved = path.resolve()
        is_file, is_dir = resolved.is_file(), resolved.is_dir()
    except (OSError, ValueError) as exc:  # a name too long; ValueError: a NUL byte
        reason = getattr(exc, "strerror", None) or str(exc)
        raise ConfigError(f"cannot use case file {str(path)[:200]!r}: {reason}") from None
    if is_file:
        return resolved
    if is_dir:
        raise ConfigError(f"{resolved}{origin} is a directory, not a case file")
    raise ConfigError(f"file not found: {resolved}{origin}", hint=hint)


def load_context_file(path: Path) -> EvalContext:
    """The ``--ctx`` JSON (chat_id, authorized{user_id, team_id, ...}, metadata, locale)."""
    try:
        text = read_text(path, name=f"--ctx {path}")
    except PackageError as error:
        raise ConfigError(error.message, hint=error.hint) from None
    try:
        data = loads_json(text)
    except json.JSONDecodeError as error:
        raise ConfigError(
            f"{path}:{error.lineno}:{error.colno}: invalid JSON: {error.msg}"
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the context must be a JSON object")
    authorized = data.get("authorized") or {}
    metadata = data.get("metadata") or {}
    for name, value in (("authorized", authorized), ("metadata", metadata)):
        if not isinstance(value, dict):
            raise ConfigError(f"{path}: {name} must be an object")
    return EvalContext(
        locale=str(data.get("locale") or ""),
        user_id=str(authorized.get("user_id") or data.get("user_id") or ""),
        team_id=str(
            authorized.get("team_id") or authorized.get("tenant_id") or data.get("team_id") or ""
        ),
        chat_id=str(data.get("chat_id") or ""),
        metadata=dict(metadata),
        authorized=dict(authorized),
    )


# Options that shape a run of cases; one message has no cases, results or runs to shape.
_CASE_OPTIONS = (
    ("output", "-o/--output"),
    ("parallel", "--parallel"),
    ("runs", "--runs"),
    ("run_filter", "--run"),
    ("fail_fast", "--fail-fast"),
    ("dry_run", "--dry-run"),
    ("simulator", "--simulator"),
    ("before_all", "--before-all"),
    ("after_all", "--after-all"),
    ("min_pass_rate", "--min-pass-rate"),
    ("shard", "--shard"),
    ("retries", "--retries"),
    ("resume", "--resume"),
    ("force", "--force"),
)


def refuse_case_options(request: EvalRequest) -> None:
    """A case-run option given with a message is bad input, not silently ignored."""
    defaults = EvalRequest()
    given = [
        flag for name, flag in _CASE_OPTIONS if getattr(request, name) != getattr(defaults, name)
    ]
    if given:
        verb = "applies" if len(given) == 1 else "apply"
        raise ConfigError(
            f"{', '.join(given)} {verb} to a file of cases, not to one message",
            hint="put the message in a case file: "
            '{"id": "T001", "input": "..."} in cases.jsonl, then agent eval NAME @cases.jsonl',
        )

"""What a package or a case asks of its sandbox: ``SandboxSpec``, read from the
``sandbox`` object of package.yao and merged with a case's own ``sandbox``.

``{"backend": "local" | "bwrap", "timeout": "30s", "network": false, "tools": true,
"files": {"a.py": "..."}}``: every key optional. ``timeout`` is the default of each
``exec`` (a call's own ``timeout=`` wins); ``network`` is honoured by isolating backends
only; ``tools`` offers the ``sandbox__*`` tools to the model; ``files`` seeds the workspace.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any, Literal, get_args

from agentcli.assistant.sandbox.paths import relative_parts
from agentcli.durations import parse_duration
from agentcli.errors import ConfigError, SandboxPathError

__all__ = [
    "BACKENDS",
    "DEFAULT_EXEC_TIMEOUT",
    "SPEC_KEYS",
    "Backend",
    "SandboxSpec",
    "merge_spec",
    "parse_spec",
    "spec_problems",
]

Backend = Literal["local", "bwrap"]
BACKENDS: tuple[Backend, ...] = get_args(Backend)
DEFAULT_EXEC_TIMEOUT = 30.0
SPEC_KEYS = ("backend", "timeout", "network", "tools", "files")


@dataclass(frozen=True, slots=True)
class SandboxSpec:
    """A sandbox as asked for; ``timeout`` in seconds."""

    backend: Backend = "local"
    timeout: float = DEFAULT_EXEC_TIMEOUT
    network: bool = False
    tools: bool = False
    files: Mapping[str, str] = field(default_factory=dict)


def spec_problems(raw: Any) -> list[str]:
    """Every problem of a ``sandbox`` object, as ``sandbox.<key>: ...`` messages."""
    if not isinstance(raw, dict):
        return [f"sandbox: must be an object, got {json.dumps(raw, default=str)}"]
    problems = []
    for key in raw:
        if key not in SPEC_KEYS:
            close = difflib.get_close_matches(str(key), SPEC_KEYS, n=1, cutoff=0.6)
            hint = f' (did you mean "{close[0]}"?)' if close else f" (use {', '.join(SPEC_KEYS)})"
            problems.append(f"sandbox: unknown key {json.dumps(key)}{hint}")
    backend = raw.get("backend")
    if backend is not None and backend not in BACKENDS:
        problems.append(
            f"sandbox.backend: must be one of {', '.join(BACKENDS)}, got {json.dumps(backend)}"
        )
    if raw.get("timeout") is not None:
        try:
            parse_duration(raw["timeout"])
        except ConfigError as error:
            problems.append(f"sandbox.timeout: {error.message}")
    for key in ("network", "tools"):
        if raw.get(key) is not None and not isinstance(raw[key], bool):
            problems.append(f"sandbox.{key}: must be true or false")
    files = raw.get("files")
    if files is not None and not (
        isinstance(files, dict) and all(isinstance(v, str) for v in files.values())
    ):
        problems.append('sandbox.files: must be an object of path -> text, e.g. {"a.py": "..."}')
    elif files:
        for path in files:
            problem = _seed_path_problem(path)
            if problem is not None:
                problems.append(f"sandbox.files: {problem}")
    return problems


def _seed_path_problem(path: str) -> str | None:
    """Why a seeded file's path cannot be written (None when it can): the workspace's own
    path rules (``paths.relative_parts``), checked now rather than when a sandbox is made.
    The workdir is made new for each sandbox, so no absolute path can be inside it."""
    what_to_do = "give the file's path relative to the workdir"
    if PurePosixPath(path).is_absolute():
        return (
            f"sandbox path {path!r} is outside the workspace (the workdir is made new for"
            f" each sandbox); {what_to_do}"
        )
    try:
        parts = relative_parts(Path("."), path)  # a relative path: the workdir is not read
    except SandboxPathError as error:
        return f"{error.message}; {what_to_do}"
    if not parts:
        return f"sandbox path {path!r} is the workdir itself, not a file; {what_to_do}"
    return None


def parse_spec(raw: Mapping[str, Any], base: SandboxSpec | None = None) -> SandboxSpec:
    """The spec a valid ``sandbox`` object gives (over ``base``: a case's over its
    package's, seeded files merged); ConfigError with every problem otherwise."""
    problems = spec_problems(raw)
    if problems:
        raise ConfigError("; ".join(problems))
    spec = base or SandboxSpec()
    changes: dict[str, Any] = {}
    if raw.get("backend") is not None:
        changes["backend"] = raw["backend"]
    if raw.get("timeout") is not None:
        changes["timeout"] = parse_duration(raw["timeout"])
    for key in ("network", "tools"):
        if raw.get(key) is not None:
            changes[key] = raw[key]
    if raw.get("files"):
        changes["files"] = {**spec.files, **raw["files"]}
    return replace(spec, **changes)


def merge_spec(package: SandboxSpec | None, case: Mapping[str, Any] | None) -> SandboxSpec | None:
    """The sandbox of one case: its own ``sandbox`` over the package's (either may ask
    for one), or None when neither does."""
    if case is None:
        return package
    return parse_spec(case, package)

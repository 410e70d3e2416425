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
from typing import Any, Literal, get_args

from agentcli.durations import parse_duration
from agentcli.errors import ConfigError

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
    return problems


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

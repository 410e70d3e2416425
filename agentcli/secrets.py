"""Keeping secrets out of everything agentcli writes: reports, results files, session logs,
error messages and ``--json`` events.

A secret is the value of any environment variable whose name contains KEY, TOKEN, SECRET
or PASSWORD (the variables API keys live in), any value registered at run time (keys read
from ``connectors.yml``), and anything shaped like a well-known credential (``Bearer ...``,
``sk-...``, Google ``AIza...`` keys, ``api_key=...`` pairs).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["REDACTED", "is_secret_name", "redact_data", "redact_text", "register_secret"]

REDACTED = "[redacted]"
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD", re.IGNORECASE)
_MIN_LENGTH = 6  # shorter values ("1", "true") would redact ordinary words
CREDENTIAL_PATTERNS = [
    re.compile(r"(?i)\bbearer\s+[^\s\"',;]+"),
    re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_\-]{16,}"),
    re.compile(r"\bAIza[0-9A-Za-z_\-]{20,}"),
    re.compile(
        r"(?i)((?:api[_-]?key|access[_-]?token|secret|password|authorization|x-api-key)"
        r"[\"']?\s*[:=]\s*[\"']?)[^\s\"'&,;}]+"
    ),
]
_registered: set[str] = set()
_cache: dict[str, Any] = {"key": None, "pattern": None}


def is_secret_name(name: str) -> bool:
    """Whether an environment variable of this name holds a secret."""
    return bool(_SECRET_NAME.search(name))


def register_secret(value: str | None) -> None:
    """Treat ``value`` as a secret from now on (e.g. a key from connectors.yml)."""
    if value and len(value) >= _MIN_LENGTH and value.lower() != "none":
        _registered.add(value)


def _values_pattern(env: Mapping[str, str]) -> re.Pattern[str] | None:
    values = {v for k, v in env.items() if is_secret_name(k) and len(v) >= _MIN_LENGTH}
    values |= _registered
    key = frozenset(values)
    if _cache["key"] != key:
        longest_first = sorted(values, key=len, reverse=True)
        _cache["pattern"] = re.compile("|".join(map(re.escape, longest_first))) if values else None
        _cache["key"] = key
    return _cache["pattern"]


def redact_text(text: str, env: Mapping[str, str] | None = None) -> str:
    """``text`` with every secret value and credential-shaped string replaced."""
    pattern = _values_pattern(os.environ if env is None else env)
    if pattern is not None:
        text = pattern.sub(REDACTED, text)
    for credential in CREDENTIAL_PATTERNS:
        text = credential.sub(lambda m: (m.group(1) if m.groups() else "") + REDACTED, text)
    return text


def redact_data(value: Any, env: Mapping[str, str] | None = None) -> Any:
    """A copy of a JSON-like value with every string redacted (unchanged values are shared)."""
    if isinstance(value, str):
        return redact_text(value, env)
    if isinstance(value, dict):
        return {
            redact_text(k, env) if isinstance(k, str) else k: redact_data(v, env)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact_data(v, env) for v in value]
    return value

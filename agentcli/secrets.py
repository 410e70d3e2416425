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
from dataclasses import dataclass
from typing import Any

__all__ = [
    "REDACTED",
    "is_secret_name",
    "StreamRedactor",
    "redact_data",
    "redact_text",
    "refresh_secrets",
    "register_secret",
]

REDACTED = "[redacted]"
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD", re.IGNORECASE)
_MIN_LENGTH = 6  # shorter values ("1", "true") would redact ordinary words
CREDENTIAL_PATTERNS = [
    re.compile(r"(?i)\bbearer\s+[^\s\"',;]+"),
    re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_\-]{16,}"),
    re.compile(r"\bAIza[0-9A-Za-z_\-]{20,}"),
    re.compile(
        r"(?i)((?:api[_-]?key|access[_-]?token|secret|password|authorization|x-api-key)"
        # ...but not a placeholder (<your key>) or a reference ($ENV.NAME): those are advice
        r"[\"']?\s*[:=]\s*[\"']?)(?![<$])[^\s\"'&,;}]+"
    ),
]
# What each credential pattern starts with, lower-cased: the patterns are tried only where
# one of these occurs. A plain substring search is linear and fast; the patterns themselves
# (a word boundary, case-insensitive alternatives) cost ~1 µs a character when searched
# over a long text — 13 s for a 20 MB answer, longer than the case it came from.
_LEADS = [
    ("bearer",),
    ("sk-", "pk-", "rk-"),
    ("aiza",),
    ("api", "access", "secret", "password", "authorization", "x-api-key"),
]
_ANY_LEAD = re.compile("|".join(re.escape(lead) for leads in _LEADS for lead in leads))
_registered: set[str] = set()


@dataclass(slots=True)
class _Collected:
    """The process's secret values as one pattern, collected on first use."""

    pattern: re.Pattern[str] | None = None
    ready: bool = False


_process = _Collected()


def is_secret_name(name: str) -> bool:
    """Whether an environment variable of this name holds a secret."""
    return bool(_SECRET_NAME.search(name))


def register_secret(value: str | None) -> None:
    """Treat ``value`` as a secret from now on (e.g. a key from connectors.yml)."""
    if value and len(value) >= _MIN_LENGTH and value.lower() != "none":
        _registered.add(value)
        refresh_secrets()


def refresh_secrets() -> None:
    """Read the environment again on the next redaction (the process's secrets are
    collected once, because scanning the environment per string would cost more than the
    rest of a run)."""
    _process.ready = False


def _values_pattern(env: Mapping[str, str]) -> re.Pattern[str] | None:
    values = {v for k, v in env.items() if is_secret_name(k) and len(v) >= _MIN_LENGTH}
    values |= _registered
    if not values:
        return None
    longest_first = sorted(values, key=len, reverse=True)
    return re.compile("|".join(map(re.escape, longest_first)))


def _pattern(env: Mapping[str, str] | None) -> re.Pattern[str] | None:
    if env is not None:
        return _values_pattern(env)
    if not _process.ready:
        _process.pattern = _values_pattern(os.environ)
        _process.ready = True
    return _process.pattern


def redact_text(text: str, env: Mapping[str, str] | None = None) -> str:
    """``text`` with every secret value and credential-shaped string replaced (``env``
    defaults to the process environment as first seen)."""
    pattern = _pattern(env)
    if pattern is not None and pattern.search(text):
        text = pattern.sub(REDACTED, text)
    if _ANY_LEAD.search(text.lower()) is None:
        return text  # most strings
    for credential, leads in zip(CREDENTIAL_PATTERNS, _LEADS, strict=True):
        text = _redact_credential(text, credential, leads)
    return text


def _credential_replacement(match: re.Match[str]) -> str:
    return (match.group(1) if match.groups() else "") + REDACTED


def _redact_credential(text: str, credential: re.Pattern[str], leads: tuple[str, ...]) -> str:
    """``credential`` replaced in ``text``, tried only where one of its ``leads`` occurs."""
    lowered = text.lower()
    if len(lowered) != len(text):  # a character whose lower case is longer: no index map
        return credential.sub(_credential_replacement, text)
    starts: list[int] = []
    for lead in leads:
        at = lowered.find(lead)
        while at != -1:
            starts.append(at)
            at = lowered.find(lead, at + 1)
    if not starts:
        return text
    pieces: list[str] = []
    done = 0
    for start in sorted(starts):
        if start < done:
            continue
        match = credential.match(text, start)
        if match is not None:
            pieces.append(text[done:start])
            pieces.append(_credential_replacement(match))
            done = match.end()
    if not pieces:
        return text
    pieces.append(text[done:])
    return "".join(pieces)


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


# Where streamed text may be cut: after a character no key or token contains. The run of
# key characters at the end is matched on the reversed text, which reads only that run
# (finding the last safe character forwards read every character of every piece).
_KEY_RUN = re.compile(r"[A-Za-z0-9_\-.+/=~]*")
# A credential's lead at the end of the released text ("Bearer ", "api_key: "): held too,
# so the value after it is seen together with it.
_LEAD = re.compile(
    r"(?i)(?:bearer|api[_-]?key|access[_-]?token|secret|password|authorization|x-api-key)"
    r"[\"']?\s*[:=]?\s*[\"']?$"
)
_MAX_HELD = 512
_LEAD_WINDOW = 256  # the longest lead looked for ("authorization" and its spacing)


class StreamRedactor:
    """Redacts text that arrives in pieces (a streamed answer): a secret split across two
    pieces is still caught, because text is released only up to the last character no key
    contains, and a run longer than any key is released (redacted) anyway."""

    def __init__(self) -> None:
        self._held = ""

    def feed(self, text: str) -> str:
        """The redacted text that can be shown now; the rest waits for more."""
        held = self._held + text
        # _KEY_RUN ends in ``*``: it always matches, if only the empty string
        cut = len(held) - _KEY_RUN.match(held[::-1]).end()  # type: ignore[union-attr]
        if len(held) - cut > _MAX_HELD:
            cut = len(held)
        lead = _LEAD.search(held, max(0, cut - _LEAD_WINDOW), cut)
        if lead is not None:
            cut = lead.start()
        self._held = held[cut:]
        return redact_text(held[:cut]) if cut else ""

    def flush(self) -> str:
        """Whatever is still held, redacted (the end of the stream)."""
        held, self._held = self._held, ""
        return redact_text(held) if held else ""

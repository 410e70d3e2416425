"""Secrets out of typed results: a copy of a result, header or summary with every string in
it redacted, as ``secrets.redact_data`` does for JSON values (dict keys included)."""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from typing import Any, TypeVar

from agentcli.secrets import redact_data, redact_text

__all__ = ["redacted"]

T = TypeVar("T")

_LEAVES = frozenset({int, float, bool, type(None)})
_FIELDS: dict[type, tuple[str, ...] | None] = {}  # per type: its dataclass fields, or None


def _fields_of(kind: type) -> tuple[str, ...] | None:
    """The field names of a dataclass type, ``None`` for any other type (looked up once)."""
    try:
        return _FIELDS[kind]
    except KeyError:
        names = tuple(f.name for f in fields(kind)) if is_dataclass(kind) else None
        _FIELDS[kind] = names
        return names


def redacted(value: T) -> T:
    """``value`` with every string redacted: JSON values, and the dataclasses of results
    (results, traces, tool calls, usage...) field by field, copied."""
    # The walk rebuilds each value as its own type (dataclasses field by field, JSON values
    # as JSON values), which the recursive walk over Any cannot express.
    copy: T = _redacted(value)
    return copy


def _redacted(value: Any) -> Any:
    kind = type(value)
    if kind in _LEAVES:
        return value
    if kind is str:
        return redact_text(value)
    if kind is dict:
        return {redact_text(k) if type(k) is str else k: _redacted(v) for k, v in value.items()}
    if kind is list or kind is tuple:
        return [_redacted(v) for v in value]
    names = _fields_of(kind)
    if names is None:  # subclasses of the JSON types, as redact_data takes them
        return redact_data(value) if isinstance(value, str | dict | list | tuple) else value
    copy = object.__new__(kind)
    for name in names:
        # object.__setattr__: no __init__ checks, the value is a copy of a valid one
        object.__setattr__(copy, name, _redacted(getattr(value, name)))
    return copy

"""Secrets out of typed results: a copy of a result, header or summary with every string in
it redacted, as ``secrets.redact_data`` does for JSON values (dict keys included)."""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from functools import cache
from typing import Any, TypeVar

from agentcli.secrets import redact_text

__all__ = ["redacted"]

T = TypeVar("T")


@cache
def _field_names(kind: type) -> tuple[str, ...]:
    """The field names of a dataclass type (looked up once per type)."""
    return tuple(f.name for f in fields(kind))


def redacted(value: T) -> T:
    """``value`` with every string redacted: JSON values, and the dataclasses of results
    (results, traces, tool calls, usage...) field by field, copied."""
    if isinstance(value, str):
        return redact_text(value)  # type: ignore[return-value]
    if isinstance(value, dict):
        return {  # type: ignore[return-value]
            redact_text(k) if isinstance(k, str) else k: redacted(v) for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redacted(v) for v in value]  # type: ignore[return-value]
    if not is_dataclass(value) or isinstance(value, type):
        return value  # numbers, bools, None
    kind = type(value)
    copy: Any = object.__new__(kind)
    for name in _field_names(kind):
        # object.__setattr__: bypasses __init__ checks, the value is a copy of a valid one
        object.__setattr__(copy, name, redacted(getattr(value, name)))
    return copy  # type: ignore[no-any-return]

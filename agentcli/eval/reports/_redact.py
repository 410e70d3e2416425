"""Secrets out of typed results: a result, header or summary with every string in it
redacted, as ``secrets.redact_data`` does for JSON values (dict keys included); only the
parts holding a secret are copies."""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import fields, is_dataclass
from typing import Any, TypeVar

from agentcli.secrets import redact_data, redact_text

__all__ = ["redacted"]

T = TypeVar("T")

_LEAVES = frozenset({int, float, bool, type(None)})
_Getter = Callable[[Any], tuple[Any, ...]]
# per type: its dataclass fields and a getter of all of them at once, or None
_FIELDS: dict[type, tuple[tuple[str, ...], _Getter] | None] = {}


def _fields_of(kind: type) -> tuple[tuple[str, ...], _Getter] | None:
    """The field names of a dataclass type and a getter of their values as a tuple (one C
    call rather than a getattr each), ``None`` for any other type (looked up once)."""
    try:
        return _FIELDS[kind]
    except KeyError:
        found: tuple[tuple[str, ...], _Getter] | None = None
        if is_dataclass(kind):
            names = tuple(f.name for f in fields(kind))
            if len(names) > 1:
                found = (names, operator.attrgetter(*names))
            elif names:
                found = (names, lambda value, name=names[0]: (getattr(value, name),))
        _FIELDS[kind] = found
        return found


def redacted(value: T) -> T:
    """``value`` with every string redacted: JSON values, and the dataclasses of results
    (results, traces, tool calls, usage...) field by field. Copy on change: the parts that
    hold no secret (most) are ``value``'s own, so never change what this returns."""
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
        changed = False
        items = []
        for key, item in value.items():
            clean_key = redact_text(key) if type(key) is str else key
            clean = item if type(item) in _LEAVES else _redacted(item)
            changed = changed or clean_key is not key or clean is not item
            items.append((clean_key, clean))
        return dict(items) if changed else value
    if kind is list or kind is tuple:
        cleaned = [item if type(item) in _LEAVES else _redacted(item) for item in value]
        if all(map(operator.is_, cleaned, value)):
            return value
        return cleaned if kind is list else tuple(cleaned)
    found = _fields_of(kind)
    if found is None:  # subclasses of the JSON types, as redact_data takes them
        if isinstance(value, str | dict | list | tuple):
            return redact_data(value)
        return value
    names, getter = found
    values = getter(value)
    copy = None
    for index, item in enumerate(values):
        if type(item) in _LEAVES:  # most fields are None or numbers
            continue
        clean = _redacted(item)
        if clean is not item:
            if copy is None:
                copy = object.__new__(kind)
                for name, original in zip(names, values, strict=True):
                    # no __init__ checks: the values are those of a valid instance
                    object.__setattr__(copy, name, original)
            object.__setattr__(copy, names[index], clean)
    return value if copy is None else copy

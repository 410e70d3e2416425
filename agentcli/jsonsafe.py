"""User values (a tool's result, a hook's Next data, a trace node's output) as plain JSON
values, so every writer and reader of results can take them: whatever a user function
returns, a results file is written. And the JSON type of a value, by name and in words,
for every message that says what a value is or should be."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from typing import Any, Literal, get_args

__all__ = [
    "JSON_TYPES",
    "MAX_DEPTH",
    "JsonType",
    "expected_words",
    "finite_json",
    "json_safe",
    "json_type",
    "json_type_words",
    "type_words",
]

JsonType = Literal["string", "number", "boolean", "array", "object", "null"]
JSON_TYPES: tuple[JsonType, ...] = get_args(JsonType)

MAX_DEPTH = 100  # levels of nesting kept; deeper values are cut (writers recurse per level)
# Python refuses to print an integer of more than 4,300 digits (int_max_str_digits):
# 14,000 bits is about 4,200 digits.
_MAX_INT_BITS = 14_000


def finite_json(
    value: Any,
    *,
    indent: int | None = None,
    spaced: bool = False,
    default: Callable[[Any], Any] = str,
) -> str:
    """``json.dumps`` (UTF-8 kept; compact unless ``indent`` or ``spaced``) that writes NaN
    and the infinities as ``null``, as JavaScript's JSON.stringify does: Python's bare
    ``NaN`` is no JSON, and jq or a browser refuse a file with it. Such a float (a tool's or a
    hook's) is rare, so the value is only copied when one is found."""
    options: dict[str, Any] = {
        "ensure_ascii": False,
        "indent": indent,
        "separators": None if indent or spaced else (",", ":"),
        "default": default,
        "allow_nan": False,
    }
    try:
        return json.dumps(value, **options)
    except ValueError as error:
        if "float" not in str(error):
            raise  # not that (a circular reference): as json says
        return json.dumps(_finite_only(value), **options)


def _finite_only(value: Any) -> Any:
    """``value`` with each NaN or infinite float as None (containers copied on the way)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite_only(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite_only(item) for item in value]
    return value


def json_safe(value: Any) -> Any:
    """``value`` with only JSON types in it: tuples and sets as lists, bytes decoded,
    non-string keys as strings, other objects as their ``str()``; a container inside itself,
    nesting past ``MAX_DEPTH`` and integers too long to print become short notes.
    Plain JSON comes back as it is (not copied)."""
    if type(value) in _LEAVES:
        return value
    return _safe(value, 0, set())


_LEAVES = frozenset({str, bool, float, type(None)})


def _safe(value: Any, depth: int, path: set[int]) -> Any:
    kind = type(value)
    if kind is dict or kind is list:
        if depth >= MAX_DEPTH:
            return f"<nested deeper than {MAX_DEPTH} levels>"
        marker = id(value)
        if marker in path:
            return "<circular reference>"
        path.add(marker)
        try:
            return _dict(value, depth, path) if kind is dict else _list(value, depth, path)
        finally:
            path.discard(marker)
    if kind in _LEAVES:
        return value
    if kind is int:
        if value.bit_length() > _MAX_INT_BITS:
            return f"<an integer of about {int(value.bit_length() * 0.30103) + 1:,} digits>"
        return value
    return _other(value, depth, path)


def _dict(value: dict[Any, Any], depth: int, path: set[int]) -> dict[str, Any]:
    copy: dict[str, Any] | None = None
    for index, (key, item) in enumerate(value.items()):
        safe_key = key if type(key) is str else _key(key)
        safe_item = item if type(item) in _LEAVES else _safe(item, depth + 1, path)
        if copy is None and (safe_key is not key or safe_item is not item):
            copy = dict(list(value.items())[:index])  # the plain entries before this one
        if copy is not None:
            copy[safe_key] = safe_item
    return value if copy is None else copy


def _list(value: list[Any], depth: int, path: set[int]) -> list[Any]:
    copy: list[Any] | None = None
    for index, item in enumerate(value):
        safe_item = item if type(item) in _LEAVES else _safe(item, depth + 1, path)
        if copy is None and safe_item is not item:
            copy = value[:index]
        if copy is not None:
            copy.append(safe_item)
    return value if copy is None else copy


def _other(value: Any, depth: int, path: set[int]) -> Any:
    """Anything but a plain dict, list or leaf: subclasses, tuples, sets, bytes, objects."""
    if isinstance(value, str):
        return str(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, int):
        return _safe(int(value), depth, path)
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", errors="replace")
    if isinstance(value, dict):
        return _safe(dict(value), depth, path) if id(value) not in path else "<circular reference>"
    if isinstance(value, list | tuple | set | frozenset):
        if id(value) in path:
            return "<circular reference>"
        path.add(id(value))
        try:
            return _safe(list(value), depth, path)
        finally:
            path.discard(id(value))
    try:
        return str(value)
    except Exception as error:  # a __str__ that raises: say so rather than fail the write
        return f"<{type(value).__name__} that cannot be shown: {type(error).__name__}>"


def _key(key: Any) -> str:
    """A dict key as JSON writes it (``json.dumps`` turns True into "true", None into "null")."""
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    safe = _safe(key, MAX_DEPTH - 1, set())
    return safe if isinstance(safe, str) else str(safe)


# ---------------------------------------------------------------------------- type names


def json_type(value: Any) -> str:
    """The JSON type name of a Python value (``string number boolean array object null``;
    a tuple is an array), else its Python type name (``set``, ``datetime``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


_WORDS = {
    "string": "a string",
    "number": "a number",
    "integer": "an integer",
    "boolean": "a boolean",
    "array": "an array",
    "object": "an object",
    "null": "null",
}


def type_words(name: str, *, array: str = "an array") -> str:
    """A JSON type name as a message says it: ``a string``, ``an object``, ``null``.
    ``array`` is the word for lists: case files, often YAML, say ``a list``."""
    if name == "array":
        return array
    return _WORDS.get(name, f"a {name}")


def json_type_words(value: Any, *, array: str = "an array") -> str:
    """The JSON type of ``value`` in words (``got a string``), see ``type_words``."""
    return type_words(json_type(value), array=array)


def expected_words(names: str | Iterable[str], *, array: str = "an array") -> str:
    """What a value must be, from the JSON type names a schema allows: ``a string or null``;
    a boolean is ``true or false``."""
    names = [names] if isinstance(names, str) else list(names)
    return " or ".join(
        "true or false" if name == "boolean" else type_words(name, array=array) for name in names
    )

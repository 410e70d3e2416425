"""Value matching shared by assertions, checkpoints and judges.

Output as text, deep equality (key order never matters, ``1 == 1.0``, ``True != 1``),
recursive matching (partial or exact) with ``regex:`` patterns and the value matchers
``{"$any": true}`` and ``{"$approx": x, "tol": t}``, JSON types, JSONPath lookups, tool
names, and extracting the JSON an agent wrote inside prose or a fenced block.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Iterator
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from agentcli.patterns import Pattern, compile_pattern, pattern_problem

if TYPE_CHECKING:
    from jsonpath_ng.jsonpath import JSONPath

    from agentcli.assistant.request import ToolCall

__all__ = [
    "DEFAULT_TOLERANCE",
    "call_names",
    "compile_path",
    "deep_equal",
    "extract_json",
    "lookup_path",
    "match_partial",
    "match_value",
    "matcher_holds",
    "normalize_path",
    "output_text",
    "parse_json_text",
    "regex_pattern",
    "regex_problems",
    "show",
    "tool_name_matches",
    "value_problems",
]

_FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)```", re.DOTALL)
_CLOSERS = {"{": "}", "[": "]"}
_JSON_FENCES = ("", "json", "jsonc", "json5")
# Scanning from every stray bracket is quadratic on hostile text: cap the characters examined.
_SCAN_BUDGET = 2_000_000
_UNICODE_SEGMENT = re.compile(r"\.([^.\[\]'\"\s()]*[^\x00-\x7f][^.\[\]'\"\s()]*)")
# The value matchers an expected value may hold in place of a literal.
ANY, APPROX, TOL = "$any", "$approx", "tol"
DEFAULT_TOLERANCE = 1e-6  # what {"$approx": x} allows without a "tol"
_NUMBERS = (int, float)
_NUMBER_TYPES = frozenset(_NUMBERS)  # exactly these types: bool is not a number here
_SEQUENCES = (list, tuple)
_PLAIN = frozenset((str, int, float))  # leaves whose == is JSON equality between themselves


def output_text(value: Any) -> str:
    """A value as text: strings as-is, ``None`` empty, others JSON (unicode kept, no HTML escapes)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return json.dumps(value, ensure_ascii=False, default=str)


# One encoder for every message: json.dumps with options builds a new one per call.
_SHOW = json.JSONEncoder(ensure_ascii=False, default=str)


def show(value: Any, limit: int = 120) -> str:
    """A short JSON rendering of a value for messages (strings quoted, long values clipped)."""
    text = _SHOW.encode(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def deep_equal(a: Any, b: Any) -> bool:
    """JSON equality: dict key order ignored, ``1 == 1.0``, booleans equal only booleans."""
    if type(a) is type(b) and type(a) in _PLAIN:
        return bool(a == b)
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(deep_equal(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(deep_equal(x, y) for x, y in zip(a, b, strict=True))
    if type(a) is not type(b) and not (isinstance(a, str) and isinstance(b, str)):
        return False
    equal: bool = a == b
    return equal


def match_partial(actual: Any, expected: Any) -> bool:
    """``expected`` found in ``actual``: objects by subset, recursively; ``regex:`` strings
    match; ``{"$any": true}`` and ``{"$approx": x, "tol": t}`` match as matchers."""
    return match_value(actual, expected, False)


def match_value(actual: Any, expected: Any, exact: bool = False) -> bool:
    """``actual`` matches ``expected``: partially (objects by subset, a string against the
    text form of the value) or, ``exact``, with the same keys at every level and JSON
    equality at the leaves. Patterns and matchers apply in both."""
    # Plain loops and positional recursion: this runs once per value compared.
    if isinstance(expected, dict):
        if ANY in expected or APPROX in expected:
            return matcher_holds(actual, expected)
        if isinstance(actual, str):
            actual = _loads_or(actual, actual)
        if not isinstance(actual, dict) or (exact and actual.keys() != expected.keys()):
            return False
        for key, value in expected.items():
            if key not in actual:
                return False
            found = actual[key]
            kind = type(value)
            # Plain leaves inline (the common case, and a call each otherwise): a string or
            # a pattern against a string, a number against a number, a value matcher.
            if kind is str and type(found) is str:
                if value.startswith("regex:"):
                    if (_PATTERNS.get(value) or regex_pattern(value)).search(found) is None:
                        return False
                elif found != value:
                    return False
            elif kind in _NUMBER_TYPES and type(found) in _NUMBER_TYPES:
                if found != value:
                    return False
            elif kind is dict and (ANY in value or APPROX in value):
                if not matcher_holds(found, value):
                    return False
            elif not match_value(found, value, exact):
                return False
        return True
    if isinstance(expected, str):
        if expected.startswith("regex:"):
            pattern = _PATTERNS.get(expected) or regex_pattern(expected)
            return pattern.search(output_text(actual)) is not None
        if isinstance(actual, str):
            return actual == expected
        if exact or actual is None:
            return False
        # A tool may return 5 where the case says "5": compare the text forms, and a number
        # by its value, so "25" is also 25.0 (a model may write either; JSON means one number).
        if output_text(actual) == expected:
            return True
        return type(actual) in _NUMBER_TYPES and _number_in(expected) == actual
    if isinstance(expected, list):
        if not isinstance(actual, _SEQUENCES) or len(actual) != len(expected):
            return False
        for item, wanted in zip(actual, expected, strict=True):
            if not match_value(item, wanted, exact):
                return False
        return True
    return deep_equal(actual, expected)


# ``regex:...`` values by their whole text: a dict lookup, where compile_pattern's cache
# needs the prefix cut off first (matching runs once per value compared)
_PATTERNS: dict[str, Pattern] = {}
_PATTERNS_KEPT = 4096


def regex_pattern(value: str) -> Pattern:
    """The compiled pattern of a ``regex:...`` value, remembered."""
    found = _PATTERNS.get(value)
    if found is not None:
        return found
    if len(_PATTERNS) >= _PATTERNS_KEPT:
        _PATTERNS.clear()
    pattern = _PATTERNS[value] = compile_pattern(value[6:])
    return pattern


def matcher_holds(actual: Any, matcher: dict[str, Any]) -> bool:
    """``{"$any": true}`` holds for any value; ``{"$approx": x, "tol": t}`` for a number
    within ``t`` of ``x`` (booleans are not numbers)."""
    if ANY in matcher:
        return True
    if isinstance(actual, bool) or not isinstance(actual, _NUMBERS):
        return False
    tolerance = matcher.get(TOL, DEFAULT_TOLERANCE)
    distance = abs(actual - matcher[APPROX])
    # Inclusive, also where binary floats land a hair past it (19.99 is 0.01 from 20).
    return bool(distance <= tolerance or math.isclose(distance, tolerance, rel_tol=1e-9))


def value_problems(value: Any) -> Iterator[str]:
    """Problems with the patterns and matchers nested anywhere in an expected value."""
    yield from regex_problems(value)
    yield from _matcher_problems(value)


def _matcher_problems(value: Any) -> Iterator[str]:
    """Malformed ``$any`` / ``$approx`` objects, and ``$`` keys that look like a typo of one."""
    if isinstance(value, list):
        for item in value:
            yield from _matcher_problems(item)
        return
    if not isinstance(value, dict):
        return
    if ANY in value:
        if value != {ANY: True}:
            yield f'{{"$any": true}} stands alone, got {show(value)}'
        return
    if APPROX in value:
        yield from _approx_problems(value)
        return
    for key, item in value.items():
        close = difflib.get_close_matches(key, (ANY, APPROX), n=1, cutoff=0.75)
        if key.startswith("$") and close:
            yield f'unknown matcher {show(key)} (did you mean "{close[0]}"?)'
        yield from _matcher_problems(item)


def _approx_problems(value: dict[str, Any]) -> Iterator[str]:
    """What is wrong with one ``{"$approx": x, "tol": t}``."""
    extra = sorted(set(value) - {APPROX, TOL})
    target, tolerance = value[APPROX], value.get(TOL, DEFAULT_TOLERANCE)
    if extra:
        yield f'{show(extra[0])} is not part of {{"$approx": number, "tol": number}}'
    elif isinstance(target, bool) or not isinstance(target, int | float):
        yield f'"$approx" must be a number, got {show(target)}'
    elif isinstance(tolerance, bool) or not isinstance(tolerance, int | float) or tolerance < 0:
        yield f'"tol" must be a non-negative number, got {show(tolerance)}'


def regex_problems(value: Any, *, prefixed: bool = True) -> Iterator[str]:
    """Problems compiling the patterns in ``value`` (``regex:`` strings nested anywhere),
    with the checks of :func:`agentcli.patterns.compile_pattern` (so no pattern fails later)."""
    if isinstance(value, dict):
        for item in value.values():
            yield from regex_problems(item, prefixed=prefixed)
    elif isinstance(value, list):
        for item in value:
            yield from regex_problems(item, prefixed=prefixed)
    elif isinstance(value, str) and (not prefixed or value.startswith("regex:")):
        pattern = value[len("regex:") :] if prefixed else value
        problem = pattern_problem(pattern)
        if problem:
            yield f"invalid regex {show(pattern)}: {problem}"


def extract_json(text: str) -> Any:
    """The JSON in a text: a fenced block, else the whole text, else the first balanced object.

    Fenced blocks of other languages (```python) are code, not output, and are skipped.
    Raises ``ValueError`` when the text holds no JSON.
    """
    for match in _FENCE.finditer(text):
        if match.group(1).lower() in _JSON_FENCES:
            found, value = _try_loads(match.group(2))
            if found:
                return value
    found, value = _try_loads(text)
    if found:
        return value
    prose = _FENCE.sub(lambda m: m.group(0) if m.group(1).lower() in _JSON_FENCES else "", text)
    budget = _SCAN_BUDGET
    for start, char in enumerate(prose):
        if char not in _CLOSERS:
            continue
        end, scanned = _balanced_end(prose, start, budget)
        budget -= scanned
        if end is not None:
            found, value = _try_loads(prose[start : end + 1])
            if found:
                return value
        if budget <= 0:
            break
    raise ValueError("no JSON found in the output")


def _balanced_end(text: str, start: int, budget: int) -> tuple[int | None, int]:
    """``(index of the bracket closing text[start] or None, characters scanned)``.

    Brackets inside JSON strings are skipped; the scan stops after ``budget`` characters.
    """
    expected: list[str] = []
    in_string = escaped = False
    stop = min(len(text), start + budget)
    for index in range(start, stop):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in _CLOSERS:
            expected.append(_CLOSERS[char])
        elif char in "}]":
            if char != expected.pop():
                return None, index - start + 1
            if not expected:
                return index, index - start + 1
    return None, stop - start


def _try_loads(text: str) -> tuple[bool, Any]:
    """``(True, value)`` when ``text`` is one JSON document, else ``(False, None)``."""
    try:
        return True, json.loads(text)
    except (ValueError, RecursionError):  # absurdly deep nesting is not an answer either
        return False, None


def _number_in(text: str) -> int | float | None:
    """The number a string spells as JSON (``"25"``, ``"2.5e1"``), else None."""
    found, value = _try_loads(text)
    return value if found and type(value) in _NUMBER_TYPES else None


def _loads_or(text: str, default: Any) -> Any:
    """``text`` parsed as JSON, or ``default``."""
    found, value = _try_loads(text)
    return value if found else default


def parse_json_text(value: str) -> Any:
    """A string parsed as one JSON document, or the string itself when it is not JSON."""
    return _loads_or(value, value)


def normalize_path(path: str) -> str:
    """``a.b`` -> ``$.a.b``, ``[0]`` -> ``$[0]``; ``$...`` unchanged."""
    path = path.strip()
    if path.startswith("$"):
        return path
    return "$" + path if path.startswith("[") else "$." + path


@lru_cache(maxsize=512)
def compile_path(path: str) -> JSONPath:
    """A parsed (cached) jsonpath-ng expression; the extended syntax (filters) is allowed."""
    # jsonpath_ng.ext re-exports parse without __all__; import it from where it is defined.
    from jsonpath_ng.ext.parser import parse

    # jsonpath-ng's lexer takes only ASCII names unquoted; `$.城市` should just work.
    return parse(_UNICODE_SEGMENT.sub(r'."\1"', normalize_path(path)))


def lookup_path(output: Any, path: str) -> tuple[bool, Any]:
    """``(True, value)`` at ``path`` in the output's JSON, else ``(False, reason)``.

    Several matches (wildcards, filters) give the list of matched values.
    """
    try:
        data = extract_json(output) if isinstance(output, str) else output
    except ValueError:
        return False, "output is not JSON"
    matches = [m.value for m in compile_path(path).find(data)]
    if not matches:
        return False, "no match in output"
    return True, matches[0] if len(matches) == 1 else matches


def tool_name_matches(record: ToolCall, name: str) -> bool:
    """Exact bare or ``<server>__<tool>`` name, or a ``__``-bounded suffix; never a substring."""
    return bool(name) and name in call_names(record)


def call_names(record: ToolCall) -> set[str]:
    """Every name a call answers to: its bare and ``<server>__<tool>`` names (the server's
    dots as ``_`` too) and each ``__``-bounded suffix of those."""
    candidates = [record.tool]
    if record.server:
        candidates.append(f"{record.server}__{record.tool}")
        candidates.append(f"{record.server.replace('.', '_')}__{record.tool}")
    names = set()
    for candidate in candidates:
        names.add(candidate)
        start = candidate.find("__")
        while start != -1:
            names.add(candidate[start + 2 :])
            start = candidate.find("__", start + 1)
    names.discard("")
    return names

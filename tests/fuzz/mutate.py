"""Hypothesis strategies that damage valid inputs the way people and tools do: characters
deleted, inserted, replaced, duplicated or cut off; values swapped for another type; keys
dropped, renamed or added; encodings broken. Start from a valid example, apply a few."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import yaml
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from agentcli.errors import AgentCliError

FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
"""Bounded so the whole fuzz suite stays under half a minute."""

# Pieces that are meaningful to one of the formats: structure, comments, YAML tags and
# anchors, templates, escapes, BOMs and control characters.
PIECES = [
    "{", "}", "[", "]", ":", ",", '"', "'", "\n", "\t", " ", "-", "#", "//", "/*", "*/",
    "\\", "\\u", "&a", "*a", "!!", "!!python/object:os.system", "!!binary", "|", ">",
    "%", "@", "`", "{{", "}}", "{%", "%}", "{#", "$ENV.", "$ENV.HOME", "$CTX.x", "@assets/",
    "../", "file://", "null", "true", "1e999", "-0", "NaN", "0x1F", "\x00", "\ufeff",
    "\u202e", "é", "💥", "~", "?", "=", "<<", "---", "...", "\r",
]  # fmt: skip
NOISE = st.one_of(
    st.lists(st.sampled_from(PIECES), min_size=1, max_size=4).map("".join),
    st.text(max_size=6),
)


@st.composite
def mutated(draw: st.DrawFn, seeds: list[str], max_edits: int = 4) -> str:
    """One of ``seeds`` with 1..max_edits character-level edits."""
    text = draw(st.sampled_from(seeds))
    for _ in range(draw(st.integers(1, max_edits))):
        size = len(text)
        start = draw(st.integers(0, size))
        end = draw(st.integers(start, min(size, start + 24)))
        edit = draw(st.sampled_from(["delete", "insert", "replace", "truncate", "repeat", "swap"]))
        if edit == "delete":
            text = text[:start] + text[end:]
        elif edit == "insert":
            text = text[:start] + draw(NOISE) + text[start:]
        elif edit == "replace":
            text = text[:start] + draw(NOISE) + text[end:]
        elif edit == "truncate":
            text = text[:start]
        elif edit == "repeat":
            text = text[:end] + text[start:end] * draw(st.integers(1, 3)) + text[end:]
        else:
            other = draw(st.integers(0, size))
            low, high = sorted((start, other))
            text = text[:low] + text[high:] + text[low:high]
    return text


@st.composite
def mutated_bytes(draw: st.DrawFn, seeds: list[str]) -> bytes:
    """A mutated text, encoded, sometimes with broken UTF-8 or another encoding."""
    data = draw(mutated(seeds)).encode("utf-8", "surrogatepass")
    damage = draw(st.sampled_from(["none", "none", "bad-byte", "utf16", "cut-multibyte"]))
    if damage == "bad-byte":
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\x80\x80", b"\xed\xa0\x80"]))
        data += data[at:]
    elif damage == "utf16":
        data = data.decode("utf-8", "replace").encode("utf-16")
    elif damage == "cut-multibyte":
        data = data + "é".encode()[:1]
    return data


KEYS = ["id", "name", "type", "value", "input", "model", "rules", "say", "when", "call"]
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["", "{{ x }}", "{% if %}", "$ENV.NOPE", "(", "../../etc/passwd"]),
)
ANY_VALUE = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.one_of(st.sampled_from(KEYS), st.text(max_size=5)), inner, max_size=3),
    ),
    max_leaves=8,
)


@st.composite
def mutated_data(draw: st.DrawFn, seeds: list[Any]) -> Any:
    """One of ``seeds`` (JSON-like data) with values swapped for other types and keys
    dropped, renamed or added, anywhere in the tree."""

    def walk(value: Any, depth: int) -> Any:
        if draw(st.integers(0, 7 + depth)) == 0:
            return draw(ANY_VALUE)
        if isinstance(value, dict):
            out: dict[Any, Any] = {}
            for key, item in value.items():
                fate = draw(st.integers(0, 11))
                if fate == 0:
                    continue
                if fate == 1:
                    key = draw(st.one_of(st.sampled_from(KEYS), st.text(max_size=6)))
                out[key] = walk(item, depth + 1)
            if draw(st.integers(0, 6)) == 0:
                out[draw(st.sampled_from(KEYS))] = draw(ANY_VALUE)
            return out
        if isinstance(value, list):
            items = [walk(item, depth + 1) for item in value if draw(st.integers(0, 9))]
            if draw(st.integers(0, 6)) == 0:
                items.insert(draw(st.integers(0, len(items))), draw(ANY_VALUE))
            return items
        return value

    return walk(draw(st.sampled_from(seeds)), 0)


def as_json(value: Any) -> str:
    """JSON text of ``value`` (non-finite floats as JSON's NaN/Infinity extensions)."""
    return json.dumps(value, ensure_ascii=False, default=str)


def as_yaml(value: Any) -> str:
    """YAML text of ``value``."""
    return yaml.safe_dump(value, allow_unicode=True, sort_keys=False)


def only_own_errors(call: Callable[[], Any], *, allowed: tuple[type, ...] = ()) -> Any:
    """Run ``call``: its result, or None when it raised one of agentcli's errors (whose
    message must be non-empty); any other exception fails the test."""
    try:
        return call()
    except AgentCliError as error:
        assert str(error).strip(), f"{type(error).__name__} with an empty message"
        return None
    except allowed:
        return None

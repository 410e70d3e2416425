"""A search of a run's results: the results whose id, tags, input, output, expected value,
error or assertion messages contain a text, case-insensitively.

Lines are read one by one from their offsets; msgspec decodes only the searched fields (a
trace, the bulk of a line, is skipped unbuilt), and a line that cannot contain the text
is not decoded at all.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from agentcli.datafiles import loads_json
from agentcli.eval.results.model import CaseResult, JsonObject

if TYPE_CHECKING:
    from .runfile import Row

__all__ = ["search"]

_SEARCHED_KEYS = ("id", "tags", "input", "output", "expected", "error")
_PLAIN = re.compile(r"[a-z0-9 _.:-]+")
_MAX_WALK = 10_000  # strings of one value searched: a huge output cannot stall a query


class _Searched(msgspec.Struct):
    """The fields of a result a search reads (its trace is skipped unbuilt)."""

    id: Any = None
    tags: Any = None
    input: Any = None
    output: Any = None
    expected: Any = None
    error: Any = None
    assertions: Any = None


_SEARCHED = msgspec.json.Decoder(_Searched)


def search(
    path: Path, rows: list[Row], document: list[CaseResult] | None, query: str
) -> frozenset[int]:
    """Ordinals of the results (of ``rows`` in ``path``, or of a report's ``document``)
    whose searched texts contain ``query``, case-folded."""
    needle = query.casefold()
    return frozenset(
        ordinal
        for ordinal, record in _records(path, rows, document, needle)
        if _contains(record, needle)
    )


def _records(
    path: Path, rows: list[Row], document: list[CaseResult] | None, needle: str
) -> Iterator[tuple[int, JsonObject]]:
    """The searched fields of every result that may contain ``needle``, by ordinal."""
    if document is not None:
        for ordinal, result in enumerate(document):
            yield ordinal, result.to_dict()
        return
    # A needle of letters, digits and a little punctuation is written as itself in an
    # ASCII line with no \u escape (where nothing else case-folds to ASCII letters): a
    # line like that whose bytes, lowercased, lack it cannot match and is not decoded.
    plain = needle.encode() if _PLAIN.fullmatch(needle) else None
    with path.open("rb") as stream:
        for row in rows:
            stream.seek(row.offset)
            line = stream.read(row.length)
            if (
                plain is not None
                and line.isascii()
                and b"\\u" not in line
                and plain not in line.lower()
            ):
                continue
            try:
                yield row.ordinal, msgspec.structs.asdict(_SEARCHED.decode(line))
            except (msgspec.DecodeError, msgspec.ValidationError):
                try:
                    record = loads_json(line.decode("utf-8"))
                except (UnicodeDecodeError, ValueError):
                    continue
                if isinstance(record, dict):
                    yield row.ordinal, record


def _contains(record: JsonObject, needle: str) -> bool:
    """Whether a result's searched texts contain ``needle`` (already case-folded)."""
    values: list[Any] = [record.get(key) for key in _SEARCHED_KEYS]
    assertions = record.get("assertions")
    if isinstance(assertions, list):
        values += [a.get("message") for a in assertions if isinstance(a, dict)]
    return any(needle in text.casefold() for text in _strings(values))


def _strings(values: list[Any]) -> Iterator[str]:
    """The strings inside ``values`` (nested lists and objects too), at most ``_MAX_WALK``."""
    stack = list(reversed(values))
    seen = 0
    while stack and seen < _MAX_WALK:
        value = stack.pop()
        seen += 1
        if isinstance(value, str):
            yield value
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif value is not None and not isinstance(value, bool):
            yield str(value)

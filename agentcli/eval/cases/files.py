"""Reading case files: line-numbered items from JSON Lines, JSON and YAML, and the schema.

The readers yield ``(line, object)`` pairs and record parse problems instead of raising,
so the loader can report every mistake of a file at once. A number JSON does not allow
(NaN, Infinity, 1e999; YAML's ``.nan``, ``.inf``) is one of them, found here as the text is
read (it would reach a results file, which then is not JSON). ``schema_problems`` checks one
case object against ``case.schema.json`` (see ``agentcli.schemas``: a compiled quick check,
jsonschema to explain an invalid case) and says what is wrong in words.
"""

from __future__ import annotations

import difflib
import functools
import json
import re
from collections.abc import Callable, Iterator
from io import BufferedReader
from pathlib import Path
from typing import Any

from agentcli.datafiles import (
    FINITE_NUMBERS,
    MAX_FILE_BYTES,
    DuplicateKeyError,
    NonFiniteNumber,
    YamlDocument,
    YamlLines,
    decode_text,
    field_path,
    foreign_bom,
    loads_json,
    node_line,
    read_text,
    unique_object,
)
from agentcli.errors import PackageError
from agentcli.jsonsafe import expected_words, json_type_words
from agentcli.schemas import ShippedSchema

__all__ = [
    "CASE_SCHEMA",
    "DEFAULTS_SCHEMA",
    "SCHEMA_PATH",
    "defaults_problems",
    "display_path",
    "read_items",
    "schema_problems",
]

SCHEMA_PATH = Path(__file__).with_name("case.schema.json")

_JSON_WS = re.compile(r"[ \t\n\r]*")
# Case files are often YAML, where an array is a list.
_LIST = "a list"

_LIMIT_MB = MAX_FILE_BYTES // (1024 * 1024)

# High enough that "category" does not suggest "after", low enough for "assertions" -> "assert".
_SUGGEST_CUTOFF = 0.7

Reader = Callable[[Path, str, list[str]], Iterator[tuple[int, Any]]]


def read_items(path: Path, shown: str, problems: list[str]) -> Iterator[tuple[int, Any]]:
    """``(line, object)`` for each case of a ``.jsonl``, ``.json`` or ``.yaml/.yml`` file."""
    reader: Reader = {".jsonl": _jsonl_items, ".json": _json_items}.get(
        path.suffix.lower(), _yaml_items
    )
    return reader(path, shown, problems)


@functools.lru_cache(maxsize=64)
def display_path(path: str) -> str:
    """A path relative to the current directory when it lies inside it."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return path


def _jsonl_items(path: Path, shown: str, problems: list[str]) -> Iterator[tuple[int, Any]]:
    """``(line, object)`` per non-blank, non-``//`` line, streamed; a line is decoded on its
    own, so an undecodable or over-long line is one problem, not the end of the file."""
    with path.open("rb") as handle:
        if (encoding := foreign_bom(handle.peek(4)[:4])) is not None:
            problems.append(f"{shown}:1: the file is {encoding} text, not UTF-8; save it as UTF-8")
            return
        for number, raw in enumerate(_capped_lines(handle), 1):
            if raw is None:
                problems.append(
                    f"{shown}:{number}: line is longer than the {_LIMIT_MB} MB limit for one case;"
                    " put large inputs in file:// parts"
                )
                continue
            try:
                text = raw.decode("utf-8-sig").strip()
            except UnicodeDecodeError:
                problems.append(_problem(_undecodable(raw, shown, number)))
                continue
            if not text or text.startswith("//"):
                continue
            try:
                yield number, loads_json(text, unique_keys=True, finite=True)
            except NonFiniteNumber as exc:
                problems.append(_non_finite(loads_json(text), f"{shown}:{number}", exc.token))
            except json.JSONDecodeError as exc:
                column = exc.colno + len(raw) - len(raw.lstrip())
                hint = " (a .jsonl case must fit on one line)" if exc.pos >= len(text) else ""
                problems.append(
                    f"{shown}:{number}: invalid JSON at column {column}: {exc.msg}{hint}"
                )
            except DuplicateKeyError as exc:
                problems.append(f"{shown}:{number}: {exc}; remove one of them")


def _capped_lines(handle: BufferedReader) -> Iterator[bytes | None]:
    """The lines of a binary file; ``None`` for a line over MAX_FILE_BYTES (skipped unread)."""
    while raw := handle.readline(MAX_FILE_BYTES + 1):
        if len(raw) <= MAX_FILE_BYTES or raw.endswith(b"\n"):
            yield raw
            continue
        while (rest := handle.readline(1 << 20)) and not rest.endswith(b"\n"):
            pass
        yield None


def _undecodable(raw: bytes, shown: str, number: int) -> PackageError:
    """The error for a line that is not UTF-8."""
    try:
        decode_text(raw, shown, line=number)
    except PackageError as exc:
        return exc
    raise AssertionError("decodable")  # only called after the line failed to decode


def _problem(error: PackageError) -> str:
    """``file:line: message``, the form of every case-file problem (no column)."""
    if error.line is None:
        return f"{error.path}: {error.detail}"
    return f"{error.path}:{error.line}: {error.detail}"


def _json_items(path: Path, shown: str, problems: list[str]) -> Iterator[tuple[int, Any]]:
    """``(line, object)`` for each item of a JSON array, or the one top-level object."""
    try:
        text = read_text(path, name=shown)
        document = loads_json(text)
    except PackageError as exc:
        problems.append(_problem(exc))
        return
    except json.JSONDecodeError as exc:
        problems.append(f"{shown}:{exc.lineno}: invalid JSON at column {exc.colno}: {exc.msg}")
        return
    start = _after_whitespace(text, 0)
    line = text.count("\n", 0, start) + 1
    if isinstance(document, dict):
        try:
            json.loads(text, object_pairs_hook=unique_object, **FINITE_NUMBERS)
        except DuplicateKeyError as exc:
            problems.append(f"{shown}:{line}: {exc}; remove one of them")
            return
        except NonFiniteNumber as exc:
            problems.append(_non_finite(document, f"{shown}:{line}", exc.token))
            return
        yield line, document
        return
    if not isinstance(document, list):
        problems.append(f"{shown}:{line}: expected an array of cases or one case object")
        return
    # Decode the items one by one from their offsets to learn the line each starts on
    # (and to find a repeated key: the first decoding kept only the last of two).
    unique = json.JSONDecoder(object_pairs_hook=unique_object, **FINITE_NUMBERS)
    plain = json.JSONDecoder()
    position, counted = start + 1, start
    for _ in document:
        position = _after_whitespace(text, position)
        line += text.count("\n", counted, position)
        counted = position
        try:
            item, position = unique.raw_decode(text, position)
        except DuplicateKeyError as exc:
            problems.append(f"{shown}:{line}: {exc}; remove one of them")
            _, position = plain.raw_decode(text, position)
        except NonFiniteNumber as exc:
            item, position = plain.raw_decode(text, position)
            problems.append(_non_finite(item, f"{shown}:{line}", exc.token))
        else:
            yield line, item
        position = _after_whitespace(text, position) + 1  # skip the "," or "]"


def _after_whitespace(text: str, position: int) -> int:
    """The offset of the first non-whitespace character (JSON's whitespace) from ``position``."""
    match = _JSON_WS.match(text, position)
    return match.end() if match else position


def _yaml_items(path: Path, shown: str, problems: list[str]) -> Iterator[tuple[int, Any]]:
    """``(line, object)`` for each item of a YAML list (or the one top-level mapping)."""
    try:
        document = YamlDocument(read_text(path, name=shown), shown)
    except PackageError as exc:
        problems.append(_problem(exc))
        return
    try:
        problems.extend(_problem(duplicate) for duplicate in document.duplicates)
        entries = document.entries()
        if entries is None:
            assert document.root is not None  # entries() is None only for a scalar root
            problems.append(f"{shown}:{node_line(document.root)}: expected a list of cases")
            return
        lines: YamlLines | None = None
        for index, node in enumerate(entries):
            try:
                item = document.value(node)
            except PackageError as exc:  # e.g. a tag the safe loader refuses
                problems.append(_problem(exc))
                continue
            found = _first_non_finite(item, ())
            if found is not None:  # YAML has .nan and .inf; JSON has neither
                lines = document.lines() if lines is None else lines
                key = found[0] if entries[0] is document.root else (index, *found[0])
                at = f"{shown}:{lines.get(key, node_line(node))}"
                problems.append(_non_finite(item, at, _yaml_spelling(found[1])))
                continue
            yield node_line(node), item
    finally:
        document.close()


def _first_non_finite(value: Any, where: tuple[Any, ...]) -> tuple[tuple[Any, ...], float] | None:
    """The key path and value of the first NaN or infinite float in ``value``, if any."""
    if isinstance(value, float):
        return (where, value) if value - value != 0.0 else None
    if isinstance(value, dict):
        items: Any = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        found = _first_non_finite(item, (*where, key))
        if found is not None:
            return found
    return None


def _yaml_spelling(value: float) -> str:
    """How YAML writes a non-finite float."""
    if value != value:
        return ".nan"
    return "-.inf" if value < 0 else ".inf"


def _non_finite(item: Any, at: str, token: str) -> str:
    """The problem of a case holding a number JSON does not allow (``token`` as written),
    named by its field: ``file:line: assert.value: NaN is not a number JSON allows ...``."""
    found = _first_non_finite(item, ())
    where = f"{field_path(found[0])}: " if found is not None and found[0] else ""
    if token.lstrip("+-").lower() in ("nan", "infinity", ".nan", ".inf"):
        what = f"{token} is not a number JSON allows"
    else:  # a literal such as 1e999, read as infinity
        what = (
            f"{token} is too large for a number (it reads as infinity, which JSON does not allow)"
        )
    return (
        f"{at}: {where}{what} (results files are JSON); write a finite number,"
        f' or "{token}" in quotes for the text'
    )


# --- schema ------------------------------------------------------------------------------


CASE_SCHEMA = ShippedSchema(SCHEMA_PATH)
# A case file's ``{"defaults": {...}}`` item, checked against the same file's definitions.
DEFAULTS_SCHEMA = ShippedSchema(SCHEMA_PATH, "fileDefaults")


def schema_problems(obj: Any, schema: ShippedSchema = CASE_SCHEMA) -> list[str]:
    """Schema violations of one case object (or of ``schema``'s kind of object), each as
    ``field.path: message``."""
    problems = []
    for error in schema.errors(obj):
        where = field_path(error.absolute_path)
        for message in _error_messages(error):
            problems.append(f"{where}: {message}" if where else message)
    return problems


def defaults_problems(obj: Any) -> list[str]:
    """Schema violations of a case file's ``{"defaults": {...}}`` item."""
    return schema_problems(obj, DEFAULTS_SCHEMA)


def _error_messages(error: Any) -> list[str]:
    """Readable messages for one jsonschema error (unknown fields get a did-you-mean hint)."""
    kind, instance, expected = error.validator, error.instance, error.validator_value
    if kind == "additionalProperties" and isinstance(instance, dict):
        known = list(error.schema.get("properties", {}))
        messages = []
        for key in instance:
            if key not in known:
                close = difflib.get_close_matches(str(key), known, n=1, cutoff=_SUGGEST_CUTOFF)
                hint = f' (did you mean "{close[0]}"?)' if close else ""
                messages.append(f'unknown field "{key}"{hint}')
        return messages
    if kind == "enum" and isinstance(expected, list):
        choices = [str(choice) for choice in expected]
        close = difflib.get_close_matches(str(instance), choices, n=1, cutoff=_SUGGEST_CUTOFF)
        hint = f' (did you mean "{close[0]}"?)' if close else ""
        shown = ", ".join(json.dumps(choice) for choice in expected)
        return [f"must be one of {shown}, got {json.dumps(instance)}{hint}"]
    if kind == "required":
        return [f'missing required field "{k}"' for k in expected if k not in instance]
    if kind == "type":
        wanted = expected_words(expected, array=_LIST)
        return [f"must be {wanted}, got {json_type_words(instance, array=_LIST)}"]
    if kind in ("minLength", "minItems"):
        return ["must not be empty"]
    if kind == "minimum":
        return [f"must be at least {expected}"]
    if kind == "maximum":
        return [f"must be at most {expected}"]
    if kind == "exclusiveMinimum":
        return [f"must be greater than {expected}"]
    if kind == "pattern" and isinstance(error.schema.get("x-pattern-means"), str):
        # a regex means nothing to the reader: the schema says in words what it asks for
        return [f"{json.dumps(instance)} is not {error.schema['x-pattern-means']}"]
    return [str(error.message)]

"""Reading YAML and JSON data files: the one reader every loader uses, safe on hostile bytes.

Whatever a file holds, a loader gets its data or a ``PackageError`` naming the file and line,
never a bare exception, a hang or a value that later code cannot serialise. The limits:

- ``MAX_FILE_BYTES`` (50 MB): a bigger YAML/JSON document is refused before it is read
  (a ``.jsonl`` case file may be of any size, but each of its lines is one document);
- ``MAX_DEPTH`` (64): lists and objects nested deeper are refused — ``json`` and PyYAML
  recurse while parsing, and so does code that walks values later (writers, schemas);
- ``MAX_ALIAS_NODES`` (1,000,000): YAML aliases (``*name``) may add at most that many nodes
  when expanded. PyYAML shares an aliased node, so a "billion laughs" document is small in
  memory, but every writer serialises it in full; recursive aliases are refused too;
- duplicate keys in a YAML mapping are errors naming both lines (YAML would keep the last);
- a number of more than ``sys.get_int_max_str_digits()`` digits (4300) is an error;
- ``loads_json(..., finite=True)`` refuses NaN, Infinity and numbers too large for a float,
  which Python reads but JSON does not allow (a results file holding one is not JSON).

YAML is parsed with libyaml (``CSafeLoader``) when PyYAML has it, else the pure-Python
``SafeLoader``; the checks run on the composed node graph, so they hold on both paths.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from agentcli.errors import PackageError

if TYPE_CHECKING:  # PyYAML is imported when a file is read, not with this module
    from yaml import CSafeLoader, MappingNode, Node, SafeLoader, YAMLError

__all__ = [
    "MAX_ALIAS_NODES",
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "FINITE_NUMBERS",
    "DuplicateKeyError",
    "NonFiniteNumber",
    "YamlDocument",
    "YamlLines",
    "decode_text",
    "field_path",
    "foreign_bom",
    "line_of",
    "node_line",
    "load_yaml",
    "loads_json",
    "read_text",
    "read_yaml_lines",
    "unique_object",
    "yaml_error",
]

# The 1-based line of every key path of a YAML document: ("rules", 2, "when") -> 14.
YamlLines = dict[tuple[Any, ...], int]

MAX_FILE_BYTES = 50 * 1024 * 1024
MAX_DEPTH = 64
MAX_ALIAS_NODES = 1_000_000

# libyaml is several times faster; tests turn it off to check the pure-Python path too.
USE_LIBYAML = True

_BOMS = {
    b"\xff\xfe\x00\x00": "UTF-32",
    b"\x00\x00\xfe\xff": "UTF-32",
    b"\xff\xfe": "UTF-16",
    b"\xfe\xff": "UTF-16",
}
# A JSON string (possessive: linear even when unterminated), or a bracket outside strings.
_JSON_STRING = re.compile(r'"(?:[^"\\]++|\\.)*+"')
_JSON_TOKEN = re.compile(r'"(?:[^"\\]++|\\.)*+"|[\[\]{}]')
_JSON_BRACKET = re.compile(r"[\[\]{}]")
_BRACKET_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


# ---------------------------------------------------------------------------- text


def read_text(path: Path, *, name: str | None = None, limit: int = MAX_FILE_BYTES) -> str:
    """A data file's UTF-8 text (a UTF-8 BOM dropped), at most ``limit`` bytes; anything
    else is a PackageError saying what is wrong with the file (called ``name`` there)."""
    shown = name or str(path)
    try:
        with path.open("rb") as handle:
            data = handle.read(limit + 1)
    except FileNotFoundError:
        raise PackageError("file not found", path=shown) from None
    except IsADirectoryError:
        raise PackageError("is a directory, not a file", path=shown) from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the name
        raise PackageError(f"cannot read file: {_reason(exc)}", path=shown) from None
    if len(data) > limit:
        raise PackageError(
            f"file is larger than the {limit // (1024 * 1024)} MB limit; split it into smaller files",
            path=shown,
        )
    return decode_text(data, shown)


def decode_text(data: bytes, path: str, *, line: int | None = None) -> str:
    """``data`` as UTF-8 text (a BOM dropped); a PackageError at the first undecodable byte."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        if (encoding := foreign_bom(data)) is not None:
            raise PackageError(
                f"the file is {encoding} text, not UTF-8; save it as UTF-8", path=path, line=1
            ) from None
        at = line if line is not None else data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise PackageError(
            f"not UTF-8 text ({exc.reason}, byte 0x{data[exc.start]:02x})",
            path=path,
            line=at,
            column=column,
            hint="save the file as UTF-8",
        ) from None


def foreign_bom(data: bytes) -> str | None:
    """``UTF-16`` or ``UTF-32`` when ``data`` starts with that encoding's byte order mark."""
    return next((name for bom, name in _BOMS.items() if data.startswith(bom)), None)


def _reason(exc: Exception) -> str:
    """An OSError's reason without the file name it repeats (or any error's message)."""
    return getattr(exc, "strerror", None) or str(exc)


# ---------------------------------------------------------------------------- JSON


class DuplicateKeyError(ValueError):
    """One JSON object names the same key twice (``unique_object`` found it)."""

    def __init__(self, key: str) -> None:
        super().__init__(f"duplicate key {_shown(key)} in one object")
        self.key = key


def unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` refusing an object that names a key twice."""
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _value in pairs:
            if key in seen:
                raise DuplicateKeyError(key)
            seen.add(key)
    return result


class NonFiniteNumber(ValueError):
    """``NaN``, ``Infinity``, ``-Infinity`` or a number too large for a float (``1e999``):
    Python's ``json`` reads them, JSON does not allow them."""

    def __init__(self, token: str) -> None:
        super().__init__(f"{token} is not a number JSON allows")
        self.token = token


def _refuse_constant(token: str) -> float:
    raise NonFiniteNumber(token)


def _finite_float(token: str) -> float:
    value = float(token)
    if math.isinf(value):  # the literal is too large for a float (1e999)
        raise NonFiniteNumber(token)
    return value


# ``json`` hooks that make a decoder refuse non-finite numbers (NonFiniteNumber); called only
# for NaN/Infinity and for numbers with a fraction or exponent, so they cost nearly nothing.
FINITE_NUMBERS: dict[str, Any] = {"parse_constant": _refuse_constant, "parse_float": _finite_float}


def loads_json(text: str, *, unique_keys: bool = False, finite: bool = False) -> Any:
    """``json.loads`` within the limits: nesting beyond ``MAX_DEPTH`` and over-long numbers
    raise ``json.JSONDecodeError`` at their position (callers already report that with a
    line and column); with ``unique_keys`` a repeated key raises ``DuplicateKeyError``; with
    ``finite`` a NaN or infinite number raises ``NonFiniteNumber``."""
    check_json_depth(text)
    hooks = FINITE_NUMBERS if finite else {}
    try:
        return json.loads(text, object_pairs_hook=unique_object if unique_keys else None, **hooks)
    except (json.JSONDecodeError, DuplicateKeyError, NonFiniteNumber):
        raise
    except RecursionError:  # not reachable within MAX_DEPTH; kept so it can never escape
        raise json.JSONDecodeError("nested too deeply", text, 0) from None
    except ValueError:  # int("9" * 5000): Python refuses to convert such numbers
        raise _long_number(text) from None


def check_json_depth(text: str) -> None:
    """A ``json.JSONDecodeError`` at the first bracket nested deeper than ``MAX_DEPTH``."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return  # the common case costs two counts
    brackets = _JSON_BRACKET.findall(_JSON_STRING.sub("", text))
    if max(itertools.accumulate(map(_BRACKET_STEP.__getitem__, brackets)), default=0) <= MAX_DEPTH:
        return
    depth = 0
    for match in _JSON_TOKEN.finditer(text):
        depth += _BRACKET_STEP.get(match.group(), 0)
        if depth > MAX_DEPTH:
            raise json.JSONDecodeError(
                f"lists and objects nested more than {MAX_DEPTH} levels deep", text, match.start()
            )


def _long_number(text: str) -> json.JSONDecodeError:
    """The error for a number too long for Python to convert, at its position."""
    digits = sys.get_int_max_str_digits()
    match = re.search(rf"\d{{{digits + 1},}}", text)
    return json.JSONDecodeError(
        f"a number with more than {digits} digits", text, match.start() if match else 0
    )


def _shown(value: object, limit: int = 60) -> str:
    """A key as a message shows it: quoted, shortened, printable whatever it holds."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    text = text if len(text) <= limit else text[: limit - 4] + '..."'
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


# ---------------------------------------------------------------------------- YAML


def yaml_error(exc: Exception, path: Path | str, text: str | None = None) -> PackageError:
    """The ``PackageError`` for a ``yaml.YAMLError`` raised while reading ``path`` (``text``,
    when given, locates a refused character, which YAML reports by offset only)."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    if mark is not None:
        problem = getattr(exc, "problem", None) or getattr(exc, "context", None)
        return PackageError(
            f"invalid YAML: {problem}", path=str(path), line=mark.line + 1, column=mark.column + 1
        )
    character = getattr(exc, "character", None)
    position = getattr(exc, "position", None)
    if isinstance(character, int) and isinstance(position, int):
        line = text.count("\n", 0, position) + 1 if text is not None else None
        message = f"invalid YAML: character #x{character:04x} is not allowed"
        return PackageError(message, path=str(path), line=line)
    return PackageError("invalid YAML: " + " ".join(str(exc).split()), path=str(path))


@functools.cache
def _loaders() -> dict[bool, type[SafeLoader | CSafeLoader]]:
    """The safe loader classes, with the checks below: ``{True: libyaml, False: Python}``."""
    import yaml
    from yaml.composer import ComposerError
    from yaml.constructor import ConstructorError, SafeConstructor

    class Constructing(SafeConstructor):
        """Values Python refuses to build (a 5000-digit int, 2001-13-45) as YAML errors."""

        def construct_object(self, node: Node, deep: bool = False) -> Any:
            try:
                return super().construct_object(node, deep)
            except (ValueError, OverflowError) as exc:
                problem = str(exc)
                if node.tag == "tag:yaml.org,2002:int":  # the only way an int fails
                    problem = f"a number with more than {sys.get_int_max_str_digits()} digits"
                raise ConstructorError(None, None, problem, node.start_mark) from None

    class PythonLoader(Constructing, yaml.SafeLoader):
        """The pure-Python loader; it composes recursively, so depth is checked as it goes."""

        depth = 0

        def compose_node(self, parent: Node | None, index: int) -> Node | None:
            nested = self.check_event(yaml.SequenceStartEvent, yaml.MappingStartEvent)
            self.depth += nested
            try:
                if self.depth > MAX_DEPTH:
                    # types-PyYAML leaves Parser.peek_event unannotated
                    mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
                    raise ComposerError(None, None, _too_deep(), mark)
                return super().compose_node(parent, index)
            finally:
                self.depth -= nested

    loaders: dict[bool, type[SafeLoader | CSafeLoader]] = {False: PythonLoader, True: PythonLoader}
    if hasattr(yaml, "CSafeLoader"):

        class LibyamlLoader(Constructing, yaml.CSafeLoader):
            """libyaml's loader (its own nesting limit is 1000; ours is checked after)."""

        loaders[True] = LibyamlLoader
    return loaders


_MERGE_TAG = "tag:yaml.org,2002:merge"


def _too_deep() -> str:
    """The message for nesting beyond MAX_DEPTH."""
    return f"lists and mappings nested more than {MAX_DEPTH} levels deep"


class YamlDocument:
    """One YAML document composed and checked: its ``root`` node (``None`` when empty), the
    ``duplicates`` found (one PackageError per repeated key) and values built from nodes."""

    def __init__(self, text: str, path: Path | str) -> None:
        import yaml

        self.path = str(path)
        self.text = text
        self.duplicates: list[PackageError] = []
        try:
            self._loader = _loaders()[USE_LIBYAML](text)
        except yaml.YAMLError as exc:  # a character YAML refuses (a control character)
            raise yaml_error(exc, path, text) from None
        try:
            self.root = self._loader.get_single_node()
        except yaml.YAMLError as exc:
            self.close()
            raise yaml_error(_python_error(text) or exc, path, text) from None
        if self.root is not None:
            try:
                self._check(self.root)
            except PackageError:
                self.close()
                raise

    def value(self, node: Node | None = None) -> Any:
        """The Python value of ``node`` (default: the root); a PackageError at its line when
        YAML cannot build it (an unknown tag, an unhashable key, a bad date)."""
        import yaml

        node = self.root if node is None else node
        if node is None:
            return None
        try:
            return self._loader.construct_document(node)
        except yaml.YAMLError as exc:
            error = yaml_error(exc, self.path, self.text)
            if error.line is None:
                error = PackageError(error.detail, path=self.path, line=node.start_mark.line + 1)
            raise error from None

    def entries(self) -> list[Any] | None:
        """The nodes of the cases, rules or items a file lists: a top-level list's items, or
        the one top-level mapping; ``[]`` for an empty document, None for a scalar."""
        import yaml

        if self.root is None:
            return []
        if isinstance(self.root, yaml.MappingNode):
            return [self.root]
        if isinstance(self.root, yaml.SequenceNode):
            return list(self.root.value)
        return None

    def lines(self) -> YamlLines:
        """The line of every key path (a mapping key's line for the key and its value)."""
        lines: YamlLines = {}
        if self.root is not None:
            _index_lines(self.root, (), lines)
        return lines

    def close(self) -> None:
        """Release the parser."""
        self._loader.dispose()

    def _fail(self, node: Node, message: str) -> PackageError:
        """A PackageError at ``node``'s line and column."""
        mark = node.start_mark
        return PackageError(message, path=self.path, line=mark.line + 1, column=mark.column + 1)

    def _check(self, root: Node) -> None:
        """Walk the node graph once (iteratively: it may be deep), refusing recursive aliases,
        nesting beyond MAX_DEPTH and alias expansion beyond MAX_ALIAS_NODES; note duplicates."""
        import yaml

        size: dict[int, int] = {}  # expanded node count of each finished node
        height: dict[int, int] = {}  # container nesting below and including each node
        active: set[int] = set()
        stack: list[tuple[Node, bool, int]] = [(root, False, 0)]
        while stack:
            node, finished, depth = stack.pop()
            key = id(node)
            children = _children(node, yaml)
            nested = isinstance(node, yaml.CollectionNode)
            if finished:
                active.discard(key)
                size[key] = 1 + sum(size[id(c)] for c in children)
                height[key] = nested + max((height[id(c)] for c in children), default=0)
                if height[key] > MAX_DEPTH:  # only aliases reach this: depth is checked below
                    raise self._fail(node, "invalid YAML: " + _too_deep())
                if size[key] - len(size) > MAX_ALIAS_NODES:
                    raise self._fail(
                        node,
                        f"aliases expand this to more than {MAX_ALIAS_NODES:,} nodes"
                        " (an alias bomb?); write the repeated parts out or use fewer aliases",
                    )
                if isinstance(node, yaml.MappingNode):
                    self._note_duplicates(node)
                continue
            if key in size:
                continue
            if key in active:
                raise self._fail(node, "a recursive alias (an anchor used inside itself)")
            depth += nested
            if depth > MAX_DEPTH:  # the first node too deep, as the Python composer finds it
                raise self._fail(node, "invalid YAML: " + _too_deep())
            active.add(key)
            stack.append((node, True, depth))
            stack.extend((child, False, depth) for child in children if id(child) not in size)

    def _note_duplicates(self, node: MappingNode) -> None:
        """A PackageError for each key of a mapping that repeats an earlier one."""
        import yaml

        first: dict[tuple[str, str], int] = {}
        for key_node, _value in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == _MERGE_TAG:
                continue  # merge keys (<<) may repeat; a list or mapping as a key is rare
            ident = (key_node.tag, key_node.value)
            line = key_node.start_mark.line + 1
            if ident in first:
                self.duplicates.append(
                    PackageError(
                        f"duplicate key {_shown(key_node.value)} (first at line {first[ident]});"
                        " remove one of them",
                        path=self.path,
                        line=line,
                        column=key_node.start_mark.column + 1,
                    )
                )
            else:
                first[ident] = line


def _python_error(text: str) -> YAMLError | None:
    """The pure-Python parser's error for ``text`` (it says what it expected and what it got,
    where libyaml says "did not find expected ..."), or None when it finds none."""
    import yaml

    try:
        loader = _loaders()[False](text)
    except yaml.YAMLError as exc:  # a character YAML refuses
        return exc
    try:
        loader.get_single_node()
    except yaml.YAMLError as exc:
        return exc
    finally:
        loader.dispose()
    return None


def _index_lines(node: Node, path: tuple[Any, ...], lines: YamlLines) -> None:
    """Note the line of ``node`` and of everything inside it (depth is at most MAX_DEPTH)."""
    import yaml

    lines[path] = node_line(node)
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            child = (*path, str(key_node.value))
            _index_lines(value_node, child, lines)
            lines[child] = node_line(key_node)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _index_lines(item, (*path, index), lines)


def node_line(node: Node) -> int:
    """The 1-based line a YAML node starts on."""
    return int(node.start_mark.line) + 1


def _children(node: Node, yaml: ModuleType) -> list[Node]:
    """The nodes directly inside ``node`` (keys and values of a mapping)."""
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        items: list[Node] = node.value  # a sequence node's value is its item nodes
        return items
    return []


def load_yaml(text: str, path: Path | str) -> Any:
    """The value of a YAML document; any problem (a duplicate key too) is a PackageError."""
    document = YamlDocument(text, path)
    try:
        if document.duplicates:
            raise document.duplicates[0]
        return document.value()
    finally:
        document.close()


def read_yaml_lines(path: Path, *, name: str | None = None) -> tuple[Any, YamlLines]:
    """A YAML file's value and the line of every key path in it; any problem (a duplicate
    key too) is a PackageError naming the file (called ``name`` there) and line."""
    shown = name or str(path)
    document = YamlDocument(read_text(path, name=shown), shown)
    try:
        if document.duplicates:
            raise document.duplicates[0]
        return document.value(), document.lines()
    finally:
        document.close()


def line_of(lines: YamlLines, path: tuple[Any, ...]) -> int | None:
    """The line of ``path``, else of its nearest ancestor that has one."""
    while path:
        if path in lines:
            return lines[path]
        path = path[:-1]
    return lines.get(())


def field_path(parts: Iterable[Any]) -> str:
    """A key path as users read it: ``("rules", 2, "when")`` -> ``rules[2].when``."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text

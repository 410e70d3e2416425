"""Line numbers of the values in a JSON(C) text, found only when an error must name one.

``json`` gives parsed values without positions; a model file's mistake must still say
``file:line``. ``value_lines`` walks the text once (comments already blanked, offsets kept)
and maps each value's path (``("columns", 3, "type")``) to its line.
"""

from __future__ import annotations

import json

from agentcli.assistant.jsonc import strip_jsonc

__all__ = ["repeated_key", "value_lines"]

_DECODER = json.JSONDecoder()
_WHITESPACE = " \t\r\n"

Path = tuple[str | int, ...]


def value_lines(text: str) -> dict[Path, int]:
    """Every value's path in ``text`` mapped to the line it starts on (1-based); a text
    that does not parse gives what was found up to the problem."""
    cleaned = strip_jsonc(text.removeprefix("\ufeff"))
    found: dict[Path, int] = {}
    try:
        _walk(cleaned, 0, (), found)
    except (ValueError, IndexError):
        pass
    return found


class _Repeated(Exception):
    """The walk met a key its object already had (``repeated_key`` stops there)."""

    def __init__(self, key: str, first_line: int, offset: int) -> None:
        self.key, self.first_line, self.offset = key, first_line, offset


def repeated_key(text: str) -> tuple[str, int, int, int] | None:
    """The first key named twice in one object of ``text``: the key, the line of its first
    occurrence, and the line and column of the second; None when there is none."""
    cleaned = strip_jsonc(text.removeprefix("\ufeff"))
    try:
        _walk(cleaned, 0, (), {}, repeats=True)
    except _Repeated as found:
        line = cleaned.count("\n", 0, found.offset) + 1
        column = found.offset - cleaned.rfind("\n", 0, found.offset)
        return found.key, found.first_line, line, column
    except (ValueError, IndexError):
        pass
    return None


def _skip(text: str, index: int) -> int:
    while index < len(text) and text[index] in _WHITESPACE:
        index += 1
    return index


def _walk(
    text: str, index: int, path: Path, found: dict[Path, int], *, repeats: bool = False
) -> int:
    """Record the value at ``index`` (and everything inside it); return the index after it.
    With ``repeats``, a key its object already has raises ``_Repeated``."""
    index = _skip(text, index)
    found[path] = text.count("\n", 0, index) + 1
    opener = text[index]
    if opener not in "{[":
        _, end = _DECODER.raw_decode(text, index)
        return end
    closer = "}" if opener == "{" else "]"
    index = _skip(text, index + 1)
    position = 0
    while text[index] != closer:
        if opener == "{":
            start = index
            key, index = _DECODER.raw_decode(text, index)
            member = (*path, str(key))
            if repeats and member in found:  # paths are unique per member: a repeat
                raise _Repeated(str(key), found[member], start)
            index = _skip(text, index)
            if text[index] != ":":
                raise ValueError("expected ':'")
            index = _walk(text, index + 1, member, found, repeats=repeats)
        else:
            index = _walk(text, index, (*path, position), found, repeats=repeats)
            position += 1
        index = _skip(text, index)
        if text[index] == ",":
            index = _skip(text, index + 1)
    return index + 1

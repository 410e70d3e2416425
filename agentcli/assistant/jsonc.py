"""JSON with comments: ``//`` and ``/* */`` comments and trailing commas, as in package.yao.

Comments and trailing commas are blanked out with spaces (newlines kept), so the cleaned text
has the same length and line structure as the original and every error position reported by
``json`` is a position in the file the user wrote. A key named twice in one object is an
error at the second one, as in case files and YAML (``json`` would silently keep the last).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from agentcli.datafiles import DuplicateKeyError, loads_json
from agentcli.datafiles import read_text as read_data_text
from agentcli.errors import PackageError

__all__ = ["load_jsonc", "parse_jsonc", "read_text", "strip_jsonc"]

# Strings first so that "//" or "/*" inside a string (URLs) is never taken for a comment;
# a string stops at a raw newline so an unterminated one cannot swallow the rest of the file.
_COMMENTS = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|/\*[\s\S]*?\*/|/\*')
_TRAILING_COMMA = re.compile(r'"(?:[^"\\\n]|\\.)*"|,(?=\s*[\]}])')
_NOT_NEWLINE = re.compile(r"[^\n]")


def _blank(text: str) -> str:
    """The same text with every character but newlines replaced by a space."""
    return _NOT_NEWLINE.sub(" ", text)


def strip_jsonc(text: str, *, path: str | None = None) -> str:
    """Blank out comments and trailing commas, keeping every offset, line and column."""

    def comment(match: re.Match[str]) -> str:
        token = match.group()
        if token[0] == '"':
            return token
        if token == "/*":
            line = text.count("\n", 0, match.start()) + 1
            column = match.start() - text.rfind("\n", 0, match.start())
            raise PackageError(
                "unterminated /* comment",
                path=path,
                line=line,
                column=column,
                hint="close the comment with */",
            )
        return _blank(token)

    if "/" in text:
        text = _COMMENTS.sub(comment, text)
    if "," in text:
        text = _TRAILING_COMMA.sub(lambda m: m.group() if m.group()[0] == '"' else " ", text)
    return text


def parse_jsonc(text: str, *, path: str | None = None) -> Any:
    """Parse JSON-with-comments text; syntax errors raise PackageError with line and column."""
    text = text.removeprefix("\ufeff")
    try:
        # Fast path: most files are plain JSON.
        return loads_json(text, unique_keys=True)
    except (json.JSONDecodeError, DuplicateKeyError):
        pass
    cleaned = strip_jsonc(text, path=path)
    if not cleaned.strip():
        raise PackageError("file is empty; expected a JSON object", path=path)
    try:
        return loads_json(cleaned, unique_keys=True)
    except DuplicateKeyError as exc:
        raise _duplicate(cleaned, exc.key, path) from None
    except json.JSONDecodeError as exc:
        raise PackageError(
            f"invalid JSON: {exc.msg}",
            path=path,
            line=exc.lineno,
            column=exc.colno,
            hint="package files are JSON; // and /* */ comments and trailing commas are allowed",
        ) from None


def _duplicate(cleaned: str, key: str, path: str | None) -> PackageError:
    """The error for a key named twice in one object, at its second occurrence."""
    from agentcli.assistant.data.positions import repeated_key  # it reads JSONC with us

    found = repeated_key(cleaned)
    if found is None:  # json found the repeat, so the walk does too; said without a line
        return PackageError(f'duplicate key "{key}" in one object', path=path)
    key, first, line, column = found
    return PackageError(
        f"duplicate key {json.dumps(key, ensure_ascii=False)} (first at line {first})",
        path=path,
        line=line,
        column=column,
        hint="remove one of them: only the last would be used",
    )


def read_text(path: Path) -> str:
    """A package file's UTF-8 text; unreadable, undecodable or oversized files raise
    PackageError (see ``agentcli.datafiles``)."""
    return read_data_text(path)


def load_jsonc(path: Path) -> Any:
    """Read and parse a JSON-with-comments file."""
    return parse_jsonc(read_text(path), path=str(path))

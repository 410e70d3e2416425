"""YAML errors as the project's ``PackageError``: one line, with the file, line and column."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentcli.errors import PackageError

__all__ = ["yaml_error"]


def yaml_error(exc: Any, path: Path | str, text: str | None = None) -> PackageError:
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

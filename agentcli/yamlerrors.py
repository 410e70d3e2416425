"""YAML syntax errors as the project's ``PackageError``, with the file, line and column."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentcli.errors import PackageError

__all__ = ["yaml_error"]


def yaml_error(exc: Any, path: Path | str) -> PackageError:
    """The ``PackageError`` for a ``yaml.YAMLError`` raised while reading ``path``."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    if mark is None:
        return PackageError(f"invalid YAML: {exc}", path=str(path))
    problem = getattr(exc, "problem", None) or getattr(exc, "context", None)
    return PackageError(
        f"invalid YAML: {problem}", path=str(path), line=mark.line + 1, column=mark.column + 1
    )

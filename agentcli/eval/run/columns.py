"""The columns of a connector matrix: ``-c`` given several times, or ``--matrix`` naming a
file that lists the connectors (``matrix.yml``) or the names themselves, joined by commas.

A matrix file is YAML (or JSON): a list of connector names — aliases of ``connectors.yml``,
``echo``, ``scripted:<file>``, ``python:<module>:<function>`` or model strings — either as
the whole document or under a ``connectors`` key::

    # matrix.yml
    connectors:
      - gpt-4o
      - local
      - scripted:rules-b.yml
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentcli.datafiles import line_of, read_yaml_lines
from agentcli.errors import ConfigError, PackageError

__all__ = ["MATRIX_SUFFIXES", "matrix_columns", "read_matrix_file"]

MATRIX_SUFFIXES = (".yml", ".yaml", ".json")
_HINT = "list the connectors: `connectors: [gpt-4o, local]` in matrix.yml, or --matrix gpt-4o,local"


def matrix_columns(connectors: list[str], matrix: str | None, *, cwd: Path) -> list[str]:
    """The connectors every case runs on, in the order given; ``[]`` outside a matrix.
    ``connectors`` are the values of ``-c`` given several times, ``matrix`` the text of
    ``--matrix``; giving both, or one connector twice, is bad input."""
    if matrix is None:
        return _checked(connectors, "-c")
    if connectors:
        raise ConfigError(
            "give the matrix once: -c several times or --matrix, not both",
            hint="put every connector in the --matrix file (or list), or drop --matrix",
        )
    path = Path(matrix).expanduser()
    path = path if path.is_absolute() else cwd / path
    # A file when there is one, or when it looks like one (then a missing file is named);
    # names joined by commas otherwise (scripted:a.yml,scripted:b.yml is two names).
    if path.is_file() or ("," not in matrix and path.suffix.lower() in MATRIX_SUFFIXES):
        return _checked(read_matrix_file(path, shown=matrix), f"--matrix {matrix}")
    names = [name.strip() for name in matrix.split(",")]
    if not all(names):
        raise ConfigError(f"--matrix {matrix!r}: an empty connector name", hint=_HINT)
    return _checked(names, "--matrix")


def read_matrix_file(path: Path, *, shown: str | None = None) -> list[str]:
    """The connector names a matrix file lists (``file:line`` errors when it lists none, or
    something that is not a name)."""
    label = shown or str(path)
    if not path.is_file():
        raise ConfigError(f"--matrix {label}: no such file", hint=_HINT)
    try:
        data, lines = read_yaml_lines(path, name=label)
    except PackageError as error:
        raise ConfigError(error.message, hint=error.hint) from None
    key: tuple[Any, ...] = ()
    if isinstance(data, Mapping):
        if "connectors" not in data:
            raise ConfigError(
                f"{label}:{line_of(lines, ()) or 1}: no `connectors` list", hint=_HINT
            )
        data, key = data["connectors"], ("connectors",)
    if not isinstance(data, list) or not data:
        raise ConfigError(
            f"{label}:{line_of(lines, key) or 1}: expected a list of connector names", hint=_HINT
        )
    names: list[str] = []
    for index, item in enumerate(data):
        if not isinstance(item, str) or not item.strip():
            where = f"{label}:{line_of(lines, (*key, index)) or 1}"
            raise ConfigError(
                f"{where}: entry {index + 1} is {item!r}, not a connector name", hint=_HINT
            )
        names.append(item.strip())
    return names


def _checked(names: list[str], given: str) -> list[str]:
    """``names``, unless one of them is given twice (its cells would collide)."""
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ConfigError(
                f"{given}: connector {name!r} is given twice",
                hint="each connector is one column of the matrix: name it once",
            )
        seen.add(name)
    return names

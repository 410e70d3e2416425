"""Finding and reading the project's config file: ``agentcli.yml`` (or ``.yaml``), else a
``pyproject.toml`` with a ``[tool.agentcli]`` table, in the nearest folder walking up from
the current one. What is read is the raw table and the line of every key, so each problem
and each value can name its ``file:line``."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentcli.errors import AgentCliError, ConfigError

__all__ = ["CONFIG_FILE", "RawConfig", "find_config_file", "read_config"]

CONFIG_FILE = "agentcli.yml"
_YAML_NAMES = (CONFIG_FILE, "agentcli.yaml")
_PYPROJECT = "pyproject.toml"
_TOOL_TABLE = re.compile(r"^\s*\[\s*tool\.agentcli\s*\]\s*(#.*)?$", re.MULTILINE)


@dataclass(slots=True)
class RawConfig:
    """A config file's table as read, and the line of each key path in it."""

    path: Path
    table: dict[str, Any]
    lines: dict[tuple[str, ...], int] = field(default_factory=dict)

    def where(self, *keys: str) -> str:
        """``file:line`` of a key path (the nearest key that has a line, else the file)."""
        parts = tuple(keys)
        while parts:
            if parts in self.lines:
                return f"{self.path}:{self.lines[parts]}"
            parts = parts[:-1]
        return str(self.path)


def find_config_file(cwd: Path) -> Path | None:
    """The nearest config file from ``cwd`` up: ``agentcli.yml`` wins over a pyproject.toml
    in the same folder; a pyproject.toml without ``[tool.agentcli]`` is no project. An
    ``agentcli.yml`` that is no file (a folder, a broken link), or one beside an
    ``agentcli.yaml``, is a ConfigError: walking past it would silently read another
    folder's config, or no config at all."""
    start = cwd.absolute()
    for folder in (start, *start.parents):
        found = [folder / name for name in _YAML_NAMES if _is_config(folder / name)]
        if len(found) > 1:
            first, second = found
            raise ConfigError(
                f"{first} and {second}: two project configs in one folder; which one is "
                "meant cannot be told",
                hint=f"keep one: move the settings of {second.name} into {first.name} and "
                f"delete {second.name}",
            )
        if found:
            return found[0]
        pyproject = folder / _PYPROJECT
        if pyproject.is_file() and _has_tool_table(pyproject):
            return pyproject
    return None


def _is_config(path: Path) -> bool:
    """Whether ``path`` is a project config file; something else by that name is bad input."""
    if path.is_file():
        return True
    if path.is_dir():
        raise ConfigError(
            f"{path} is a folder; the project config must be a YAML file",
            hint=f"remove or rename the folder, and put the project's settings in a file "
            f"{path.name} (docs/eval.md#project-config)",
        )
    if path.is_symlink():
        raise ConfigError(
            f"{path} is a link to {path.readlink()}, which does not exist",
            hint="point the link at the project config, or delete it",
        )
    if path.exists():
        raise ConfigError(
            f"{path} is not a regular file; the project config must be a YAML file",
            hint=f"replace it with a file {path.name}",
        )
    return False


def _has_tool_table(path: Path) -> bool:
    """Whether a pyproject.toml has a ``[tool.agentcli]`` table (a cheap look at its text:
    most pyproject files walked past are not ours and need no TOML parse)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return _TOOL_TABLE.search(text) is not None or "[tool.agentcli." in text


def read_config(path: Path) -> RawConfig:
    """The config table of ``path`` (YAML safe-loaded, or pyproject's ``[tool.agentcli]``);
    a file that is not a mapping, or does not parse, is a ConfigError at its line."""
    if path.name == _PYPROJECT:
        return _read_pyproject(path)
    from agentcli.datafiles import read_yaml_lines

    try:
        value, lines = read_yaml_lines(path)
    except AgentCliError as error:  # a PackageError naming file:line: the same words
        raise ConfigError(error.message, hint="fix the project config file") from None
    if value is None:
        value = {}
    if not isinstance(value, dict):
        raise ConfigError(
            f"{path}:1: the project config must be a mapping of keys (assistants:, suites:, ...)",
            hint="see docs/eval.md#project-config",
        )
    keyed = {tuple(str(part) for part in key): line for key, line in lines.items()}
    return RawConfig(path, value, keyed)


def _read_pyproject(path: Path) -> RawConfig:
    """``[tool.agentcli]`` of a pyproject.toml; its key lines found in the text (tomllib
    keeps none)."""
    import tomllib

    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        found = re.search(r"line (\d+)", str(error))
        line = f":{found.group(1)}" if found else ""
        raise ConfigError(f"{path}{line}: invalid TOML: {error}") from None
    table = document.get("tool", {}).get("agentcli", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.agentcli] must be a table")
    return RawConfig(path, table, _toml_lines(text))


_TOML_HEADER = re.compile(r"^\s*\[\s*tool\.agentcli((?:\.[\w-]+)*)\s*\]")
_TOML_OTHER_HEADER = re.compile(r"^\s*\[")
_TOML_KEY = re.compile(r"""^\s*(?:"([^"]+)"|'([^']+)'|([\w-]+))\s*=""")


def _toml_lines(text: str) -> dict[tuple[str, ...], int]:
    """The line of every ``key =`` under ``[tool.agentcli]`` and its sub-tables (keys of
    inline tables and dotted keys are located by their first part)."""
    lines: dict[tuple[str, ...], int] = {}
    prefix: tuple[str, ...] | None = None
    for number, line in enumerate(text.splitlines(), 1):
        header = _TOML_HEADER.match(line)
        if header:
            prefix = tuple(part for part in header.group(1).split(".") if part)
            if prefix:
                lines.setdefault(prefix, number)
            continue
        if _TOML_OTHER_HEADER.match(line):
            prefix = None
            continue
        key = _TOML_KEY.match(line)
        if prefix is not None and key:
            name = next(group for group in key.groups() if group)
            lines.setdefault((*prefix, name), number)
    return lines

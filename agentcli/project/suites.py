"""A suite's globs to case files (``**`` for any depth), relative to the project root."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.errors import ConfigError

if TYPE_CHECKING:
    from agentcli.project.config import Suite

__all__ = ["CASE_SUFFIXES", "expand_suite"]

CASE_SUFFIXES = (".jsonl", ".json", ".yaml", ".yml")
# Results and state live here: a glob such as **/*.jsonl must not take them for cases.
_NOT_CASES = (".agentcli", ".git", ".venv", "node_modules")


def expand_suite(suite: Suite, root: Path) -> list[Path]:
    """The case files of ``suite``, in pattern order and sorted within a pattern, each once;
    a pattern that matches no case file is a ConfigError at the suite's line."""
    found: dict[Path, None] = {}
    for pattern in suite.patterns:
        if Path(pattern).is_absolute() or ".." in Path(pattern).parts:
            raise ConfigError(
                f"{suite.source}: suite {suite.name!r}: {pattern!r} must be relative to the "
                f"project root ({root}), inside it (no ..)"
            )
        matched = sorted(
            path.absolute()
            for path in root.glob(pattern)
            if path.is_file() and path.suffix.lower() in CASE_SUFFIXES and _is_case_file(path, root)
        )
        if not matched:
            raise ConfigError(
                f"{suite.source}: suite {suite.name!r}: {pattern!r} matches no case file "
                f"(.jsonl .json .yaml .yml) under {root}",
                hint="check the glob; ** matches any number of folders",
            )
        found.update(dict.fromkeys(matched))
    return list(found)


# The project's own config is YAML too: "*.yml" must not take it for a case file.
_CONFIG_FILES = ("agentcli.yml", "agentcli.yaml")


def _is_case_file(path: Path, root: Path) -> bool:
    """Not a results file (``output-*.jsonl``), the project's config, nor anything in a
    tool's own folder."""
    if path.name.startswith("output-") or (path.parent == root and path.name in _CONFIG_FILES):
        return False
    parts = path.relative_to(root).parts
    return not any(part in _NOT_CASES for part in parts)

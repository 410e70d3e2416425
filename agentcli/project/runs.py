"""The project's runs folder: results files of the project's runs, one subfolder per case
file (``.agentcli/runs/assistants-expense-tests-inputs/output-<timestamp>.jsonl``), and a
``latest`` text file naming the newest results file.

``latest`` is a text file, not a symlink: it works the same on every filesystem and in CI
artifacts (which often drop symlinks), it is replaced atomically, and a viewer listing the
``*.jsonl`` files of the folder never sees the newest run twice.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentcli.project.config import ProjectConfig

__all__ = ["LATEST", "latest_results", "results_folder", "runs_folder", "write_latest"]

LATEST = "latest"
_UNSAFE = re.compile(r"[^\w.-]+")


def runs_folder(config: ProjectConfig) -> Path:
    """Where the project's results files go (and where ``agent view`` looks by default):
    ``runs_folder`` as resolved, else ``.agentcli/runs`` under the project root, else (no
    project) ``.agentcli/runs`` under the current folder."""
    if config.runs_folder.value is not None:
        return config.runs_folder.value
    from agentcli.project.config import DEFAULT_RUNS_FOLDER

    return ((config.root or Path.cwd()) / DEFAULT_RUNS_FOLDER).absolute()


def results_folder(config: ProjectConfig, case_file: Path) -> Path:
    """The subfolder of the runs folder for one case file: its path under the project root
    without the suffix, folders joined by ``-`` (a file outside the root: its stem)."""
    path = case_file.absolute().with_suffix("")
    root = config.root
    parts = path.relative_to(root).parts if root and path.is_relative_to(root) else (path.name,)
    label = "-".join(_UNSAFE.sub("_", part) for part in parts) or "cases"
    return runs_folder(config) / label


def write_latest(config: ProjectConfig, results: Path) -> None:
    """Point ``latest`` at ``results`` (its path relative to the runs folder), atomically."""
    folder = runs_folder(config)
    folder.mkdir(parents=True, exist_ok=True)
    target = results.absolute()
    shown = target.relative_to(folder) if target.is_relative_to(folder) else target
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=".latest-", text=True)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(f"{shown.as_posix()}\n")
        os.replace(temporary, folder / LATEST)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def latest_results(config: ProjectConfig) -> Path | None:
    """The results file ``latest`` names, when it names one that exists."""
    folder = runs_folder(config)
    try:
        text = (folder / LATEST).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not text:
        return None
    path = folder / text
    return path if path.is_file() else None

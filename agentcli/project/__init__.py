"""The project: ``agentcli.yml`` (or ``[tool.agentcli]`` in pyproject.toml) found by walking
up from the current folder, resolved with the environment and the built-in defaults into a
``ProjectConfig`` whose every value says where it came from.

A leaf package: it imports nothing of agentcli but ``errors``, ``datafiles`` and
``durations``, so any layer (the CLI, the eval session, the viewer) may read the project.
"""

from __future__ import annotations

from agentcli.project.config import (
    CONFIG_FILE,
    OUTPUT_MODES,
    ProjectConfig,
    Setting,
    Suite,
    assistants_root,
    load_project,
)
from agentcli.project.runs import latest_results, results_folder, runs_folder, write_latest

__all__ = [
    "CONFIG_FILE",
    "OUTPUT_MODES",
    "ProjectConfig",
    "Setting",
    "Suite",
    "assistants_root",
    "latest_results",
    "load_project",
    "results_folder",
    "runs_folder",
    "write_latest",
]

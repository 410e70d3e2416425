"""A project's run writes its results in the project's runs folder (``agentcli.project``),
one subfolder per case file, and points ``latest`` at them; outside a project, or with
``output: beside-cases``, results go beside the case file as before."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.errors import ConfigError
from agentcli.project.runs import LATEST, results_folder, runs_folder, write_latest

if TYPE_CHECKING:
    from agentcli.eval.run.options import EvalOptions

__all__ = ["note_latest", "results_folder_of"]


def results_folder_of(options: EvalOptions, case_file: Path) -> Path | None:
    """The runs-folder subfolder of ``case_file``'s results, or None (beside the file)."""
    project = options.project
    if project is None or project.output.value != "runs":
        return None
    return results_folder(project, case_file)


def note_latest(options: EvalOptions, results: Path) -> None:
    """Point the project's ``latest`` at ``results`` when they are in its runs folder."""
    project = options.project
    if project is None or project.output.value != "runs":
        return
    folder = runs_folder(project)
    if results.absolute().is_relative_to(folder):
        try:
            write_latest(project, results)
        except OSError as error:
            raise ConfigError(
                f"{folder / LATEST}: cannot point it at the new results "
                f"({error.strerror or error})",
                hint=f"remove {folder / LATEST}: it is a text file agentcli writes",
            ) from None

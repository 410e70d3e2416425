"""The cassettes of an eval run: one file per case (and per run under ``--runs``) in one
folder, ``cassettes/`` beside the case file unless ``--cassettes`` names another."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from agentcli.assistant.cassette import Cassette, CassetteMode, read_interactions

__all__ = ["GENERATION", "Cassettes"]

# The cassette of the calls that generate a run's cases (``agents:<generator>`` inputs).
GENERATION = ".generation"

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


@dataclass(frozen=True, slots=True)
class Cassettes:
    """Where a run's cassettes are and whether it records or replays them."""

    folder: Path
    mode: CassetteMode

    def path_for(self, case_id: str, run: int | None) -> Path:
        """``<case id>[@<run>].jsonl``; an id that is not a safe file name is spelt safely,
        with a short hash of the id so two such ids never share a file."""
        name = _UNSAFE.sub("_", case_id)
        if name != case_id or name.startswith("."):
            name = (
                f"{name.lstrip('.') or 'case'}-{hashlib.sha256(case_id.encode()).hexdigest()[:8]}"
            )
        suffix = f"@{run}" if run is not None else ""
        return self.folder / f"{name}{suffix}.jsonl"

    def column(self, connector: str) -> Cassettes:
        """The cassettes of one column of a connector matrix: a folder of their own (named
        as a case would be), so each connector records and replays its own calls."""
        return Cassettes(self.path_for(connector, None).with_suffix(""), self.mode)

    def open(self, case_id: str, run: int | None) -> Cassette:
        """The cassette of one case (one run of it)."""
        return Cassette.open(self.path_for(case_id, run), self.mode, case_id, run)

    def open_generation(self) -> Cassette:
        """The cassette of the calls that generated the run's cases (its file name starts
        with ``.``, which no case's does)."""
        return Cassette.open(self.folder / f"{GENERATION}.jsonl", self.mode, GENERATION, None)

    def check(self, case_ids: list[str], runs: int) -> None:
        """Read every cassette the run will replay from, so a line that is not a cassette
        entry is a ``ConfigError`` (file:line, exit 2) before any case runs."""
        if self.mode == "record":
            return  # every cassette is written anew
        for case_id in case_ids:
            for run in range(1, runs + 1) if runs > 1 else (None,):
                path = self.path_for(case_id, run)
                if path.is_file():
                    read_interactions(path)

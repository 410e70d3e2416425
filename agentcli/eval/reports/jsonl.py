"""JSON Lines results, written as each case finishes so an interrupted run keeps its cases.

Lines: one ``{"type": "header", ...}``, one ``{"type": "result", ...}`` per finished case,
at close one ``{"type": "stability", ...}`` per stability result and a final
``{"type": "summary", ...}`` (its presence marks a run that finished).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Any

from agentcli.errors import AgentCliError, ConfigError

from ._view import RESULT_KEYS, STABILITY_KEYS, SUMMARY_KEYS, ordered, to_json

__all__ = ["JsonlWriter"]


class JsonlWriter:
    """Streams header, results, stability results and summary as JSON Lines."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: IO[str] | None = None

    def open(self, header: dict[str, Any]) -> None:
        """Create (truncate) the file and write the header line."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = self.path.open("w", encoding="utf-8", newline="\n")
        except OSError as exc:
            raise ConfigError(f"cannot write results {self.path}: {exc.strerror or exc}") from exc
        body = {key: value for key, value in header.items() if key != "type"}
        self._write({"type": "header", **body})

    def add(self, result: dict[str, Any]) -> None:
        """Append one finished case and flush it to the OS."""
        self._write({"type": "result", **ordered(result, RESULT_KEYS)})

    def close(
        self, summary: dict[str, Any], stability_results: list[dict[str, Any]] | None = None
    ) -> None:
        """Write the stability and summary lines, fsync and close the file."""
        for item in stability_results or []:
            self._write({"type": "stability", **ordered(item, STABILITY_KEYS)})
        self._write({"type": "summary", **ordered(summary, SUMMARY_KEYS)})
        handle = self._require_open()
        try:
            os.fsync(handle.fileno())
        except OSError as exc:
            raise ConfigError(f"cannot write results {self.path}: {exc.strerror or exc}") from exc
        finally:
            handle.close()
            self._file = None

    def _require_open(self) -> IO[str]:
        """The open file; using the writer outside open()..close() is a programming error."""
        if self._file is None:
            raise AgentCliError(f"results writer for {self.path} is not open")
        return self._file

    def _write(self, line: dict[str, Any]) -> None:
        """Write one line and flush, so a crash after this call keeps it."""
        handle = self._require_open()
        try:
            handle.write(to_json(line) + "\n")
            handle.flush()
        except OSError as exc:
            raise ConfigError(f"cannot write results {self.path}: {exc.strerror or exc}") from exc

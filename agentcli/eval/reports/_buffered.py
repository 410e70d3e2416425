"""The common shape of whole-document writers: buffer results, render and write at close."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ._view import atomic_write_text, build_report


class BufferedWriter:
    """Keeps the header and results; at close renders the report and writes it atomically."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._header: dict[str, Any] = {}
        self._results: list[dict[str, Any]] = []

    def open(self, header: dict[str, Any]) -> None:
        """Remember the header."""
        self._header = header
        self._results = []

    def add(self, result: dict[str, Any]) -> None:
        """Buffer one finished case."""
        self._results.append(result)

    def close(
        self, summary: dict[str, Any], stability_results: list[dict[str, Any]] | None = None
    ) -> None:
        """Render the whole report and replace the file in one rename."""
        report = build_report(self._header, self._results, summary, stability_results)
        atomic_write_text(self.path, self.render(report))

    def render(self, report: dict[str, Any]) -> str:
        """The document text of ``report``; each format overrides this."""
        raise NotImplementedError

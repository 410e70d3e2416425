"""The common shape of whole-document writers: buffer results, render and write at close."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ._files import atomic_write_text, scrub_surrogates
from ._view import build_report


class BufferedWriter:
    """Keeps the header and results; at close renders the report and writes it atomically."""

    errors = "strict"  # how text the encoding cannot take is written (JSON overrides it)

    def __init__(self, path: Path) -> None:
        self.path = path
        self.saved = "the file was left as it was"  # what the close error says is safe
        self._header: dict[str, Any] = {}
        self._results: list[dict[str, Any]] = []

    @staticmethod
    def recognises(head: str) -> bool:
        """True when ``head`` (a file's first bytes) is a report of this format."""
        raise NotImplementedError

    def targets(self) -> list[tuple[Path, Any]]:
        """The files this writer replaces, each with its format check."""
        return [(self.path, self.recognises)]

    def open(self, header: dict[str, Any], kept: Iterable[dict[str, Any]] = ()) -> None:
        """Remember the header and the results kept from an earlier run."""
        self._header = header
        self._results = list(kept)

    def add(self, result: dict[str, Any]) -> None:
        """Buffer one finished case."""
        self._results.append(result)

    def close(
        self, summary: dict[str, Any], stability_results: list[dict[str, Any]] | None = None
    ) -> None:
        """Render the whole report and replace the file in one rename."""
        report = build_report(self._header, self._results, summary, stability_results)
        atomic_write_text(self.path, self.text(report), errors=self.errors, saved=self.saved)

    def abandon(self) -> None:
        """Drop the buffered results (the run failed before it could write them)."""
        self._results = []

    def text(self, report: dict[str, Any]) -> str:
        """The document as it goes to disk: a lone surrogate becomes U+FFFD."""
        return scrub_surrogates(self.render(report))

    def render(self, report: dict[str, Any]) -> str:
        """The document text of ``report``; each format overrides this."""
        raise NotImplementedError

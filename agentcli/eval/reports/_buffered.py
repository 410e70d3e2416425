"""The common shape of whole-document writers: buffer results, render and write at close."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from agentcli.eval.results.codec import finished_header
from agentcli.eval.results.model import CaseResult, JsonObject, RunHeader, RunReport, RunSummary

from ._files import Target, atomic_write_text, scrub_surrogates


class BufferedWriter:
    """Keeps the header and results; at close renders the report and writes it atomically."""

    errors = "strict"  # how text the encoding cannot take is written (JSON overrides it)

    def __init__(self, path: Path) -> None:
        self.path = path
        self.saved = "the file was left as it was"  # what the close error says is safe
        self._header = RunHeader()
        self._results: list[CaseResult] = []

    @staticmethod
    def recognises(head: str) -> bool:
        """True when ``head`` (a file's first bytes) is a report of this format."""
        raise NotImplementedError

    def targets(self) -> list[Target]:
        """The files this writer replaces, each with its format check."""
        return [(self.path, self.recognises)]

    def open(self, header: RunHeader, kept: Iterable[CaseResult] = ()) -> None:
        """Remember the header and the results kept from an earlier run."""
        self._header = header
        self._results = list(kept)

    def add(self, result: CaseResult) -> None:
        """Buffer one finished case."""
        self._results.append(result)

    def close(self, summary: RunSummary, stability_results: list[JsonObject] | None = None) -> None:
        """Render the whole report and replace the file in one rename."""
        report = RunReport(
            finished_header(self._header, summary), self._results, summary, stability_results or []
        )
        atomic_write_text(self.path, self.text(report), errors=self.errors, saved=self.saved)

    def abandon(self) -> None:
        """Drop the buffered results (the run failed before it could write them)."""
        self._results = []

    def saved_note(self) -> str:
        """What is safe on disk when the close fails (a buffered report writes nothing before)."""
        return self.saved

    def text(self, report: RunReport) -> str:
        """The document as it goes to disk: a lone surrogate becomes U+FFFD."""
        return scrub_surrogates(self.render(report))

    def render(self, report: RunReport) -> str:
        """The document text of ``report``; each format overrides this."""
        raise NotImplementedError

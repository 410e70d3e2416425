"""Report writers (one per format, chosen by extension) and the results reader.

Every writer follows the same streaming protocol: ``open(header)`` once, ``add(result)``
as each case finishes, ``close(summary, stability_results)`` at the end. The JSON Lines
writer puts each result on disk at once; the other formats buffer and write at close.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from agentcli.errors import ConfigError
from agentcli.secrets import redact_data

from .html import HtmlWriter
from .json_report import JsonWriter
from .jsonl import JsonlWriter
from .junit import JunitWriter
from .markdown import MarkdownWriter
from .reader import LoadedReport, read_results

__all__ = [
    "SUPPORTED_EXTENSIONS",
    "LoadedReport",
    "RedactingWriter",
    "ReportWriter",
    "read_results",
    "writer_for",
]


class ReportWriter(Protocol):
    """A results sink fed as the run goes."""

    path: Path

    def open(self, header: dict[str, Any]) -> None:
        """Start the report; ``header`` is ``{"type": "header", environment, metadata, ...}``."""
        ...

    def add(self, result: dict[str, Any]) -> None:
        """Record one finished case (or one run of it)."""
        ...

    def close(
        self, summary: dict[str, Any], stability_results: list[dict[str, Any]] | None = None
    ) -> None:
        """Finish the report with the summary and, under ``--runs``, the stability results."""
        ...


_WRITERS: dict[str, type] = {
    ".jsonl": JsonlWriter,
    ".json": JsonWriter,
    ".md": MarkdownWriter,
    ".markdown": MarkdownWriter,
    ".html": HtmlWriter,
    ".htm": HtmlWriter,
    ".xml": JunitWriter,
}
SUPPORTED_EXTENSIONS = tuple(_WRITERS)


class RedactingWriter:
    """Passes everything through ``redact_data`` so no secret reaches a report."""

    def __init__(self, inner: ReportWriter) -> None:
        self.inner = inner
        self.path = inner.path

    def open(self, header: dict[str, Any]) -> None:
        """Start the report."""
        self.inner.open(redact_data(header))

    def add(self, result: dict[str, Any]) -> None:
        """Record one result."""
        self.inner.add(redact_data(result))

    def close(
        self, summary: dict[str, Any], stability_results: list[dict[str, Any]] | None = None
    ) -> None:
        """Finish the report."""
        self.inner.close(redact_data(summary), redact_data(stability_results))


def writer_for(path: Path) -> ReportWriter:
    """The writer for ``path``'s extension (no extension: JSON Lines, the default format),
    redacting secrets from everything it writes."""
    return RedactingWriter(_plain_writer(path))


def _plain_writer(path: Path) -> ReportWriter:
    suffix = path.suffix.lower()
    if not suffix:
        return JsonlWriter(path)
    writer = _WRITERS.get(suffix)
    if writer is None:
        raise ConfigError(
            f"cannot write report {path}: unknown extension {path.suffix!r}",
            hint="use one of " + ", ".join(SUPPORTED_EXTENSIONS) + " (.xml = JUnit)",
        )
    return writer(path)

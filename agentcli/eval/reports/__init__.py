"""Report writers (one per format, chosen by extension); the results reader is
``eval/results/reader.py`` (re-exported here).

Every writer follows the same streaming protocol, fed the typed values of
``eval/results/model.py``: ``open(header, kept)`` once (a ``RunHeader``; ``kept``: the
``CaseResult``s an earlier run finished, for ``--resume``), ``add(result)`` as each case
finishes, ``close(summary, stability_results)`` at the end (a ``RunSummary`` and, under
``--runs``, the stability results as JSON objects), or ``abandon()`` after a failure. The JSON
Lines writer puts each result on disk at once; the other formats buffer and write at close,
so ``agent eval`` streams their results to a JSON Lines file beside them as well
(``report.html`` -> ``report.html.jsonl``): a report that cannot be written loses nothing.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import IO, Protocol

from agentcli.errors import ConfigError
from agentcli.eval.results.model import CaseResult, JsonObject, RunHeader, RunSummary
from agentcli.eval.results.reader import LoadedReport, read_results
from agentcli.secrets import redact_data

from ._buffered import BufferedWriter
from ._files import Target, check_target, probe_writable
from ._redact import redacted
from .jsonl import JsonlStreamWriter, JsonlWriter

__all__ = [
    "SUPPORTED_EXTENSIONS",
    "LoadedReport",
    "RedactingWriter",
    "ReportWriter",
    "StreamedReport",
    "is_stdout",
    "read_results",
    "results_to",
    "stream_path",
    "writer_for",
]

# ``-o -``: the results go to stdout, as JSON Lines (the one format that streams).
STDOUT = "-"
# The stream ``-o -`` writes to: the CLI's private stdout while it runs (so nothing a
# case prints can land in the results), else sys.stdout.
_stdout: ContextVar[IO[str] | None] = ContextVar("results_stdout", default=None)


def is_stdout(path: Path | str | None) -> bool:
    """True for ``-o -``."""
    return path is not None and str(path) == STDOUT


@contextlib.contextmanager
def results_to(stream: IO[str]) -> Iterator[None]:
    """Inside the block, ``-o -`` writes to ``stream``."""
    token = _stdout.set(stream)
    try:
        yield
    finally:
        _stdout.reset(token)


def stdout_stream() -> IO[str]:
    """Where ``-o -`` writes now."""
    return _stdout.get() or sys.stdout


class ReportWriter(Protocol):
    """A results sink fed as the run goes."""

    path: Path

    def targets(self) -> list[Target]:
        """The files the writer replaces, each with its format check (``recognises``)."""
        ...

    def open(self, header: RunHeader, kept: Iterable[CaseResult] = ()) -> None:
        """Start the report; ``kept`` are the finished results of an earlier run (``--resume``)."""
        ...

    def add(self, result: CaseResult) -> None:
        """Record one finished case (or one run of it)."""
        ...

    def close(self, summary: RunSummary, stability_results: list[JsonObject] | None = None) -> None:
        """Finish the report with the summary and, under ``--runs``, the stability results."""
        ...

    def abandon(self) -> None:
        """Stop after a failure, leaving on disk what was written."""
        ...

    def saved_note(self) -> str:
        """Where the results written so far are, for an error message."""
        ...


# Each whole-document writer (module, class) is imported when a run asks for its format:
# an eval writing JSON Lines does not load the HTML, XML and Markdown writers.
_WRITERS: dict[str, tuple[str, str]] = {
    ".json": ("json_report", "JsonWriter"),
    ".md": ("markdown", "MarkdownWriter"),
    ".markdown": ("markdown", "MarkdownWriter"),
    ".html": ("html", "HtmlWriter"),
    ".htm": ("html", "HtmlWriter"),
    ".xml": ("junit", "JunitWriter"),
}
SUPPORTED_EXTENSIONS = (".jsonl", *_WRITERS)


def stream_path(path: Path) -> Path:
    """The JSON Lines file streamed beside a whole-document report: ``report.html.jsonl``
    (the full name is kept, so it never collides with a ``report.jsonl`` of the user's)."""
    return path.with_name(path.name + ".jsonl")


class StreamedReport:
    """A whole-document report whose results also stream to JSON Lines beside it, so every
    finished result is on disk even when the report itself cannot be written."""

    def __init__(self, final: BufferedWriter) -> None:
        self.final = final
        self.path = final.path
        self.stream = JsonlWriter(stream_path(final.path))
        final.saved = (
            f"every result is in {self.stream.path}; "
            f"render it later with: agent report {self.stream.path} -o {self.path}"
        )

    def targets(self) -> list[Target]:
        """The report and its JSON Lines stream."""
        return [*self.final.targets(), *self.stream.targets()]

    def open(self, header: RunHeader, kept: Iterable[CaseResult] = ()) -> None:
        """Start both; the kept results go to both."""
        kept = list(kept)
        self.final.open(header, kept)
        self.stream.open(header, kept)

    def add(self, result: CaseResult) -> None:
        """On disk first, then into the report's buffer."""
        self.stream.add(result)
        self.final.add(result)

    def close(self, summary: RunSummary, stability_results: list[JsonObject] | None = None) -> None:
        """Finish the stream (with its summary), then write the report."""
        self.stream.close(summary, stability_results)
        self.final.close(summary, stability_results)

    def abandon(self) -> None:
        """Stop both."""
        self.stream.abandon()
        self.final.abandon()

    def saved_note(self) -> str:
        """Where the streamed results are."""
        return self.stream.saved_note()

    @property
    def complete(self) -> bool:
        """Every result and the summary are in the stream."""
        return self.stream.complete


class RedactingWriter:
    """Passes everything through ``redact_data`` so no secret reaches a report."""

    def __init__(
        self, inner: JsonlWriter | JsonlStreamWriter | BufferedWriter | StreamedReport
    ) -> None:
        self.inner = inner
        self.path = inner.path

    @property
    def results_complete(self) -> bool:
        """The JSON Lines results (the file or the stream beside it) hold every result and
        the summary: nothing needs ``--resume``."""
        return not isinstance(self.inner, BufferedWriter) and self.inner.complete

    @property
    def stream_path(self) -> Path | None:
        """The JSON Lines file streamed beside a whole-document report, if any."""
        return self.inner.stream.path if isinstance(self.inner, StreamedReport) else None

    def targets(self) -> list[Target]:
        """The files the writer replaces."""
        return self.inner.targets()

    def open(self, header: RunHeader, kept: Iterable[CaseResult] = ()) -> None:
        """Start the report."""
        self.inner.open(redacted(header), (redacted(result) for result in kept))

    def add(self, result: CaseResult) -> None:
        """Record one result."""
        self.inner.add(redacted(result))

    def close(self, summary: RunSummary, stability_results: list[JsonObject] | None = None) -> None:
        """Finish the report."""
        self.inner.close(redacted(summary), redact_data(stability_results))

    def abandon(self) -> None:
        """Stop after a failure."""
        self.inner.abandon()

    def saved_note(self) -> str:
        """Where the results written so far are."""
        return self.inner.saved_note()


def writer_for(
    path: Path,
    *,
    stream: bool = False,
    inputs: Iterable[Path] = (),
    force: bool = False,
    check: bool = True,
) -> RedactingWriter:
    """The writer for ``path``'s extension (no extension: JSON Lines, the default format),
    redacting secrets from everything it writes; with ``stream``, a whole-document format
    also streams its results to ``stream_path(path)``.

    Unless ``check`` is off, every file it would replace is checked first (``ConfigError``,
    exit 2, before anything ran): none may be one of ``inputs``, an existing file must be a
    report of its format (or ``force``), and its folder must take a new file.

    ``-`` is stdout (``stdout_stream()``), as JSON Lines."""
    if is_stdout(path):
        return RedactingWriter(JsonlStreamWriter(stdout_stream()))
    plain = _plain_writer(path)
    writer = RedactingWriter(
        StreamedReport(plain) if stream and not isinstance(plain, JsonlWriter) else plain
    )
    if check:
        inputs = list(inputs)
        targets = writer.targets()
        for target, recognises in targets:
            check_target(target, recognises=recognises, inputs=inputs, force=force)
        for target, _ in targets:  # only now: probing creates the folders
            probe_writable(target)
    return writer


def _plain_writer(path: Path) -> JsonlWriter | BufferedWriter:
    """The writer of ``path``'s format, without redaction or a stream beside it."""
    suffix = path.suffix.lower()
    if not suffix or suffix == ".jsonl":
        return JsonlWriter(path)
    found = _WRITERS.get(suffix)
    if found is None:
        raise ConfigError(
            f"cannot write report {path}: unknown extension {path.suffix!r}",
            hint="use one of " + ", ".join(SUPPORTED_EXTENSIONS) + " (.xml = JUnit)",
        )
    module, name = found
    writer: Callable[[Path], BufferedWriter] = getattr(
        importlib.import_module(f"{__name__}.{module}"), name
    )
    return writer(path)

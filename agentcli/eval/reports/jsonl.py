"""JSON Lines results, written as each case finishes so an interrupted run keeps its cases.

Lines: one ``{"type": "header", ...}``, one ``{"type": "result", ...}`` per finished case,
at close one ``{"type": "stability", ...}`` per stability result and a final
``{"type": "summary", ...}`` (its presence marks a run that finished).

The file is never truncated in place: ``open`` writes the header (and the results kept by
``--resume``) to a temporary file beside it, syncs it and renames it over the path, then
appends. Killed at any moment, the path holds either the old file, whole, or the header,
every kept result and the results finished since.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import IO

from agentcli.errors import AgentCliError, ConfigError, OutputError
from agentcli.eval.results.codec import (
    STABILITY_KEYS,
    header_dict,
    ordered,
    result_dict,
    summary_dict,
    to_json,
)
from agentcli.eval.results.model import CaseResult, JsonObject, RunHeader, RunSummary

from ._files import (
    JSON_ERRORS,
    Target,
    explain,
    fsync_folder,
    real_target,
    temp_beside,
    write_failed,
)

__all__ = ["JsonlStreamWriter", "JsonlWriter"]

_HEADER_LINE = re.compile(r'\s*\{\s*"type"\s*:\s*"(header|start)"')


class JsonlWriter:
    """Streams header, results, stability results and summary as JSON Lines."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.written = 0  # result lines on disk (kept ones included)
        self.complete = False  # closed with its summary line: every result is on disk
        self._file: IO[str] | None = None
        self._failure: OutputError | None = None

    @staticmethod
    def recognises(head: str) -> bool:
        """True when ``head`` (a file's first bytes) starts with a results header line."""
        return _HEADER_LINE.match(head) is not None

    def targets(self) -> list[Target]:
        """The files this writer replaces, each with its format check."""
        return [(self.path, self.recognises)]

    def open(self, header: RunHeader, kept: Iterable[CaseResult] = ()) -> None:
        """Put the header and the ``kept`` results in place of the file, atomically."""
        target = real_target(self.path)
        tmp = temp_beside(target)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            handle = tmp.open("x", encoding="utf-8", errors=JSON_ERRORS, newline="\n")
        except OSError as exc:
            raise self._cannot_start(exc) from exc
        try:
            handle.write(to_json(_line("header", header_dict(header))) + "\n")
            for result in kept:
                handle.write(to_json(_line("result", result_dict(result))) + "\n")
                self.written += 1
            handle.flush()
            os.fsync(handle.fileno())
            os.replace(tmp, target)
        except OSError as exc:
            _close_quietly(handle)
            tmp.unlink(missing_ok=True)
            raise self._cannot_start(exc) from exc
        fsync_folder(target.parent)
        self._file = handle

    def add(self, result: CaseResult) -> None:
        """Append one finished case and flush it to the OS."""
        self._write(_line("result", result_dict(result)))
        self.written += 1

    def close(self, summary: RunSummary, stability_results: list[JsonObject] | None = None) -> None:
        """Write the stability and summary lines, fsync and close the file."""
        for item in stability_results or []:
            self._write(_line("stability", ordered(item, STABILITY_KEYS)))
        self._write(_line("summary", summary_dict(summary)))
        handle = self._require_open()
        try:
            os.fsync(handle.fileno())
        except OSError as exc:
            raise self._failed(exc) from exc
        finally:
            _close_quietly(handle)
            self._file = None
        self.complete = True

    def abandon(self) -> None:
        """Close the file without a summary (after a failure); what is on disk stays."""
        if self._file is not None:
            _close_quietly(self._file)
            self._file = None

    def saved_note(self) -> str:
        """Where the results written so far are, for an error message."""
        count = f"{self.written} finished result" + ("" if self.written == 1 else "s")
        return f"the {count} written before are in {self.path}"

    def _cannot_start(self, exc: OSError) -> ConfigError:
        """Before any case ran, an unwritable results file is bad input (exit 2)."""
        what, todo = explain(exc)
        return ConfigError(f"cannot write results {self.path}: {what}", hint=todo)

    def _failed(self, exc: OSError) -> OutputError:
        """A write that failed mid-run: remembered, so later writes fail the same way."""
        self._failure = write_failed(self.path, exc, saved=self.saved_note())
        self.abandon()
        return self._failure

    def _require_open(self) -> IO[str]:
        """The open file; using the writer outside open()..close() is a programming error."""
        if self._failure is not None:
            raise self._failure
        if self._file is None:
            raise AgentCliError(f"results writer for {self.path} is not open")
        return self._file

    def _write(self, line: JsonObject) -> None:
        """Write one line and flush, so a crash after this call keeps it."""
        handle = self._require_open()
        try:
            handle.write(to_json(line) + "\n")
            handle.flush()
        except OSError as exc:
            raise self._failed(exc) from exc


class JsonlStreamWriter(JsonlWriter):
    """The same lines onto a stream (``-o -``: stdout), each flushed as it is written; the
    stream is the caller's, left open."""

    def __init__(self, stream: IO[str]) -> None:
        super().__init__(Path("-"))
        self._stream = stream

    def targets(self) -> list[Target]:
        """No file is replaced."""
        return []

    def open(self, header: RunHeader, kept: Iterable[CaseResult] = ()) -> None:
        """The header and the ``kept`` results, at once."""
        self._file = self._stream
        self._write(_line("header", header_dict(header)))
        for result in kept:
            self._write(_line("result", result_dict(result)))
            self.written += 1

    def close(self, summary: RunSummary, stability_results: list[JsonObject] | None = None) -> None:
        """The stability and summary lines; the stream stays open."""
        for item in stability_results or []:
            self._write(_line("stability", ordered(item, STABILITY_KEYS)))
        self._write(_line("summary", summary_dict(summary)))
        self._file = None
        self.complete = True

    def abandon(self) -> None:
        """Stop writing (the stream stays open)."""
        self._file = None

    def saved_note(self) -> str:
        """Where the results written so far went."""
        count = f"{self.written} finished result" + ("" if self.written == 1 else "s")
        return f"the {count} written before went to stdout"


def _line(kind: str, record: JsonObject) -> JsonObject:
    """A JSON Lines record: ``type`` first, then the record (whose own ``type``, in a record
    read from elsewhere, never decides the line's)."""
    line = {"type": kind, **record}
    line["type"] = kind
    return line


def _close_quietly(handle: IO[str]) -> None:
    """Close a file whose buffered data may not fit on the disk (it is torn there already)."""
    try:
        handle.close()
    except OSError:
        # Closing flushes what is left of a line the disk refused; the reader drops a torn
        # last line, so dropping it here loses nothing that was written.
        return

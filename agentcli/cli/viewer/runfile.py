"""One results file as the viewer reads it: an index built in one pass, then single lines.

A JSON Lines file is indexed once (per modification time and size): the byte offset and
length of every result line, with the few fields a run page filters and sorts by (id,
status, tags, attribution, connector, run). A page then reads and decodes only its own
lines, through the codec, into ``CaseResult`` values: a 100,000-case run opens without
building 100,000 of them. A file that grew (a run still writing) is indexed from where the
last index ended. A JSON report (one document) is read whole by the results reader.

The index reads its fields with the codec's rules (an unknown status counts as ``error``,
tags that are not a list of text are none, an unknown attribution is none) but not through
``read_result``: that builds the whole value and compares it with the record, and the index
needs six fields of each record. msgspec decodes those six and skips the rest (input,
output, trace) without building them: 100,000 lines of 800 bytes cost ~0.35 s of CPU,
against ~1 s for ``json.loads`` alone (bench/view.py). A line msgspec refuses is read by
``loads_json``, which says what is wrong with it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NamedTuple

import msgspec

from agentcli.choices import ATTRIBUTIONS, Attribution, one_of
from agentcli.datafiles import loads_json
from agentcli.errors import CaseFileError
from agentcli.eval.results.codec import read_header, read_result, read_stability, read_summary
from agentcli.eval.results.model import (
    STATUSES,
    CaseResult,
    JsonObject,
    RunHeader,
    RunSummary,
    Status,
    cell_label,
)
from agentcli.eval.results.reader import read_results

from .search import search

__all__ = ["FileKey", "NotResults", "Row", "RunFile", "file_key", "index_file"]

# (inode, modification time in ns, size): a file that changed is read again; one replaced
# (a new run written over it: the writers rename a new file into place) has a new inode.
FileKey = tuple[int, int, int]
_HEADER_TYPES = ("header", "start")  # as the results reader: "start" is Yao's header
_MAX_WARNINGS = 20
_MAX_SEARCHES = 8  # queries whose matches a file keeps
_STATUS_OF: dict[str, Status] = {status: status for status in STATUSES}
_REPORT_KEYS = frozenset(("summary", "results", "stability_results"))  # as the reader's


class NotResults(Exception):
    """The file is not a results file (a case file beside the runs, say); carries why."""


class Row(NamedTuple):
    """One result of a run as the index knows it: enough to filter, sort and link to it
    (a named tuple: 100,000 of them are built in one index, and a tuple is the cheapest)."""

    ordinal: int  # its place among the run's results (what a case page's URL names)
    id: str
    status: Status
    tags: tuple[str, ...] = ()
    attribution: Attribution | None = None
    connector: str | None = None
    run: int | None = None
    offset: int = -1  # byte offset of its line; -1 in a JSON report
    length: int = 0

    @property
    def label(self) -> str:
        """``id`` (``id @ connector`` in a matrix): the cell its runs share."""
        return cell_label(self.id, self.connector)

    @property
    def failing(self) -> bool:
        """Failed, errored or timed out."""
        return self.status in ("failed", "error", "timeout")


@dataclass(slots=True)
class RunFile:
    """A results file indexed: header, summary (None: the run has not finished), rows."""

    path: Path
    key: FileKey
    format: Literal["jsonl", "report"] = "jsonl"
    header: RunHeader = field(default_factory=RunHeader)
    header_read: bool = False
    summary: RunSummary | None = None
    rows: list[Row] = field(default_factory=list)
    stability: dict[str, JsonObject] = field(default_factory=dict)  # by cell label
    warnings: list[str] = field(default_factory=list)
    end: int = 0  # bytes indexed: a grown file's new lines start here
    lines: int = 0  # lines indexed (for file:line in messages)
    document: list[CaseResult] | None = None  # a JSON report's results, read whole
    searches: dict[str, frozenset[int]] = field(default_factory=dict)

    def results(self, rows: Iterable[Row]) -> list[CaseResult]:
        """The typed results of ``rows``, each line read and decoded by the codec."""
        if self.document is not None:
            return [self.document[row.ordinal] for row in rows]
        found = []
        with self.path.open("rb") as stream:
            for row in rows:
                stream.seek(row.offset)
                found.append(self._decode(stream.read(row.length), row))
        return found

    def result(self, row: Row) -> CaseResult:
        """The typed result of one row."""
        return self.results([row])[0]

    def _decode(self, line: bytes, row: Row) -> CaseResult:
        """One result line as a ``CaseResult`` (a changed file is a ``CaseFileError``)."""
        try:
            record = loads_json(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            record = None
        if not isinstance(record, dict) or record.pop("type", None) != "result":
            raise CaseFileError(
                f"{self.path}: result {row.ordinal + 1} is no longer where it was",
                hint="the file changed while it was read; reload the page",
            )
        return read_result(record)[0]

    def matching(self, query: str) -> frozenset[int]:
        """Ordinals of the results whose id, tags, input, output, expected value, error or
        assertion messages contain ``query`` (case-insensitive); the last few queries kept."""
        needle = query.casefold()
        found = self.searches.get(needle)
        if found is None:
            found = search(self.path, self.rows, self.document, needle)
            if len(self.searches) >= _MAX_SEARCHES:
                self.searches.pop(next(iter(self.searches)))
            self.searches[needle] = found
        return found


def file_key(path: Path) -> FileKey:
    """What tells a changed file from the one indexed."""
    stat = path.stat()
    return stat.st_ino, stat.st_mtime_ns, stat.st_size


def index_file(path: Path, previous: RunFile | None = None) -> RunFile:
    """The index of ``path``; from ``previous`` on when the file only grew since (a run
    still writing). ``NotResults`` when the file holds no results."""
    key = file_key(path)
    if previous is not None and _grew(previous, key):
        grown = RunFile(path, key, header=previous.header, header_read=previous.header_read)
        grown.rows = list(previous.rows)
        grown.stability = dict(previous.stability)
        grown.warnings = list(previous.warnings)
        grown.end, grown.lines = previous.end, previous.lines
        _index_lines(grown)
        return grown
    shape = _shape(path)
    if shape == "none":
        raise NotResults(f"{path}: a JSON object per line, none of them results (a case file?)")
    if shape == "document":
        return _read_document(path, key)
    indexed = RunFile(path, key)
    _index_lines(indexed)
    if not indexed.header_read and not indexed.rows and indexed.summary is None:
        raise NotResults(f"{path}: no header, result or summary line")
    return indexed


def _grew(previous: RunFile, key: FileKey) -> bool:
    """The file is the indexed one with lines appended (its summary not yet among them)."""
    inode, _, size = key
    return (
        previous.format == "jsonl"
        and previous.summary is None
        and inode == previous.key[0]
        and size > previous.end > 0
    )


def _shape(path: Path) -> Literal["lines", "document", "none"]:
    """What the first non-blank line says the file is: our JSON Lines (a JSON object with
    a ``type``: the results reader's test), none (an object that is neither a typed line
    nor a one-line report: a case file, not read further), or maybe one JSON report."""
    with path.open("rb") as stream:
        for line in stream:
            if line.strip():
                try:
                    value = loads_json(line.decode("utf-8-sig"))
                except (UnicodeDecodeError, ValueError):
                    return "document"  # an indented report starts with a line of "{"
                if not isinstance(value, dict):
                    return "document"
                if "type" in value:
                    return "lines"
                return "document" if _REPORT_KEYS & value.keys() else "none"
    return "none"


def _read_document(path: Path, key: FileKey) -> RunFile:
    """A JSON report, read whole by the results reader."""
    try:
        loaded = read_results(path)
    except CaseFileError as error:
        raise NotResults(str(error)) from None
    rows = [_row_of(ordinal, result) for ordinal, result in enumerate(loaded.results)]
    stability = {}
    for item in loaded.stability_results:
        connector = item.get("connector")
        label = cell_label(
            str(item.get("id", "")), connector if isinstance(connector, str) else None
        )
        stability[label] = item
    return RunFile(
        path,
        key,
        format="report",
        header=loaded.header,
        header_read=True,
        summary=loaded.summary,
        rows=rows,
        stability=stability,
        warnings=loaded.warnings[:_MAX_WARNINGS],
        document=loaded.results,
    )


def _row_of(ordinal: int, result: CaseResult) -> Row:
    """The row of a result already read."""
    return Row(
        ordinal,
        result.id,
        result.status,
        tuple(result.tags),
        result.attribution,
        result.connector,
        result.run,
    )


class _Fields(msgspec.Struct):
    """The fields of a line the index reads, of the types our writers write; msgspec skips
    the others unbuilt. A line whose fields are of other types fails to decode here and
    is read by ``loads_json`` and the lenient ``_lenient_row``."""

    type: Any = None
    id: str | None = None
    status: str | None = None
    tags: tuple[str, ...] | None = None
    attribution: str | None = None
    connector: str | None = None
    run: int | None = None


_FIELDS = msgspec.json.Decoder(_Fields)


def _index_lines(run: RunFile) -> None:
    """Index ``run.path`` from ``run.end``: complete lines only (a line still being
    written is indexed next time), a corrupt line skipped with a warning. The loop runs
    once per result of the file: what it touches is kept in locals."""
    tags_seen: dict[tuple[str, ...], tuple[str, ...]] = {}  # one tuple per tag set
    rows = run.rows
    decode = _FIELDS.decode
    offset, lines = run.end, run.lines
    with run.path.open("rb") as stream:
        stream.seek(offset)
        for line in stream:
            lines += 1
            length = len(line)
            try:
                fields: _Fields | None = decode(line)
            except (msgspec.DecodeError, msgspec.ValidationError):
                fields = None  # blank, corrupt, or JSON msgspec refuses (NaN, a lone surrogate)
            if fields is not None and fields.type == "result":
                rows.append(_row(fields, len(rows), offset, length, tags_seen))
            elif fields is not None or line.strip():
                run.end, run.lines = offset, lines  # where messages and rows point
                complete = line.endswith(b"\n")
                record = _record(run, line, complete=complete)
                if record is None and not complete:
                    run.lines -= 1
                    return  # a last line still being written: read it when it is whole
                if record is not None:
                    _add(run, record, length, tags_seen)
            offset += length
    run.end, run.lines = offset, lines


def _record(run: RunFile, line: bytes, *, complete: bool) -> JsonObject | None:
    """One line's JSON object; None (with a warning, when the line is whole) otherwise."""
    try:
        text = line.decode("utf-8-sig" if run.lines == 1 else "utf-8")
        record = loads_json(text)
    except UnicodeDecodeError:
        problem = "not UTF-8 text"
    except ValueError as error:
        problem = f"invalid JSON ({error})"
    else:
        if isinstance(record, dict):
            return record
        problem = "not a JSON object"
    if complete:
        _warn(run, f"{run.path}:{run.lines}: corrupt results line skipped: {problem}")
    return None


def _add(
    run: RunFile, record: JsonObject, length: int, tags_seen: dict[tuple[str, ...], tuple[str, ...]]
) -> None:
    """File a header, stability or summary line, or a result line msgspec would not read."""
    kind = record.pop("type", None)
    if kind == "result":
        run.rows.append(_lenient_row(record, len(run.rows), run.end, length))
    elif kind in _HEADER_TYPES:
        if not run.header_read:
            run.header = read_header(record)[0]
            run.header_read = bool(record)
    elif kind == "stability":
        item = read_stability(record)[0]
        connector = item.get("connector")
        label = cell_label(
            str(item.get("id", "")), connector if isinstance(connector, str) else None
        )
        run.stability[label] = item
    elif kind == "summary":
        run.summary = read_summary(record)[0]
    else:
        _warn(run, f"{run.path}:{run.lines}: unknown line type {kind!r}; ignored")


def _row(
    fields: _Fields,
    ordinal: int,
    offset: int,
    length: int,
    tags_seen: dict[tuple[str, ...], tuple[str, ...]],
) -> Row:
    """A result line's row from fields of their types (one tuple per distinct tag set)."""
    tags, attribution, run = fields.tags, fields.attribution, fields.run
    return Row(
        ordinal,
        fields.id or "",
        _STATUS_OF.get(fields.status or "", "error"),
        tags_seen.setdefault(tags, tags) if tags else (),
        one_of(attribution, ATTRIBUTIONS) if attribution else None,
        fields.connector or None,
        run if run is not None and run >= 1 else None,
        offset,
        length,
    )


def _lenient_row(record: JsonObject, ordinal: int, offset: int, length: int) -> Row:
    """A result record's row, its fields of any type read with the codec's rules."""
    case_id, connector = record.get("id"), record.get("connector")
    status = record.get("status")
    return Row(
        ordinal,
        case_id if isinstance(case_id, str) else "",
        _STATUS_OF.get(status, "error") if isinstance(status, str) else "error",
        _tags(record.get("tags")),
        one_of(record.get("attribution"), ATTRIBUTIONS),
        connector if isinstance(connector, str) and connector else None,
        _run(record.get("run")),
        offset,
        length,
    )


def _tags(value: Any) -> tuple[str, ...]:
    """Tags that are a list of text, else none."""
    if isinstance(value, list) and all(isinstance(tag, str) for tag in value):
        return tuple(value)
    return ()


def _run(value: Any) -> int | None:
    """A run number: a whole number >= 1, else none."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 1 else None


def _warn(run: RunFile, text: str) -> None:
    """A warning about the file (the first few; a hostile file cannot flood the page)."""
    if len(run.warnings) < _MAX_WARNINGS:
        run.warnings.append(text)
    elif len(run.warnings) == _MAX_WARNINGS:
        run.warnings.append(f"{run.path}: more problems not shown")

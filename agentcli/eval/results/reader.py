"""Read a results file back: our JSON Lines, or one JSON report (ours, or Yao's).

Yao writes its default ``output-*.jsonl`` as one pretty-printed JSON document; that is
recognised by content, whatever the extension. A truncated or corrupt *last* line of a
JSON Lines file (a run killed mid-write) is dropped with a warning; a corrupt line
anywhere else means the file is damaged and is an error naming the line.

Every record is read once, by ``codec.py``, into the typed values of ``model.py``: what
report writers, extract, merge and ``--resume`` get. A record with fields of the wrong
type is a warning naming its line (``file:line: ...``) and is written back as it was read.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from agentcli.datafiles import loads_json
from agentcli.errors import CaseFileError
from agentcli.words import counted

from .codec import Notes, read_header, read_result, read_stability, read_summary
from .model import (
    CaseResult,
    JsonObject,
    RunHeader,
    RunReport,
    RunSummary,
    cell_label,
    header_names,
)

__all__ = ["LoadedReport", "parse_results", "read_document", "read_results"]

T = TypeVar("T")

_HEADER_TYPES = ("header", "start")  # "start" is the header of Yao's (unreachable) JSONL writer
_MAX_REPAIR_WARNINGS = 20  # then one line counts the rest: a hostile file cannot flood stderr
_MAX_NOTES = 4  # repairs named per record


@dataclass(slots=True)
class LoadedReport:
    """What a results file holds; ``format`` is ``jsonl`` or ``report`` (one JSON document)."""

    header: RunHeader = field(default_factory=RunHeader)
    results: list[CaseResult] = field(default_factory=list)
    summary: RunSummary | None = None
    stability_results: list[JsonObject] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    format: Literal["jsonl", "report"] = "jsonl"
    repaired: int = 0  # records that had fields of the wrong type
    header_read: bool = False  # a header line with content was read (the first one counts)
    # where each result (id, run, connector) was read, to tell of one the file holds twice
    read_at: dict[tuple[str, int | None, str | None], str] = field(
        default_factory=dict, repr=False, compare=False
    )
    repeats: int = 0

    def report(self) -> RunReport:
        """What was read as one report (an unfinished run's summary: empty, as read)."""
        if self.summary is not None:
            summary = self.summary
        else:  # named as the header names the run (written at its start)
            agent_id, connector = header_names(self.header)
            summary = RunSummary(agent_id=agent_id, connector=connector)
        return RunReport(self.header, self.results, summary, self.stability_results)

    def add_result(self, record: JsonObject, where: str) -> None:
        """Read one result record (a warning names ``where`` when it needed repair)."""
        result, notes = read_result(record)
        self.results.append(result)
        if notes:
            label = f"result {result.id!r}" if result.id else "result"
            self.note_repairs(where, label, notes)
        key = (result.id, result.run, result.connector)
        first = self.read_at.setdefault(key, where)
        if first is not where:
            self._note_repeat(where, result, first)

    def _note_repeat(self, where: str, result: CaseResult, first: str) -> None:
        """A result the file holds twice (two files joined by hand, say): every command
        reads both, as merge does, and says so (the first few; the rest are counted)."""
        self.repeats += 1
        if self.repeats > _MAX_REPAIR_WARNINGS:
            return
        which = repr(cell_label(result.id, result.connector))
        if result.run is not None:
            which += f" (run {result.run})"
        self.warnings.append(f"{where}: result {which} is in the file twice (first at {first})")

    def note_repairs(self, where: str, what: str, notes: Notes) -> None:
        """One warning for a repaired record (the first few; the rest are counted)."""
        self.repaired += 1
        if self.repaired > _MAX_REPAIR_WARNINGS:
            return
        shown = "; ".join(notes[:_MAX_NOTES])
        more = f"; and {len(notes) - _MAX_NOTES} more" if len(notes) > _MAX_NOTES else ""
        self.warnings.append(f"{where}: {what}: {shown}{more}")

    def finish_repairs(self, path: Path | str) -> None:
        """The count of repaired records (and of results read twice) whose warnings were
        left out."""
        hidden = self.repaired - _MAX_REPAIR_WARNINGS
        if hidden > 0:
            self.warnings.append(
                f"{path}: {counted(hidden, 'more record')} had fields of the wrong type, repaired the "
                "same way"
            )
        hidden = self.repeats - _MAX_REPAIR_WARNINGS
        if hidden > 0:
            self.warnings.append(f"{path}: {counted(hidden, 'more result')} in the file twice")


def read_results(path: Path) -> LoadedReport:
    """Load a results file written by ``agent eval`` (any version) or by Yao."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise CaseFileError(f"{path}: no such results file") from None
    except UnicodeDecodeError as exc:
        raise CaseFileError(f"{path}: not a UTF-8 text file ({exc.reason})") from None
    except OSError as exc:
        raise CaseFileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return parse_results(path, text)


def parse_results(path: Path | str, text: str) -> LoadedReport:
    """Load the text of a results file; ``path`` (a file or a URL) names it in messages."""
    if not text.strip():
        raise CaseFileError(f"{path}: the results file is empty")
    if _looks_like_lines(text):
        return _read_lines(path, text)
    if _looks_like_cases(text):
        raise CaseFileError(
            f"{path}: this is a case file (cases to run), not a results file",
            hint=f"run it first: agent eval ASSISTANT @{path} -o results.jsonl, then give "
            "results.jsonl here",
        )
    return _read_document(path, text)


def _looks_like_lines(text: str) -> bool:
    """True when the first non-blank line is a complete JSON object with a ``type``."""
    first = next(line for line in text.split("\n") if line.strip())
    try:
        value = loads_json(first)
    except ValueError:
        return False
    return isinstance(value, dict) and "type" in value


# Fields a case has and a result line never has at its top (results carry "type").
_CASE_FIELDS = frozenset({"input", "assert", "checkpoints", "simulator", "messages", "file"})


def _looks_like_cases(text: str) -> bool:
    """True when the first line that is not blank or a ``//`` comment (case files take
    comments, results files never do) is a JSON object with a case's fields and no
    ``type``: a JSONL case file given where results were expected."""
    for line in text.split("\n"):
        stripped = line.strip()
        if not stripped or stripped.startswith("//"):
            continue
        try:
            value = loads_json(stripped)
        except ValueError:
            return False
        return isinstance(value, dict) and "type" not in value and bool(_CASE_FIELDS & value.keys())
    return False


def _read_document(path: Path | str, text: str) -> LoadedReport:
    """One JSON report object: ``{summary, environment, results, stability_results, metadata}``."""
    try:
        report = loads_json(text)
    except json.JSONDecodeError as exc:
        raise CaseFileError(
            f"{path}:{exc.lineno}:{exc.colno}: not a results file: invalid JSON ({exc.msg})",
            hint="expected agent eval JSON Lines results or a JSON report",
        ) from None
    if not isinstance(report, dict) or not (
        {"summary", "results", "stability_results"} & report.keys()
    ):
        raise CaseFileError(
            f"{path}: not a results file: expected a report object with summary and results"
        )
    return read_document(report, path)


def read_document(report: JsonObject, path: Path | str = "<report>") -> LoadedReport:
    """A parsed JSON report object (ours or Yao's), read as a file holding it is."""
    results = report.get("results") or []
    stability = report.get("stability_results") or []
    if not isinstance(results, list) or not isinstance(stability, list):
        raise CaseFileError(f"{path}: 'results' and 'stability_results' must be arrays")
    header = {
        key: value
        for key, value in report.items()
        if key not in ("summary", "results", "stability_results")
    }
    summary = report.get("summary")
    loaded = LoadedReport(format="report")
    loaded.header = _repaired(loaded, read_header, header, str(path), "header")
    for index, result in enumerate(results):
        if isinstance(result, dict):
            loaded.add_result(result, f"{path}: results[{index}]")
    if isinstance(summary, dict):
        loaded.summary = _repaired(loaded, read_summary, summary, str(path), "summary")
    elif summary is not None:
        loaded.warnings.append(f"{path}: the summary is not an object; ignored")
    for index, item in enumerate(stability):
        if isinstance(item, dict):
            where = f"{path}: stability_results[{index}]"
            loaded.stability_results.append(
                _repaired(loaded, read_stability, item, where, "stability")
            )
    dropped = len(results) + len(stability) - len(loaded.results) - len(loaded.stability_results)
    if dropped:
        loaded.warnings.append(f"{path}: {dropped} entries that are not objects were ignored")
    loaded.finish_repairs(path)
    return loaded


def _repaired(
    loaded: LoadedReport,
    read: Callable[[JsonObject], tuple[T, Notes]],
    record: JsonObject,
    where: str,
    what: str,
) -> T:
    """``record`` read by ``read`` (a ``codec.read_*`` function), noting its repairs."""
    fixed, notes = read(record)
    if notes:
        loaded.note_repairs(where, what, notes)
    return fixed


def _read_lines(path: Path | str, text: str) -> LoadedReport:
    """Our JSON Lines: header, result, stability and summary lines."""
    loaded = LoadedReport()
    lines = [(number, line) for number, line in enumerate(text.split("\n"), 1) if line.strip()]
    last = lines[-1][0]
    for number, line in lines:
        record = _parse_line(path, number, line, is_last=number == last, loaded=loaded)
        if record is None:
            continue
        kind = record.pop("type", None)
        where = f"{path}:{number}"
        if kind in _HEADER_TYPES:
            if not loaded.header_read:
                loaded.header = _repaired(loaded, read_header, record, where, "header")
                loaded.header_read = bool(record)  # an empty header gives way to the next
        elif kind == "result":
            loaded.add_result(record, where)
        elif kind == "stability":
            loaded.stability_results.append(
                _repaired(loaded, read_stability, record, where, "stability")
            )
        elif kind == "summary":
            loaded.summary = _repaired(loaded, read_summary, record, where, "summary")
        else:
            loaded.warnings.append(f"{path}:{number}: unknown line type {kind!r}; ignored")
    loaded.finish_repairs(path)
    if loaded.summary is None:
        loaded.warnings.append(
            f"{path}: no summary line: the run did not finish; "
            f"{counted(len(loaded.results), 'finished case')} read"
        )
    return loaded


def _parse_line(
    path: Path | str, number: int, line: str, *, is_last: bool, loaded: LoadedReport
) -> dict[str, Any] | None:
    """One JSON object; ``None`` (with a warning) for a damaged last line."""
    try:
        record = loads_json(line)
    except json.JSONDecodeError as exc:
        problem = f"invalid JSON ({exc.msg} at column {exc.colno})"
    else:
        if isinstance(record, dict):
            return record
        problem = "not a JSON object"
    if is_last:
        loaded.warnings.append(
            f"{path}:{number}: last line is truncated or corrupt ({problem}); ignored — "
            "the run was probably interrupted"
        )
        return None
    raise CaseFileError(
        f"{path}:{number}: corrupt results line: {problem}",
        hint="the file is damaged; remove or repair that line",
    )

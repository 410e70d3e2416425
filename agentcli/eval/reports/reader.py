"""Read a results file back: our JSON Lines, or one JSON report (ours, or Yao's).

Yao writes its default ``output-*.jsonl`` as one pretty-printed JSON document; that is
recognised by content, whatever the extension. A truncated or corrupt *last* line of a
JSON Lines file (a run killed mid-write) is dropped with a warning; a corrupt line
anywhere else means the file is damaged and is an error naming the line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentcli.datafiles import loads_json
from agentcli.errors import CaseFileError

__all__ = ["LoadedReport", "read_results"]

_HEADER_TYPES = ("header", "start")  # "start" is the header of Yao's (unreachable) JSONL writer


@dataclass(slots=True)
class LoadedReport:
    """What a results file holds; ``format`` is ``jsonl`` or ``report`` (one JSON document)."""

    header: dict[str, Any] = field(default_factory=dict)
    results: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] | None = None
    stability_results: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    format: str = "jsonl"


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
    if not text.strip():
        raise CaseFileError(f"{path}: the results file is empty")
    if _looks_like_lines(text):
        return _read_lines(path, text)
    return _read_document(path, text)


def _looks_like_lines(text: str) -> bool:
    """True when the first non-blank line is a complete JSON object with a ``type``."""
    first = next(line for line in text.split("\n") if line.strip())
    try:
        value = loads_json(first)
    except ValueError:
        return False
    return isinstance(value, dict) and "type" in value


def _read_document(path: Path, text: str) -> LoadedReport:
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
    loaded = LoadedReport(
        header=header,
        results=[r for r in results if isinstance(r, dict)],
        summary=summary if isinstance(summary, dict) else None,
        stability_results=[s for s in stability if isinstance(s, dict)],
        format="report",
    )
    dropped = len(results) + len(stability) - len(loaded.results) - len(loaded.stability_results)
    if dropped:
        loaded.warnings.append(f"{path}: {dropped} entries that are not objects were ignored")
    return loaded


def _read_lines(path: Path, text: str) -> LoadedReport:
    """Our JSON Lines: header, result, stability and summary lines."""
    loaded = LoadedReport()
    lines = [(number, line) for number, line in enumerate(text.split("\n"), 1) if line.strip()]
    last = lines[-1][0]
    for number, line in lines:
        record = _parse_line(path, number, line, is_last=number == last, loaded=loaded)
        if record is None:
            continue
        kind = record.pop("type", None)
        if kind in _HEADER_TYPES:
            if not loaded.header:
                loaded.header = record
        elif kind == "result":
            loaded.results.append(record)
        elif kind == "stability":
            loaded.stability_results.append(record)
        elif kind == "summary":
            loaded.summary = record
        else:
            loaded.warnings.append(f"{path}:{number}: unknown line type {kind!r}; ignored")
    if loaded.summary is None:
        loaded.warnings.append(
            f"{path}: no summary line: the run did not finish; "
            f"{len(loaded.results)} finished case(s) read"
        )
    return loaded


def _parse_line(
    path: Path, number: int, line: str, *, is_last: bool, loaded: LoadedReport
) -> dict[str, Any] | None:
    """One JSON object; ``None`` (with a warning) for a damaged last line."""
    try:
        record = loads_json(line)
        problem = None if isinstance(record, dict) else "not a JSON object"
    except json.JSONDecodeError as exc:
        record, problem = None, f"invalid JSON ({exc.msg} at column {exc.colno})"
    if problem is None:
        return record
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

"""The results files under the served folder, found anew on each request, and the one
way to reach a file by name: a path outside the folder, or not a results file, is not
found (no traversal, no reading of other files).

Each file is indexed once per (inode, modification time, size) and kept; a run's list entry
comes from its header and summary line (the first and last line of a finished JSON Lines
file: no index needed), so a folder of large runs lists fast and new runs appear without
a restart.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from agentcli.datafiles import loads_json
from agentcli.eval.reports._view import cost_text, summary_pass_rate
from agentcli.eval.results.codec import read_header, read_summary
from agentcli.eval.results.matrix import header_connectors
from agentcli.eval.results.model import RunHeader, RunSummary, header_names, summary_from_counts

from .runfile import FileKey, NotResults, RunFile, file_key, index_file

__all__ = ["Catalog", "NotFound", "RunEntry"]

_SUFFIXES = (".jsonl", ".json")
# A .json report streams its results beside it (report.json -> report.json.jsonl): the
# same run twice, so that stream is left out while the report is there.
_JSON_STREAM = ".json.jsonl"
_SKIPPED_FOLDERS = frozenset(("node_modules", "__pycache__", "venv"))  # and dot-folders
_TAIL = 1 << 20  # a summary line is read from at most the last MiB of a file
_MAX_FILES = 2_000  # results files listed: a home folder given by mistake stays usable


class NotFound(Exception):
    """No results file of that name under the served folder."""


@dataclass(frozen=True, slots=True)
class RunEntry:
    """One run in the runs list."""

    path: str  # relative to the served folder, with "/"
    started: str  # the header's started_at, else the file's modification time (ISO)
    sort_key: float
    assistant: str
    connectors: tuple[str, ...]
    total: int
    passed: int
    pass_rate: float | None
    duration_ms: float | None
    cost: str | None
    finished: bool


@dataclass(slots=True)
class _Peek:
    """What the list needs of a finished JSON Lines run: its first and last line."""

    key: FileKey
    header: RunHeader
    summary: RunSummary


class Catalog:
    """The results files under ``root``, read on request and cached by their file keys (inode, mtime, size)."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self._runs: dict[Path, RunFile] = {}
        self._peeks: dict[Path, _Peek] = {}
        self._refused: dict[Path, FileKey] = {}  # files found not to be results
        # Requests run in Starlette's thread pool: one index is built at a time, and a
        # second request for the same file waits for it rather than building it again.
        self._lock = threading.Lock()

    def entries(self) -> list[RunEntry]:
        """Every results file under the folder, newest first."""
        entries = []
        for path in self._candidates():
            try:
                entry = self._entry(path)
            except (NotResults, OSError):
                continue
            entries.append(entry)
        entries.sort(key=lambda entry: (entry.sort_key, entry.path), reverse=True)
        return entries

    def open(self, name: str) -> RunFile:
        """The indexed results file ``name`` (relative to the folder); ``NotFound`` for
        anything else."""
        path = self.resolve(name)
        try:
            return self._indexed(path)
        except (NotResults, OSError):
            raise NotFound(name) from None

    def resolve(self, name: str) -> Path:
        """``name`` as a file inside the folder with a results suffix, else ``NotFound``."""
        if not name or "\x00" in name or os.path.isabs(name):
            raise NotFound(name)
        path = (self.root / name).resolve()
        if not path.is_relative_to(self.root) or path.suffix.lower() not in _SUFFIXES:
            raise NotFound(name)
        if not path.is_file():
            raise NotFound(name)
        return path

    def name_of(self, path: Path) -> str:
        """The name a URL gives ``path``."""
        return path.relative_to(self.root).as_posix()

    def _candidates(self) -> list[Path]:
        """Files that may hold results, in a stable order (at most ``_MAX_FILES``)."""
        found: list[Path] = []
        for folder, subfolders, files in os.walk(self.root):
            subfolders[:] = sorted(
                name
                for name in subfolders
                if not name.startswith(".") and name not in _SKIPPED_FOLDERS
            )
            for name in sorted(files):
                lower = name.lower()
                if not lower.endswith(_SUFFIXES):
                    continue
                if lower.endswith(_JSON_STREAM) and name[: -len(".jsonl")] in files:
                    continue
                path = Path(folder, name)
                if path.is_symlink():
                    continue  # a pointer (latest.jsonl) to a run listed as itself, or outside
                found.append(path)
                if len(found) >= _MAX_FILES:
                    return found
        return found

    def _indexed(self, path: Path) -> RunFile:
        """The cached index of ``path``, rebuilt (or extended) when the file changed."""
        with self._lock:
            key = file_key(path)
            if self._refused.get(path) == key:
                raise NotResults(str(path))
            cached = self._runs.get(path)
            if cached is not None and cached.key == key:
                return cached
            try:
                run = index_file(path, cached)
            except NotResults:
                self._runs.pop(path, None)
                self._refused[path] = key
                raise
            self._runs[path] = run
            return run

    def _entry(self, path: Path) -> RunEntry:
        """A file's list entry: from its first and last line when it finished, else from
        its index."""
        peek = self._peek(path)
        if peek is not None:
            return self._entry_of(path, peek.header, peek.summary, finished=True)
        run = self._indexed(path)
        summary = run.summary
        finished = summary is not None
        if summary is None:
            counts: dict[str, int] = {}
            for row in run.rows:
                counts[row.status] = counts.get(row.status, 0) + 1
            agent_id, connector = header_names(run.header)  # named when the run began
            summary = summary_from_counts(
                counts, agent_id=agent_id, connector=connector, duration_ms=0
            )
            summary.duration_ms = None
        return self._entry_of(path, run.header, summary, finished=finished)

    def _peek(self, path: Path) -> _Peek | None:
        """Header and summary of a finished JSON Lines file, read from its ends."""
        key = file_key(path)
        cached = self._peeks.get(path)
        if cached is not None and cached.key == key:
            return cached
        if self._refused.get(path) == key or not path.name.lower().endswith(".jsonl"):
            return None
        with path.open("rb") as stream:
            first = stream.readline(_TAIL)
            stream.seek(max(0, key[2] - _TAIL))
            tail = stream.read().rstrip(b"\n").rsplit(b"\n", 1)[-1]
        header, summary = _typed(first, "header"), _typed(tail, "summary")
        if header is None or summary is None:
            return None
        peek = _Peek(key, read_header(header)[0], read_summary(summary)[0])
        self._peeks[path] = peek
        return peek

    def _entry_of(
        self, path: Path, header: RunHeader, summary: RunSummary, *, finished: bool
    ) -> RunEntry:
        """The list entry of a run."""
        started = header.metadata.get("started_at")
        moment = _moment(started) if isinstance(started, str) else None
        if moment is None:
            moment = datetime.fromtimestamp(path.stat().st_mtime).astimezone()
        connectors = header_connectors(header) or ([summary.connector] if summary.connector else [])
        cost = summary.extra.get("cost")
        return RunEntry(
            path=self.name_of(path),
            started=moment.isoformat(timespec="seconds"),
            sort_key=moment.timestamp(),
            assistant=summary.agent_id,
            connectors=tuple(connectors),
            total=summary.total,
            passed=summary.passed,
            pass_rate=summary_pass_rate(summary),
            duration_ms=summary.duration_ms,
            cost=cost_text(cost) if isinstance(cost, dict) else None,
            finished=finished,
        )


def _typed(line: bytes, kind: str) -> dict[str, object] | None:
    """``line`` as a JSON object of type ``kind`` (its ``type`` taken out), else None."""
    try:
        record = loads_json(line.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(record, dict) or record.pop("type", None) not in (
        (kind, "start") if kind == "header" else (kind,)
    ):
        return None
    return record


def _moment(text: str) -> datetime | None:
    """An ISO time with its zone (a naive one read as local time)."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.astimezone()

"""The runs a comparison reads: results files (any format the results reader reads), or
the newest two in a folder of runs."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from agentcli.errors import CaseFileError, ConfigError
from agentcli.eval.results.codec import finite
from agentcli.eval.results.matrix import single_connector
from agentcli.eval.results.model import CaseResult
from agentcli.eval.results.reader import LoadedReport, read_results

from .model import RunSource

__all__ = ["LoadedRun", "load_run", "newest_two", "source_of"]

# A whole-document report streams its results beside it (report.json -> report.json.jsonl):
# beside a .json report (itself readable) that stream is the same run again. The stream of
# an .html, .md or .xml report is the only readable copy of its run, so it counts.
_JSON_STREAM = ".json.jsonl"


@dataclass(slots=True)
class LoadedRun:
    """One side of a comparison: its results and where they came from."""

    source: RunSource
    results: list[CaseResult]
    warnings: list[str] = field(default_factory=list)


def source_of(loaded: LoadedReport, label: str) -> RunSource:
    """The ``RunSource`` of a read results file."""
    started = loaded.header.metadata.get("started_at")
    bar = finite(loaded.summary.extra.get("min_pass_rate")) if loaded.summary else None
    return RunSource(
        label=label,
        started_at=started if isinstance(started, str) else None,
        results=len(loaded.results),
        min_pass_rate=100.0 if bar is None else bar,
        connector=single_connector(loaded.header, loaded.summary),
    )


def load_run(path: Path) -> LoadedRun:
    """A results file read by the results reader (``CaseFileError``, exit 2, if it is not one)."""
    if path.is_dir():
        raise ConfigError(
            f"{path} is a folder: give two results files, or the folder alone",
            hint="agent diff BASE.jsonl NEW.jsonl   or   agent diff RUNS_FOLDER",
        )
    loaded = read_results(path)
    return LoadedRun(source_of(loaded, str(path)), loaded.results, loaded.warnings)


def newest_two(folder: Path) -> tuple[LoadedRun, LoadedRun]:
    """The two newest results files in ``folder`` (not its subfolders), older first: by the
    header's start time, else the file's modification time. Files that are not results
    files (case files beside them, say) are passed over."""
    runs: list[tuple[float, str, LoadedRun]] = []
    for path in sorted(folder.iterdir()):
        if not _candidate(path):
            continue
        try:
            loaded = read_results(path)
        except CaseFileError:
            continue  # not a results file: a folder of runs holds other files too
        run = LoadedRun(source_of(loaded, str(path)), loaded.results, loaded.warnings)
        runs.append((_started(run.source, path), path.name, run))
    if len(runs) < 2:
        raise ConfigError(
            f"{folder}: {len(runs)} results file(s) found; comparing needs two",
            hint="give two results files: agent diff BASE.jsonl NEW.jsonl",
        )
    runs.sort(key=lambda item: (item[0], item[1]))
    return runs[-2][2], runs[-1][2]


def _candidate(path: Path) -> bool:
    """A file that may hold results: ``.jsonl`` or ``.json``, not a report's stream."""
    name = path.name.lower()
    if not path.is_file() or path.suffix.lower() not in (".jsonl", ".json"):
        return False
    if not name.endswith(_JSON_STREAM):
        return True
    return not path.with_name(path.name[: -len(".jsonl")]).exists()


def _started(source: RunSource, path: Path) -> float:
    """When the run started (POSIX seconds): its header's ``started_at``, else the file's mtime."""
    if source.started_at:
        try:
            started = datetime.fromisoformat(source.started_at)
        except ValueError:
            pass
        else:
            if started.tzinfo is not None:  # a naive time's zone is unknown: mtime is surer
                return started.timestamp()
    return path.stat().st_mtime

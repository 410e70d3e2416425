"""What a run that goes on from an earlier results file (``--resume``, ``--rerun``,
``--last-failed``) takes from that file's header, and what it refuses.

A resumed run is the same run, finished: its kept results are matched by ``(id, run)``, so
a file of another agent, another case file or another ``--runs`` would keep results that
are not this run's (and under ``--runs`` clash with its runs). Options the command line
leaves out are taken from the header (the matrix columns, ``-c``, ``--runs``); options given
that differ from the header are refused (exit 2) with what differs and what to do. A re-run
runs some cases of a finished run again into a new file: it takes the header's columns,
``-c`` and ``--runs`` the same way, and may be given others.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any

from agentcli.errors import ConfigError
from agentcli.eval.results.matrix import header_connectors
from agentcli.eval.run.options import EvalOptions
from agentcli.eval.run.request import InputSpec
from agentcli.eval.run.rerun import Rerun, load_rerun, rerun_source
from agentcli.eval.run.services import case_file_label

if TYPE_CHECKING:
    from agentcli.eval.reports import LoadedReport
    from agentcli.eval.results.model import CaseResult, RunHeader

__all__ = ["EarlierRun", "earlier_run", "kept_results"]

_TODO = (
    "give the options of that run (leave {flag} out to take the file's), or start a new "
    "results file: -o NEW.jsonl instead of --resume"
)


@dataclass(slots=True)
class EarlierRun:
    """The results file a run goes on from: the one it resumes, or the one whose failures
    it re-runs (at most one of them)."""

    resumed: LoadedReport | None = None
    rerun: Rerun | None = None


def earlier_run(options: EvalOptions, spec: InputSpec, agent_id: str) -> EarlierRun:
    """Read the file of ``--resume`` or ``--rerun``/``--last-failed`` (before the run is
    configured: what its header settles, the run is configured with), check it is this run's
    and fill ``options`` in from its header."""
    source = rerun_source(options, spec.path)  # also: not with --resume
    if source is not None:
        options.rerun = source  # the header names it, and no -o may write over it
        rerun = load_rerun(source)
        _take_columns(rerun.header, options)
        _take_connector(rerun.header, options, source, refuse=False)
        _take_runs(rerun.header, options, source, refuse=False)
        return EarlierRun(rerun=rerun)
    if options.resume is None:
        return EarlierRun()
    resumed = read_resumed(options.resume)
    if resumed.header_read:  # a file without a header (Yao's, a torn one) is taken as it is
        _check_same_run(resumed.header, options.resume, spec, agent_id)
        _take_columns(resumed.header, options)
        _take_connector(resumed.header, options, options.resume, refuse=True)
        _take_runs(resumed.header, options, options.resume, refuse=True)
    return EarlierRun(resumed=resumed)


def kept_results(resumed: LoadedReport) -> list[CaseResult]:
    """The results a resumed run keeps, in file order: each (id, run, connector) once, the
    first the file holds (the reader warned of the repeats; a result without an id stays)."""
    seen: set[tuple[str, int | None, str | None]] = set()
    kept = []
    for result in resumed.results:
        key = (result.id, result.run, result.connector)
        if result.id and key in seen:
            continue
        seen.add(key)
        kept.append(result)
    return kept


def read_resumed(path: Path) -> LoadedReport:
    """The finished results of an earlier (interrupted or partial) run, in file order,
    repaired by the reader (a torn last line is tolerated)."""
    from agentcli.eval.reports import read_results

    if not path.is_file():
        raise ConfigError(f"--resume {path}: no such results file")
    return read_results(path)


def _check_same_run(header: RunHeader, path: Path, spec: InputSpec, agent_id: str) -> None:
    """Refuse a file another agent or another case file wrote."""
    recorded = header.metadata.get("agent_id")
    if isinstance(recorded, str) and recorded and recorded != agent_id:
        raise ConfigError(
            f"--resume {path}: that run evaluated agent {recorded!r}, this one evaluates "
            f"{agent_id!r}",
            hint="resume with the agent of that run, or start a new results file: "
            "-o NEW.jsonl instead of --resume",
        )
    label = header.metadata.get("input_file")
    if spec.kind != "file" or spec.path is None or not isinstance(label, str) or not label:
        return  # script tests and generated cases: no case file to compare
    if not _same_file(label, spec.path):
        raise ConfigError(
            f"--resume {path}: that run read the cases of {label}, this one reads "
            f"{case_file_label(spec.path)}",
            hint="resume with the case file of that run, or start a new results file: "
            "-o NEW.jsonl instead of --resume",
        )


def _same_file(label: str, path: Path) -> bool:
    """Whether the case file a header names (``label``: relative to the folder that run was
    started in, which may not be this one) is ``path``."""
    here = path.resolve()
    recorded = PurePath(label)
    if recorded.is_absolute():
        return Path(label).resolve() == here
    if (Path.cwd() / recorded).resolve() == here:
        return True
    # Started in another folder: the label's own parts (its leading ".." dropped) end the path.
    parts = [part for part in recorded.parts if part not in (".", "..")]
    return bool(parts) and list(here.parts[-len(parts) :]) == parts


def _take_columns(header: RunHeader, options: EvalOptions) -> None:
    """Without ``-c``/``--matrix``, a matrix run goes on with the columns its header lists."""
    columns = header_connectors(header)
    if columns and not (options.connectors or options.connector):
        options.connectors = columns


def _take_connector(header: RunHeader, options: EvalOptions, path: Path, *, refuse: bool) -> None:
    """``-c`` of a run on one connector: the header's when not given; given and another,
    refused when ``refuse`` (the kept results were answered by the header's connector)."""
    if header_connectors(header) or options.connectors:
        return  # a matrix: its columns are settled by _take_columns
    recorded = header.metadata.get("options")
    if not isinstance(recorded, dict):
        return  # an older file: nothing recorded to compare
    flagged = recorded.get("connector")  # the run's -c (None: each case's, else the package's)
    ran_on = header.metadata.get("connector")  # the connector that run announced
    if not _given(options, "connector"):
        if isinstance(flagged, str) and flagged:
            options.connector = flagged
        return
    if not refuse or options.connector in (flagged, ran_on):
        return
    made = f"-c {flagged}" if isinstance(flagged, str) and flagged else "without -c"
    if isinstance(ran_on, str) and ran_on and not (isinstance(flagged, str) and flagged):
        made += f" (on {ran_on})"
    raise ConfigError(
        f"--resume {path}: that run was made {made}, this one is asked -c {options.connector}",
        hint=_TODO.format(flag="-c"),
    )


def _take_runs(header: RunHeader, options: EvalOptions, path: Path, *, refuse: bool) -> None:
    """``--runs`` (and ``--max-runs``) of the header when not given; given and different,
    refused when ``refuse`` (a resumed run must make the runs the kept ones belong to)."""
    recorded = header.metadata.get("options")
    if not isinstance(recorded, dict):
        return
    for name, flag in (("runs", "--runs"), ("max_runs", "--max-runs")):
        value = _runs_value(recorded.get(name), allow_auto=name == "runs")
        if value is None:
            continue  # not recorded (an older file, or --max-runs not given then)
        if not _given(options, name):
            setattr(options, name, value)
        elif refuse and getattr(options, name) != value:
            raise ConfigError(
                f"--resume {path}: that run was made with {flag} {value}, this one is asked "
                f"{flag} {getattr(options, name)}",
                hint=_TODO.format(flag=flag),
            )


def _runs_value(value: Any, *, allow_auto: bool) -> int | str | None:
    """A ``runs``/``max_runs`` as a header records it, or None when it is not one."""
    if allow_auto and value == "auto":
        return "auto"
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    return None


def _given(options: EvalOptions, name: str) -> bool:
    """Whether the option ``name`` was given for this run (on the command line, or set by a
    caller that builds its options itself); a value from the project config is not."""
    if name in options.command_line:
        return True
    return name not in options.from_project and getattr(options, name) != getattr(
        EvalOptions(), name
    )

"""``--rerun FILE`` and ``--last-failed``: run again only the cases that did not pass in an
earlier results file, keeping its other results, into a fresh results file.

``--last-failed`` takes the newest ``output-<timestamp>[-N].jsonl`` beside the case file
(where a run without ``-o`` writes, ``session.default_output_path``). A case counts as
failing when a result of it failed, errored or timed out; under ``--runs`` when its runs do
not reach the ``min_pass_rate`` that run was held to.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.errors import ConfigError
from agentcli.eval.results.codec import finite
from agentcli.eval.results.model import CaseResult, RunHeader
from agentcli.eval.run.runs import results_folder_of
from agentcli.eval.run.services import case_file_label
from agentcli.eval.stats.stability import stability_for_case

if TYPE_CHECKING:
    from agentcli.eval.reports import LoadedReport
    from agentcli.eval.run.options import EvalOptions

__all__ = ["OUTPUT_NAME", "Rerun", "failing_ids", "load_rerun", "newest_results"]

# The name of a results file a run writes beside its case file when not given -o.
OUTPUT_NAME = re.compile(r"output-(\d{14})(?:-(\d+))?\.jsonl")
_FAILING = ("failed", "error", "timeout")


@dataclass(slots=True)
class Rerun:
    """What a re-run takes from an earlier results file: the ids to run again, the
    results kept as they were (every result of the other cases) and the header (the
    matrix columns and ``--runs`` the re-run goes on with, ``resume.earlier_run``)."""

    source: Path
    ids: frozenset[str]
    kept: list[CaseResult] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    header: RunHeader = field(default_factory=RunHeader)


def newest_results(folder: Path) -> Path | None:
    """The newest default-named results file in ``folder`` (by the timestamp and number in
    its name, which sort the runs of one second too), or None."""
    best: tuple[str, int] | None = None
    found: Path | None = None
    for path in folder.glob("output-*.jsonl"):
        match = OUTPUT_NAME.fullmatch(path.name)
        if match is None or not path.is_file():
            continue
        key = (match.group(1), int(match.group(2) or 1))
        if best is None or key > best:
            best, found = key, path
    return found


def failing_ids(report: LoadedReport) -> list[str]:
    """The ids of the cases that did not pass in ``report``, in file order."""
    bar = finite(report.summary.extra.get("min_pass_rate")) if report.summary else None
    threshold = 100.0 if bar is None else bar
    grouped: dict[str, list[CaseResult]] = {}
    for result in report.results:
        if result.id:
            grouped.setdefault(result.id, []).append(result)
    failing = []
    for case_id, results in grouped.items():
        if any(result.run is not None for result in results):
            if not stability_for_case(case_id, results).meets(threshold):
                failing.append(case_id)
        elif any(result.status in _FAILING for result in results):
            failing.append(case_id)
    return failing


def rerun_source(options: EvalOptions, case_file: Path | None) -> Path | None:
    """The results file to re-run the failures of: ``--rerun FILE``, or under
    ``--last-failed`` the newest beside the case file; None when neither was asked."""
    if options.rerun is not None and options.last_failed:
        raise ConfigError("give --rerun FILE or --last-failed, not both")
    if options.rerun is None and not options.last_failed:
        return None
    flag = "--last-failed" if options.last_failed else "--rerun"
    if options.resume is not None:
        raise ConfigError(
            f"give {flag} or --resume, not both",
            hint="--resume finishes an interrupted run; --rerun runs a finished run's failures again",
        )
    if options.rerun is not None:
        if not options.rerun.is_file():
            raise ConfigError(f"--rerun {options.rerun}: no such results file")
        return options.rerun
    if case_file is None:
        raise ConfigError(
            "--last-failed needs a case file: it re-runs the failures of the newest results "
            "file beside it",
            hint="or name the results file: --rerun FILE",
        )
    folder = results_folder_of(options, case_file)
    newest = newest_results(folder or case_file.parent)
    if newest is None:
        label = case_file_label(case_file)
        place = f"in {folder} (the runs of {label})" if folder is not None else f"beside {label}"
        raise ConfigError(
            f"--last-failed: no results file (output-*.jsonl) {place}",
            hint="run the cases once without -o first, or name the results file: --rerun FILE",
        )
    return newest


def load_rerun(source: Path) -> Rerun:
    """The failing ids and the kept results of ``source``."""
    from agentcli.eval.reports import read_results

    report = read_results(source)
    ids = frozenset(failing_ids(report))
    kept = [result for result in report.results if result.id not in ids]
    return Rerun(
        source=source, ids=ids, kept=kept, warnings=list(report.warnings), header=report.header
    )

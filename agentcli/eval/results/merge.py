"""``agent merge``: combine results files (CI shards, say) into one report and one verdict.

Policy:

- Header and environment come from the first input; ``metadata.merged_from`` lists the
  inputs, ``started_at`` is the earliest and ``completed_at`` the latest of theirs. Inputs
  naming another agent (outside a matrix: connector) than the first are warnings.
- Results keep their own content, written back as they were read; they count as the
  reader typed them (a field of the wrong type ignored or read as text, an unknown status
  counted as ``error``, each a warning). A result
  without a usable id belongs to no case: it is kept and never counts as a duplicate.
  Results are ordered by the order ids first appear across the
  inputs (in the order given), each id's runs by run index, so the same inputs in the same
  order always give the same report.
- A result is identified by ``(id, run)`` — in a connector matrix ``(id, connector, run)``:
  the same case on two connectors is two cases. The same key in two places is an error
  naming both files; with ``allow_duplicates`` the later one (in input order) replaces the
  earlier in place, with a warning.
- Results of a matrix (any result naming its connector) get the matrix recomputed too:
  ``summary.matrix`` and the exit code by the first input's ``--matrix-pass``; the header
  and summary name its columns. An input run on one connector (its results name none)
  merged with a matrix is its header connector's column: its results get that connector,
  so its ``greet`` and the matrix's ``greet @ that connector`` are one case (a duplicate).
- The summary is recomputed by ``summarize`` over the merged results, with ``attribution``
  (failures per class) as eval writes it; when any result has a ``run`` index the stability
  figures and ``runs_per_case`` are recomputed from the runs too (results without one
  count as a single run of their case). A stability result whose case the merged results
  hold no runs of cannot be recomputed: it is dropped with a warning. Inputs' own summaries
  and stability results are never trusted.
- Shards run side by side, so ``duration_ms`` is the longest input's duration (wall time)
  and ``total_duration_ms`` their sum (machine time). An input without a summary (an
  interrupted run) counts the sum of its results' durations.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

from agentcli.choices import ATTRIBUTIONS
from agentcli.errors import ConfigError
from agentcli.eval.reports import LoadedReport, RedactingWriter, writer_for
from agentcli.eval.results.codec import finite
from agentcli.eval.results.matrix import (
    Matrix,
    MatrixPass,
    header_connectors,
    is_matrix,
    matrix_of,
    matrix_pass_of,
    single_connector,
)
from agentcli.eval.results.model import (
    CaseResult,
    JsonObject,
    RunHeader,
    RunSummary,
    cell_label,
    summarize,
)
from agentcli.eval.stats.stability import CaseStability, stability_for_case, stability_summary
from agentcli.words import counted

__all__ = ["MergedReport", "exit_code_for", "merge_files", "merge_reports", "write_merged"]


@dataclass(slots=True)
class MergedReport:
    """The merged report: header, ordered results, recomputed summary and stability."""

    header: RunHeader
    results: list[CaseResult]
    summary: RunSummary
    stability: list[CaseStability] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    min_pass_rate: float = 100.0
    matrix: Matrix | None = None  # results of a connector matrix: its grid
    matrix_pass: MatrixPass = "all"

    def stability_results(self) -> list[JsonObject]:
        """The stability results in report form."""
        return [stats.to_dict() for stats in self.stability]

    def exit_code(self) -> int:
        """The eval exit code of the merged results (see ``exit_code_for``; a matrix's by
        its cells and ``--matrix-pass``)."""
        if self.matrix is not None:
            return self.matrix.exit_code(self.matrix_pass, self.min_pass_rate)
        return exit_code_for(self.summary, self.stability, self.min_pass_rate)


def exit_code_for(
    summary: RunSummary, stability: Iterable[CaseStability], min_pass_rate: float = 100.0
) -> int:
    """0 when everything passed; 1 when a case failed, errored or timed out.

    Under stability runs the per-case threshold decides instead: 1 when any case's pass
    rate is below ``min_pass_rate`` (a failed run in a case that still meets it is allowed).
    """
    stats = list(stability)
    if stats:
        return 0 if all(case.meets(min_pass_rate) for case in stats) else 1
    return 1 if summary.failed or summary.errors or summary.timeouts else 0


def merge_files(
    paths: Sequence[Path | str], *, allow_duplicates: bool = False, min_pass_rate: float = 100.0
) -> MergedReport:
    """Read every results file (a path, or a URL through fsspec) and merge them (see
    ``merge_reports``)."""
    from agentcli.eval.results.remote import read_any

    return merge_reports(
        [read_any(path) for path in paths],
        sources=[str(path) for path in paths],
        allow_duplicates=allow_duplicates,
        min_pass_rate=min_pass_rate,
    )


def merge_reports(
    loaded: Sequence[LoadedReport],
    *,
    sources: Sequence[str] | None = None,
    allow_duplicates: bool = False,
    min_pass_rate: float = 100.0,
) -> MergedReport:
    """Merge loaded results files; ``sources`` names them in messages (default ``input N``)."""
    if not loaded:
        raise ConfigError("nothing to merge: no results files given")
    names = (
        list(sources) if sources is not None else [f"input {i}" for i in range(1, 1 + len(loaded))]
    )
    if len(names) != len(loaded):
        raise ValueError(f"{len(names)} source names for {len(loaded)} inputs")
    warnings = [warning for report in loaded for warning in report.warnings]
    matrices = [is_matrix(report.results) for report in loaded]
    columns = _lone_columns(loaded, names, matrices, warnings)
    agent_id, connector = _identity(loaded, names, warnings, any(matrices))
    results = _merged_results(loaded, names, columns, allow_duplicates, warnings)
    cases = [result for _, result in results]
    walls = [_duration(report) for report in loaded]
    summary = summarize(cases, agent_id=agent_id, connector=connector, duration_ms=max(walls))
    attribution = _attribution(cases)
    if attribution:  # as eval writes it: who the failures are on, when something failed
        summary.extra["attribution"] = attribution
    summary.extra["total_duration_ms"] = sum(walls)
    stability: list[CaseStability] = []
    if any(case.run is not None for case in cases):
        stability = _stability(cases)
        summary.extra.update(stability_summary(stability, min_pass_rate=min_pass_rate))
        summary.extra["runs_per_case"] = _runs_per_case(loaded, cases)
    grid = matrix_of(cases, header_connectors(loaded[0].header))
    mode = matrix_pass_of(loaded[0].header)
    if grid is not None:
        summary.connector = ", ".join(grid.connectors)  # as a matrix run names its columns
        summary.extra["matrix"] = grid.summary(mode, min_pass_rate)
    warnings += _dropped_stability(loaded, names, columns, stability)
    return MergedReport(
        header=_header(loaded, names, grid),
        results=cases,
        summary=summary,
        stability=stability,
        sources=names,
        warnings=warnings,
        min_pass_rate=min_pass_rate,
        matrix=grid,
        matrix_pass=mode,
    )


def write_merged(
    merged: MergedReport, out_path: Path, *, writer: RedactingWriter | None = None
) -> Path:
    """Write the merged report in the format ``out_path``'s extension names (through
    ``writer`` when the caller made and checked it already)."""
    writer = writer or writer_for(out_path)
    writer.open(merged.header, merged.results)
    writer.close(merged.summary, merged.stability_results() or None)
    return writer.path


def _lone_columns(
    loaded: Sequence[LoadedReport], names: list[str], matrices: list[bool], warnings: list[str]
) -> list[str | None]:
    """Per input, the connector its results are taken to have run on: when some input is a
    connector matrix, an input that is none (its results name no connector) ran on its
    header's connector, so its ``greet`` is the matrix's ``greet @ that connector`` (a
    duplicate, or a re-run of that column) and not another case (``matrices``: which
    inputs are matrices). ``None`` otherwise."""
    if not any(matrices):
        return [None] * len(loaded)
    columns: list[str | None] = []
    for name, report, matrix in zip(names, loaded, matrices, strict=True):
        column = None if matrix else single_connector(report.header, report.summary)
        if not matrix and column is None and report.results:
            warnings.append(
                f"{name}: its results and header name no connector, so they are kept as"
                " cases of no column of the matrix"
            )
        columns.append(column)
    return columns


def _identity(
    loaded: Sequence[LoadedReport], names: list[str], warnings: list[str], in_matrix: bool
) -> tuple[str, str]:
    """The first input's agent id and connector; any input differing is a warning (but
    for the connectors of a matrix: its columns differ by design)."""
    chosen: dict[str, str] = {}
    for key, label in (("agent_id", "agent"), ("connector", "connector")):
        seen = [(name, _field(report, key)) for name, report in zip(names, loaded, strict=True)]
        known = [(name, value) for name, value in seen if value]
        chosen[key] = known[0][1] if known else ""
        if key == "connector" and in_matrix:
            continue  # the merged summary names the matrix's columns instead
        warnings += [
            f"{name}: {label} {value!r} differs from {known[0][0]}'s {chosen[key]!r}; "
            f"the merged report says {chosen[key]!r}"
            for name, value in known[1:]
            if value != chosen[key]
        ]
    return chosen["agent_id"], chosen["connector"]


def _field(report: LoadedReport, key: str) -> str:
    """``key`` from the input's summary, else from its header."""
    value = (getattr(report.summary, key) if report.summary else "") or report.header.extra.get(key)
    return str(value) if value else ""


# Where a result belongs: its case id, or (no id) its own place among the inputs.
_Slot = str | tuple[str, int, int]
_Stamp = tuple[datetime, str]


def _merged_results(
    loaded: Sequence[LoadedReport],
    names: list[str],
    lone: Sequence[str | None],
    allow_duplicates: bool,
    warnings: list[str],
) -> list[tuple[int, CaseResult]]:
    """``(input index, result)`` pairs, de-duplicated and in the documented order; the
    results of an input with a ``lone`` column (``_lone_columns``) name that connector."""
    kept: dict[tuple[_Slot, str | None, int | None], tuple[int, CaseResult]] = {}
    first_seen: dict[_Slot, int] = {}
    for source, report in enumerate(loaded):
        for position, read in enumerate(report.results):
            result = _on_column(read, lone[source])
            # The reader gives every result a str id ("" when it had none) and a whole-number
            # run or none. A result without an id is no case's: kept, never a duplicate.
            case_id, run = result.id, result.run
            slot: _Slot = case_id or ("no id", source, position)
            first_seen.setdefault(slot, len(first_seen))
            key = (slot, result.connector, run)
            if key in kept:
                earlier = names[kept[key][0]]
                where = f"in both {earlier} and {names[source]}"
                if earlier == names[source]:
                    where = f"twice in {earlier}"
                what = f"result {cell_label(case_id, result.connector)!r}"
                what += f" run {run}" if run is not None else ""
                if not allow_duplicates:
                    raise ConfigError(
                        f"cannot merge: {what} appears {where}",
                        hint="merge each shard once, or pass --allow-duplicates to keep the later one",
                    )
                warnings.append(f"{what} appears {where}; the one from {names[source]} is kept")
            kept[key] = (source, result)
    # Python's sort is stable, so equal keys keep their first-appearance order.
    # A case's cells keep the order their first results came in (a matrix's columns).
    columns: dict[str | None, int] = {}
    for key in kept:
        columns.setdefault(key[1], len(columns))
    order = sorted(
        kept,
        key=lambda key: (first_seen[key[0]], columns[key[1]], 0 if key[2] is None else key[2]),
    )
    return [kept[key] for key in order]


def _on_column(result: CaseResult, column: str | None) -> CaseResult:
    """``result`` as a result of the matrix column ``column`` (a copy: the input's result
    is not edited), with the connector in what is written back too."""
    if column is None or result.connector is not None:
        return result
    source = None if result.source is None else {**result.source, "connector": column}
    return replace(result, connector=column, source=source)


def _stability(cases: list[CaseResult]) -> list[CaseStability]:
    """Per-case stability figures, cases in the results' order."""
    runs: dict[tuple[str, str | None], list[CaseResult]] = {}
    for case in cases:
        runs.setdefault(case.cell, []).append(case)
    return [stability_for_case(cell[0], case_runs, cell[1]) for cell, case_runs in runs.items()]


def _dropped_stability(
    loaded: Sequence[LoadedReport],
    names: list[str],
    columns: Sequence[str | None],
    stability: Sequence[CaseStability],
) -> list[str]:
    """A warning per input whose stability results name a case (a matrix cell) the merged
    runs gave no figures for: those lines are not carried over. A line whose case was
    recomputed from its runs is replaced by the new figures, which is no loss (``columns``:
    the matrix column of an input run on one connector, see ``_lone_columns``)."""
    recomputed = {(stats.id, stats.connector) for stats in stability}
    warnings = []
    for name, report, column in zip(names, loaded, columns, strict=True):
        dropped = sum(
            1 for line in report.stability_results if _cell(line, column) not in recomputed
        )
        if dropped:
            warnings.append(
                f"{name}: {counted(dropped, 'stability result')} without per-run results"
                f" {'was' if dropped == 1 else 'were'} dropped (stability is recomputed from"
                " the runs, and the merged results hold none of that case's)"
            )
    return warnings


def _cell(line: JsonObject, column: str | None) -> tuple[str, str | None] | None:
    """The (id, connector) a stability line is about (``column`` when it names none);
    ``None`` when its id or connector is no text (the reader makes an id text, not a
    connector), so it matches no case."""
    case_id, connector = line.get("id"), line.get("connector") or column
    if isinstance(case_id, str) and (connector is None or isinstance(connector, str)):
        return case_id, connector
    return None


def _runs_per_case(loaded: Sequence[LoadedReport], cases: Sequence[CaseResult]) -> int:
    """The runs each case may get, as ``agent eval`` writes it: the most any input's header
    asked for (``runs``, or ``max_runs`` under ``--runs auto``, where cases may stop
    early), and never fewer than the highest run index among the results (a header that
    says nothing of runs, or a plain run merged with runs of another)."""
    asked = [runs for runs in map(_asked_runs, (r.header for r in loaded)) if runs is not None]
    return max([*asked, *(case.run or 1 for case in cases)])


def _asked_runs(header: RunHeader) -> int | None:
    """``metadata.options.runs`` of a results header (``max_runs`` when it is ``auto``)."""
    options = header.metadata.get("options")
    if not isinstance(options, dict):
        return None
    runs = options.get("max_runs") if options.get("runs") == "auto" else options.get("runs")
    return runs if isinstance(runs, int) and not isinstance(runs, bool) and runs >= 1 else None


def _attribution(cases: Sequence[CaseResult]) -> dict[str, int]:
    """Results that did not pass per attribution class, in ``ATTRIBUTIONS`` order (classes
    with none left out), counted as ``agent eval`` counts them for its summary."""
    classes = Counter(
        case.attribution
        for case in cases
        if case.status in ("failed", "error", "timeout") and case.attribution is not None
    )
    return {name: classes[name] for name in ATTRIBUTIONS if classes[name]}


def _duration(report: LoadedReport) -> int:
    """The input's wall time: its summary's, else the sum of its results' durations."""
    duration = finite(report.summary.duration_ms) if report.summary else None
    if duration is not None:
        return int(duration)
    return sum(int(r.duration_ms or 0) for r in report.results)


def _header(loaded: Sequence[LoadedReport], names: list[str], grid: Matrix | None) -> RunHeader:
    """The first input's header (a new one: the file's is not edited); metadata spans
    every input and lists them, and a matrix's columns (the first input may have run on
    one connector, or on fewer columns than the merged results have)."""
    first = loaded[0].header
    metadata = dict(first.metadata)
    if grid is not None and header_connectors(first) != grid.connectors:
        options = metadata.get("options")
        metadata["options"] = {
            **(options if isinstance(options, dict) else {}),
            "connectors": list(grid.connectors),
        }
        metadata["connector"] = ", ".join(grid.connectors)
    for key, pick in (("started_at", min), ("completed_at", max)):
        value = _time_bound(loaded, key, pick)
        if value is not None:
            metadata[key] = value
    metadata["merged_from"] = names
    return RunHeader(environment=first.environment, metadata=metadata, extra=first.extra)


def _time_bound(
    loaded: Sequence[LoadedReport], key: str, pick: Callable[[list[_Stamp]], _Stamp]
) -> str | None:
    """The earliest/latest ``metadata[key]`` timestamp; ``None`` unless all parse and compare."""
    stamps: list[_Stamp] = []
    for report in loaded:
        value = report.header.metadata.get(key)
        if not value:
            continue
        try:
            stamps.append((datetime.fromisoformat(str(value)), str(value)))
        except ValueError:
            return None
    try:
        return pick(stamps)[1] if stamps else None
    except TypeError:  # naive and aware timestamps do not compare; keep the first input's
        return None

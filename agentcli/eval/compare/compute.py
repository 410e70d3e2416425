"""Two runs' typed results -> one ``RunDiff``: each case id's sides, what became of it, and
what changed in its output, tool calls, duration, tokens and cost."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from statistics import fmean

from agentcli.eval.reports._view import failure_message, one_line, tool_calls_of, value_text
from agentcli.eval.results.matrix import is_matrix
from agentcli.eval.results.model import CaseResult, ToolCall, cell_label
from agentcli.words import counted

from .model import (
    METRICS,
    CaseChange,
    CaseSide,
    ChangeKind,
    MetricChange,
    RunDiff,
    RunSource,
    Significance,
    Thresholds,
    ToolCallChange,
)
from .significance import fisher_test

__all__ = ["DIFF_LINES", "diff_runs", "output_diff", "side_of", "tool_call_changes"]

DIFF_LINES = 24  # lines of an output diff kept; the rest are counted
_LINE_WIDTH = 200  # characters of one diff line kept
_REASON_WIDTH = 160


def diff_runs(
    base: Iterable[CaseResult],
    new: Iterable[CaseResult],
    *,
    base_source: RunSource,
    new_source: RunSource,
    alpha: float = 0.05,
    thresholds: Thresholds | None = None,
    include_infra: bool = False,
) -> RunDiff:
    """Compare ``base`` with ``new`` case by case (all runs of a case id together). A run
    that failed on the infrastructure (``attribution: infra``: the provider, the network, a
    timeout) says nothing about the agent: it is not counted unless ``include_infra``."""
    thresholds = thresholds or Thresholds()
    notes: list[str] = []
    base, new = list(base), list(new)
    base_on = _paired_column(base, base_source, new, new_source, notes)
    new_on = _paired_column(new, new_source, base, base_source, notes)
    base_runs = _by_id(base, base_source.label, notes, base_on)
    new_runs = _by_id(new, new_source.label, notes, new_on)
    if not include_infra:
        _note_infra(base_runs, base_source.label, notes)
        _note_infra(new_runs, new_source.label, notes)
    ids = [*new_runs, *(case_id for case_id in base_runs if case_id not in new_runs)]
    cases = []
    for case_id in ids:
        before = side_of(base_runs[case_id], include_infra) if case_id in base_runs else None
        after = side_of(new_runs[case_id], include_infra) if case_id in new_runs else None
        cases.append(_change(case_id, before, after, base_source, new_source, alpha, thresholds))
    return RunDiff(base_source, new_source, cases, alpha, thresholds, notes)


def _paired_column(
    results: Sequence[CaseResult],
    source: RunSource,
    other: Sequence[CaseResult],
    other_source: RunSource,
    notes: list[str],
) -> str | None:
    """The connector a run that was no matrix is compared on when the other side is one:
    its header's, so ``extract`` pairs with ``extract @ scripted`` rather than every case
    being "removed" and every cell "new" (which would let a regression pass the gate).
    ``None`` when both sides are matrices or neither is (cases then pair by id alone, as
    when comparing one model with another)."""
    if is_matrix(results) or not is_matrix(other):
        return None
    if source.connector is None:
        notes.append(
            f"{source.label}: its results and header name no connector, so its cases pair"
            f" with no cell of the connector matrix in {other_source.label}"
        )
    else:
        notes.append(
            f"{source.label} ran on {source.connector} alone: its cases are compared with"
            f" the {source.connector} cells of {other_source.label}"
        )
    return source.connector


def _by_id(
    results: Iterable[CaseResult], label: str, notes: list[str], connector: str | None = None
) -> dict[str, list[CaseResult]]:
    """Results grouped by case id (a matrix's by id and connector: ``id @ connector``), each
    group in run order; results without an id are left out (they match no case), with a
    note. ``connector`` is the one results that name none ran on (see ``_paired_column``)."""
    groups: dict[str, list[CaseResult]] = {}
    nameless = 0
    for result in results:
        if not result.id:
            nameless += 1
            continue
        groups.setdefault(cell_label(result.id, result.connector or connector), []).append(result)
    for group in groups.values():
        group.sort(key=lambda result: result.run or 0)
    if nameless:
        notes.append(f"{label}: {counted(nameless, 'result')} without an id left out")
    return groups


def _note_infra(runs: dict[str, list[CaseResult]], label: str, notes: list[str]) -> None:
    """A note of the infra failures left out of one side's counts."""
    infra = sum(1 for group in runs.values() for result in group if _infra(result))
    if infra:
        notes.append(
            f"{label}: {infra} infra failure(s) (provider, network, timeout) not counted;"
            " --include-infra counts them"
        )


def _infra(result: CaseResult) -> bool:
    """Whether ``result`` failed on the infrastructure rather than on the agent."""
    return result.attribution == "infra" and result.status != "passed"


def side_of(results: Sequence[CaseResult], include_infra: bool = True) -> CaseSide:
    """One case's runs in one run, summed up (infra failures counted only when asked)."""
    counted = [
        result
        for result in results
        if result.status != "skipped" and (include_infra or not _infra(result))
    ]
    failing = [result for result in counted if not result.passed]
    only = results[0] if len(results) == 1 and counted else None
    return CaseSide(
        statuses=tuple(result.status for result in results),
        passed=len(counted) - len(failing),
        counted=len(counted),
        duration_ms=_mean(result.duration_ms for result in counted),
        tokens=_mean(
            result.trace.usage.total_tokens if result.trace is not None else None
            for result in counted
        ),
        cost=_mean(
            result.trace.usage.cost if result.trace is not None else None for result in counted
        ),
        output=value_text(only.output) if only is not None else None,
        tool_calls=tuple(tool_calls_of(only)) if only is not None else (),
        reason=one_line(failure_message(failing[-1]), _REASON_WIDTH) if failing else "",
    )


def _mean(values: Iterable[float | int | None]) -> float | None:
    """The mean of the known values (``None`` when none is)."""
    known = [float(value) for value in values if value is not None]
    return fmean(known) if known else None


def _change(
    case_id: str,
    base: CaseSide | None,
    new: CaseSide | None,
    base_source: RunSource,
    new_source: RunSource,
    alpha: float,
    thresholds: Thresholds,
) -> CaseChange:
    """The ``CaseChange`` of one case id."""
    if base is None or new is None:
        return CaseChange(case_id, "added" if base is None else "removed", base, new)
    kind, significance = _classify(base, new, base_source, new_source, alpha)
    change = CaseChange(case_id, kind, base, new, significance)
    if base.output is not None and new.output is not None:  # each ran once: comparable
        change.output_diff = output_diff(base.output, new.output)
        change.tool_changes = tool_call_changes(base.tool_calls, new.tool_calls)
    change.metric_changes = _metric_changes(base, new, thresholds)
    return change


def _classify(
    base: CaseSide, new: CaseSide, base_source: RunSource, new_source: RunSource, alpha: float
) -> tuple[ChangeKind, Significance | None]:
    """What became of a case that is in both runs; with repeats, the test that decided it."""
    if not base.counted or not new.counted:
        return "skipped", None
    passed_before = base.passes(base_source.min_pass_rate)
    passes_now = new.passes(new_source.min_pass_rate)
    significance = None
    if base.counted == 1 and new.counted == 1:
        changed = passed_before != passes_now
    else:  # repeats: only a change the counts cannot explain as noise counts
        significance = fisher_test(base.passed, base.failed, new.passed, new.failed, alpha=alpha)
        changed = significance.significant  # p < 1 only when the rates differ
    if changed:
        return ("regression" if new.rate < base.rate else "fix"), significance
    if passed_before and passes_now:
        return "passing", significance
    if not passed_before and not passes_now:
        return "still_failing", significance
    return "not_significant", significance


def output_diff(before: str, after: str) -> list[str]:
    """A short unified diff of two outputs (``[]`` when they are the same)."""
    if before == after:
        return []
    lines = [
        line if len(line) <= _LINE_WIDTH else line[: _LINE_WIDTH - 1] + "…"
        for line in difflib.unified_diff(
            before.splitlines(), after.splitlines(), "base", "new", n=1, lineterm=""
        )
    ]
    if not lines:  # only line endings differ
        return ["--- base", "+++ new", "(the outputs differ in whitespace at line ends only)"]
    if len(lines) > DIFF_LINES:
        lines = [*lines[:DIFF_LINES], f"… {len(lines) - DIFF_LINES} more diff lines"]
    return lines


def tool_call_changes(
    before: Sequence[ToolCall], after: Sequence[ToolCall]
) -> list[ToolCallChange]:
    """Calls paired by (server, tool) in call order: a pair with other arguments is
    ``changed``, a call without a partner ``added`` or ``removed``."""
    waiting: dict[tuple[str, str], list[ToolCall]] = {}
    for call in before:
        waiting.setdefault((call.server, call.tool), []).append(call)
    changes = []
    for call in after:
        partners = waiting.get((call.server, call.tool))
        if not partners:
            changes.append(ToolCallChange("added", call.tool, call.server, after=call.arguments))
            continue
        earlier = partners.pop(0)
        if earlier.arguments != call.arguments:
            changes.append(
                ToolCallChange("changed", call.tool, call.server, earlier.arguments, call.arguments)
            )
    for calls in waiting.values():
        changes.extend(
            ToolCallChange("removed", call.tool, call.server, before=call.arguments)
            for call in calls
        )
    return changes


def _metric_changes(base: CaseSide, new: CaseSide, thresholds: Thresholds) -> list[MetricChange]:
    """The duration, token and cost figures that moved past their thresholds."""
    changes = []
    for metric in METRICS:
        before, after = getattr(base, metric), getattr(new, metric)
        if (
            before is not None
            and after is not None
            and thresholds.of(metric).exceeded(before, after)
        ):
            changes.append(MetricChange(metric, before, after))
    return changes

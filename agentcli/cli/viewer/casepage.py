"""What a case page shows beyond the result itself: the other runs of its case (``--runs``),
its stability figures, and what it spent, by role."""

from __future__ import annotations

from dataclasses import dataclass, field

from agentcli.eval.reports._view import (
    StabilityView,
    actual_text,
    case_cost_text,
    failure_message,
    stability_view,
)
from agentcli.eval.results.model import CaseResult, Usage

from .runfile import Row, RunFile

__all__ = ["CasePage", "case_page"]


@dataclass(slots=True)
class CasePage:
    """One result, decoded, with its case's other runs and what it cost."""

    row: Row
    result: CaseResult
    runs: list[Row] = field(default_factory=list)  # every run of its cell, when more than one
    stability: StabilityView | None = None
    usage: list[tuple[str, Usage]] = field(default_factory=list)  # (role, usage)
    cost: str | None = None
    failure: str = ""
    # each assertion's actual value as the reports resolve it; None: the record has none
    actuals: list[str | None] = field(default_factory=list)


def case_page(run: RunFile, row: Row) -> CasePage:
    """The case page of ``row``."""
    result = run.result(row)
    label = row.label
    runs = [other for other in run.rows if other.label == label]
    item = run.stability.get(label)
    usage: list[tuple[str, Usage]] = []
    if result.trace is not None:
        usage.append(("agent", result.trace.usage))
    usage += sorted((result.helper_usage or {}).items())
    return CasePage(
        row=row,
        result=result,
        runs=runs if len(runs) > 1 else [],
        stability=stability_view(item) if item is not None else None,
        usage=usage,
        cost=case_cost_text(result),
        failure="" if result.passed else failure_message(result),
        actuals=[actual_text(item, result) for item in result.assertions],
    )

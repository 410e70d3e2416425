"""Shared, format-neutral helpers for report writers: text forms, figures, accessors.

Writers render the typed values of ``eval/results/model.py`` (ours, or Yao's as read by
the codec); stability results are JSON objects (ours or Yao's), normalised here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agentcli.eval.results.codec import finite, to_json
from agentcli.eval.results.matrix import (
    Matrix,
    MatrixCell,
    MatrixPass,
    header_connectors,
    matrix_of,
    matrix_pass_of,
)
from agentcli.eval.results.model import (
    AssertionResult,
    CaseResult,
    RunReport,
    RunSummary,
    ToolCall,
    cell_label,
)
from agentcli.eval.stats.stability import classify
from agentcli.models.pricing import format_usd

STATUS_ICONS = {
    "passed": "✅",
    "failed": "❌",
    "error": "💥",
    "timeout": "⏱️",
    "skipped": "⏭️",
}

# -- text forms ---------------------------------------------------------------------------


def _content_text(content: Any) -> str | None:
    """A message content as text: a string, or the text parts of a multimodal list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(p, dict) for p in content):
        texts = [str(p.get("text")) for p in content if p.get("text") is not None]
        return "\n".join(texts) if texts else None
    return None


def input_text(value: Any) -> str:
    """A case input as text: the string, a message's content, or the last user message."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        text = _content_text(value.get("content"))
        if text is not None:
            return text
    if isinstance(value, list):
        users = [m for m in value if isinstance(m, dict) and m.get("role", "user") == "user"]
        if users:
            text = _content_text(users[-1].get("content"))
            if text is not None:
                return text
    if value is None:
        return ""
    return to_json(value, indent=2)


def value_text(value: Any, *, empty: str = "") -> str:
    """Any value as text: strings as they are, ``None`` as ``empty``, the rest as JSON."""
    if value is None:
        return empty
    if isinstance(value, str):
        return value
    return to_json(value, indent=2)


def one_line(text: str, limit: int = 80) -> str:
    """Whitespace collapsed and cut to ``limit`` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def cost_text(by_role: Mapping[str, Any]) -> str | None:
    """``$0.0104 (agent $0.0040, judge $0.0064)`` from ``{total?, role: cost}``; None when
    it cost nothing (offline runs show no cost, as before they had a price)."""
    parts = {
        role: float(amount)
        for role, amount in by_role.items()
        if role != "total" and isinstance(amount, int | float) and not isinstance(amount, bool)
    }
    total = by_role.get("total")
    if not isinstance(total, int | float) or isinstance(total, bool):
        total = sum(parts.values())
    if not total > 0:
        return None
    shown = ", ".join(f"{role} {format_usd(amount)}" for role, amount in parts.items())
    return format_usd(float(total)) + (f" ({shown})" if shown else "")


def connector_cost_text(cost: Mapping[str, Any]) -> str | None:
    """``gpt-4o $0.0100 · local $0.0000`` from a summary cost's ``by_connector`` (a matrix's);
    None outside a matrix."""
    by_connector = cost.get("by_connector")
    if not isinstance(by_connector, Mapping) or not by_connector:
        return None
    return " · ".join(
        f"{name} {format_usd(float(amount))}"
        for name, amount in by_connector.items()
        if isinstance(amount, int | float) and not isinstance(amount, bool)
    )


def case_cost_text(result: CaseResult) -> str | None:
    """What a case cost, by role (its agent, judges, simulator); None when nothing."""
    by_role: dict[str, Any] = {}
    if result.trace is not None and result.trace.usage.cost is not None:
        by_role["agent"] = result.trace.usage.cost
    for role, usage in (result.helper_usage or {}).items():
        if usage.cost is not None:
            by_role[role] = usage.cost
    return cost_text(by_role)


def format_duration(ms: Any) -> str:
    """Milliseconds as Yao prints them: ``850ms``, ``1.2s``, ``3.4m``."""
    if not isinstance(ms, int | float) or isinstance(ms, bool) or math.isnan(ms):
        return "-"
    if 0 < ms < 1:
        return f"{ms * 1000:.0f}µs"
    if ms < 1000:
        return f"{ms:.0f}ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f}s"
    return f"{ms / 60_000:.1f}m"


def format_percent(value: float | None) -> str:
    """A percentage with one decimal, ``-`` when unknown; more decimals (up to four) where
    one would round a rate that is not 100% up to ``100.0%`` (one failure in 6,000 cases
    is 99.98%, not a pass) or one that is not 0% down to ``0.0%``."""
    if value is None:
        return "-"
    for decimals in range(1, 5):
        shown = f"{value:.{decimals}f}"
        if (float(shown) < 100 or value >= 100) and (float(shown) > 0 or value <= 0):
            return f"{shown}%"
    return "0.0001%" if value < 50 else "99.9999%"  # closer still: four decimals is enough


# -- accessors ------------------------------------------------------------------------------


def tool_calls_of(result: CaseResult) -> list[ToolCall]:
    """The tool calls of a result's trace."""
    return result.trace.tool_calls if result.trace is not None else []


def failure_message(result: CaseResult) -> str:
    """Why a result did not pass: its error, else its failed assertions' messages."""
    if result.error:
        return result.error
    failed = [a for a in result.assertions if not a.passed]
    return "; ".join(a.message or f"{a.type or 'assertion'} failed" for a in failed)


# The assertion types that look at the case's output itself (without a ``path``): their
# "actual", when the record has none, is that output.
_OUTPUT_CHECKS = frozenset(
    (
        "contains",
        "not_contains",
        "icontains",
        "contains_any",
        "contains_all",
        "starts_with",
        "regex",
        "equals",
        "is_json",
        "type",
        "agent",
        "script",
    )
)
COMPARE_LIMIT = 300  # characters of an expected or actual value shown beside a failure


def actual_text(item: AssertionResult, result: CaseResult) -> str | None:
    """What an assertion got, as text: the record's ``actual``, else the case's output for
    a check of the output (``(no output)`` when it had none); None when the record holds
    nothing to show (a writer says so rather than show an empty value)."""
    if item.actual is not None:
        return value_text(item.actual)
    if item.type in _OUTPUT_CHECKS and item.path is None:
        return "(no output)" if result.output is None else value_text(result.output)
    return None


def comparison(item: AssertionResult, result: CaseResult) -> list[tuple[str, str]]:
    """What a failed assertion wanted and what it got, as ``(label, text)`` rows: the
    expected value, the actual one (the record's, else the case's output for a check of
    the output), and the checker's own words when a custom ``message`` replaced them (so a
    friendly message never hides why). Empty for an assertion that passed."""
    if item.passed:
        return []
    rows: list[tuple[str, str]] = []
    if item.expected is not None:
        rows.append(("expected", one_line(value_text(item.expected), COMPARE_LIMIT)))
    actual = actual_text(item, result)
    if actual is not None:
        rows.append(("actual", one_line(actual, COMPARE_LIMIT)))
    detail = item.extra.get("detail")
    if isinstance(detail, str) and detail and detail != item.message:
        rows.append(("check", one_line(detail, COMPARE_LIMIT)))
    return rows


# -- rates and stability -------------------------------------------------------------------


_number = finite  # the figures of a report are finite numbers or unknown


def _rate_scale(values: list[float], fractions: list[float]) -> float:
    """100 when ``values`` (a rate first, then its CI bounds) read as 0-1 fractions, else 1.

    Any figure above 1 means percentages; otherwise the rate is compared with the
    fractions its counts give (``passed / runs``) and the closer reading wins.
    """
    if any(value > 1 for value in values):
        return 1.0
    if values and fractions:
        rate = values[0]
        best = min(fractions, key=lambda f: min(abs(rate - f), abs(rate - f * 100)))
        return 100.0 if abs(rate - best) <= abs(rate - best * 100) else 1.0
    return 100.0


def summary_pass_rate(summary: RunSummary) -> float | None:
    """The summary's pass rate as a percentage (0-1 fractions are scaled up)."""
    rate = _number(summary.pass_rate)
    if rate is None:
        rate = _number(summary.extra.get("overall_pass_rate"))  # Yao's name for it
    passed, total = summary.passed, summary.total
    if rate is None:
        if not total:
            return None
        ran = total - summary.skipped
        return passed / ran * 100 if ran else 0.0
    fractions = []
    if total:
        fractions.append(passed / total)
        ran = total - summary.skipped
        if ran:
            fractions.append(passed / ran)
    return rate * _rate_scale([rate], fractions)


@dataclass(slots=True)
class StabilityView:
    """One stability result normalised: rates as percentages, durations in ms."""

    id: str
    runs: int
    passed: int
    rate: float | None
    ci_low: float | None
    ci_high: float | None
    label: str
    pass_hat_k: Any = None
    pass_at_k: Any = None
    durations: dict[str, float] = field(default_factory=dict)
    run_details: list[dict[str, Any]] = field(default_factory=list)
    faults: str | None = None  # the fault plan the runs ran under (pass^k: robustness)

    @property
    def pass_hat_k_label(self) -> str:
        """How reports name pass^k: ``pass^k under faults`` when the runs ran under them."""
        return "pass^k under faults" if self.faults else "pass^k"


_YAO_DURATIONS = {
    "min": "min_duration_ms",
    "avg": "avg_duration_ms",
    "max": "max_duration_ms",
    "std": "std_deviation_ms",
}


def stability_view(item: dict[str, Any]) -> StabilityView:
    """Normalise our stability result or Yao's (``stability_class``, ``*_duration_ms``)."""
    runs = int(_number(item.get("runs")) or 0)
    passed = int(_number(item.get("passed")) or 0)
    rate = _number(item.get("pass_rate"))
    ci_low, ci_high = _number(item.get("ci_low")), _number(item.get("ci_high"))
    figures = [v for v in (rate, ci_low, ci_high) if v is not None]
    scale = _rate_scale(figures, [passed / runs] if runs and rate is not None else [])
    if rate is not None:
        rate *= scale
    elif runs:
        rate = passed / runs * 100
    raw = item.get("duration")
    durations = (
        {k: v for k, v in raw.items() if _number(v) is not None} if isinstance(raw, dict) else {}
    )
    for key, yao_key in _YAO_DURATIONS.items():
        if key not in durations and _number(item.get(yao_key)) is not None:
            durations[key] = float(item[yao_key])
    details = item.get("run_details")
    connector = item.get("connector")
    return StabilityView(
        id=cell_label(str(item.get("id", "")), connector if isinstance(connector, str) else None),
        runs=runs,
        passed=passed,
        rate=rate,
        ci_low=None if ci_low is None else ci_low * scale,
        ci_high=None if ci_high is None else ci_high * scale,
        label=str(item.get("stability") or item.get("stability_class") or _label(rate)),
        pass_hat_k=item.get("pass_hat_k"),
        pass_at_k=item.get("pass_at_k"),
        durations=durations,
        run_details=[d for d in details if isinstance(d, dict)]
        if isinstance(details, list)
        else [],
        faults=item["faults"] if isinstance(item.get("faults"), str) else None,
    )


def _label(rate: float | None) -> str:
    """The stability class of a pass rate (percent), as the spec defines it."""
    return "unknown" if rate is None else classify(rate)


def format_k(value: Any) -> str:
    """pass^k / pass@k: a 0-1 probability (or a ``{k: p}`` map) as percentages."""
    if isinstance(value, dict):
        return ", ".join(f"k={k}: {format_k(v)}" for k, v in value.items())
    number = _number(value)
    if number is None:
        return "-" if value is None else str(value)
    return format_percent(number * 100 if number <= 1 else number)


def runs_by_id(results: list[CaseResult]) -> dict[str, list[CaseResult]]:
    """The per-run results of every stability case (results with a ``run``), by id: one
    pass over the results, however many cases."""
    runs: dict[str, list[CaseResult]] = {}
    for result in results:
        if result.run is not None:  # a matrix's cases by their label, as stability_view's
            runs.setdefault(cell_label(result.id, result.connector), []).append(result)
    return runs


# -- connector matrix -------------------------------------------------------------------


@dataclass(slots=True)
class MatrixView:
    """A report's connector matrix: the grid, its pass rule and threshold."""

    grid: Matrix
    mode: MatrixPass
    min_pass_rate: float

    def cell_text(self, cell: MatrixCell) -> str:
        """A cell as the reports show it: its status, under ``--runs`` with its pass rate."""
        threshold = self.grid.threshold(self.min_pass_rate)
        status = cell.status(threshold)
        if self.grid.runs_per_case <= 1 or cell.runs == 0:
            return f"{STATUS_ICONS[status]} {status}"
        rate = cell.rate() or 0.0
        return f"{STATUS_ICONS[status]} {rate:.0f}% ({cell.passed}/{cell.runs})"

    def target(self, cell: MatrixCell) -> int | None:
        """The result a cell drills down to: its first that did not pass, else its first."""
        return cell.failing if cell.failing is not None else cell.first


def matrix_view(report: RunReport) -> MatrixView | None:
    """The connector matrix of a report (``None`` when its results are no matrix's)."""
    grid = matrix_of(report.results, header_connectors(report.header))
    if grid is None:
        return None
    threshold = _number(report.summary.extra.get("min_pass_rate"))
    return MatrixView(
        grid, matrix_pass_of(report.header), 100.0 if threshold is None else threshold
    )


def adaptive_note(summary: RunSummary | None) -> str | None:
    """What ``--runs auto`` spent and saved, in one sentence (None for other runs)."""
    figures = summary.extra.get("adaptive") if summary is not None else None
    if not isinstance(figures, dict):
        return None
    used, fixed, saved = (finite(figures.get(k)) for k in ("runs_used", "fixed_runs", "saved_runs"))
    low, high, bar = (finite(figures.get(k)) for k in ("min_runs", "max_runs", "min_pass_rate"))
    if None in (used, fixed, saved, low, high, bar):
        return None
    percent = finite(figures.get("saved_pct")) or 0.0
    return (
        f"--runs auto: {used:g} runs of {fixed:g} ({saved:g} saved, {percent:g}%, against"
        f" --runs {high:g}); each case ran {low:g} to {high:g} times, until its pass rate"
        f" was decided against {bar:g}%"
    )

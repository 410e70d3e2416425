"""Shared, format-neutral helpers for report writers: key order, text forms, figures.

Writers work on plain dicts in the report shape (ours, or Yao's as read back by
``reader.py``), so every accessor here tolerates missing and unknown keys.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from agentcli.eval.results.model import STATUSES
from agentcli.eval.stats.stability import classify

STATUS_ICONS = {
    "passed": "✅",
    "failed": "❌",
    "error": "💥",
    "timeout": "⏱️",
    "skipped": "⏭️",
}

SUMMARY_KEYS = (
    "total",
    "passed",
    "failed",
    "skipped",
    "errors",
    "timeouts",
    "duration_ms",
    "agent_id",
    "connector",
    "pass_rate",
)
ENVIRONMENT_KEYS = ("user_id", "team_id", "locale")
METADATA_KEYS = ("started_at", "completed_at", "version", "input_file", "options")
RESULT_KEYS = (
    "id",
    "status",
    "input",
    "output",
    "expected",
    "duration_ms",
    "error",
    "assertions",
    "trace",
    "metadata",
    "run",
    "turns",
    "checkpoints",
    "attempts",
)
STABILITY_KEYS = (
    "id",
    "runs",
    "passed",
    "pass_rate",
    "pass_hat_k",
    "pass_at_k",
    "ci_low",
    "ci_high",
    "stability",
    "duration",
)


def ordered(data: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """``data`` with ``keys`` first (in that order), then its other keys as they came."""
    out = {key: data[key] for key in keys if key in data}
    out.update((key, value) for key, value in data.items() if key not in out)
    return out


def _json_fallback(value: Any) -> Any:
    """Serialise what json cannot (sets, paths, objects) instead of losing the whole report."""
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    return str(value)


# Characters str.splitlines() treats as line breaks although JSON leaves them raw; escaped
# so that no reader splitting on them can cut a JSON Lines record in two.
_LINE_BREAKS = str.maketrans({"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def to_json(value: Any, *, indent: int | None = None) -> str:
    """JSON text: UTF-8 friendly (no ASCII escapes), never failing on odd values."""
    separators = None if indent else (",", ":")
    text = json.dumps(
        value, ensure_ascii=False, indent=indent, separators=separators, default=_json_fallback
    )
    return text.translate(_LINE_BREAKS)


def build_report(
    header: dict[str, Any],
    results: list[dict[str, Any]],
    summary: dict[str, Any],
    stability_results: list[dict[str, Any]] | None,
) -> dict[str, Any]:
    """The one report object (Yao's shape, stable key order) from the streamed parts."""
    report: dict[str, Any] = {
        "summary": ordered(summary, SUMMARY_KEYS),
        "environment": ordered(header.get("environment") or {}, ENVIRONMENT_KEYS),
        "results": [ordered(result, RESULT_KEYS) for result in results],
    }
    if stability_results:
        report["stability_results"] = [ordered(s, STABILITY_KEYS) for s in stability_results]
    metadata = dict(header.get("metadata") or {})
    if not metadata.get("completed_at"):
        # The header was written at the start; the run ends now, when the report is built.
        metadata["completed_at"] = datetime.now().astimezone().isoformat()
    report["metadata"] = ordered(metadata, METADATA_KEYS)
    report.update(
        (key, value)
        for key, value in header.items()
        if key not in report and key not in ("type", "environment", "metadata")
    )
    return report


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
    """A percentage with one decimal, ``-`` when unknown."""
    return "-" if value is None else f"{value:.1f}%"


# -- accessors ------------------------------------------------------------------------------


def status_of(result: dict[str, Any]) -> str:
    """The result's status, ``error`` when missing or unknown."""
    status = result.get("status")
    return status if status in STATUSES else "error"


def tool_calls_of(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool calls of a result's trace."""
    trace = result.get("trace")
    calls = trace.get("tool_calls") if isinstance(trace, dict) else None
    return [c for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []


def usage_of(result: dict[str, Any]) -> dict[str, Any]:
    """The trace's usage dict, empty when absent."""
    trace = result.get("trace")
    usage = trace.get("usage") if isinstance(trace, dict) else None
    return usage if isinstance(usage, dict) else {}


def assertions_of(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The result's assertion records."""
    items = result.get("assertions")
    return [a for a in items if isinstance(a, dict)] if isinstance(items, list) else []


def turns_of(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Dynamic turns: ours at top level, Yao's under ``metadata.turns``."""
    turns = result.get("turns")
    if turns is None and isinstance(result.get("metadata"), dict):
        turns = result["metadata"].get("turns")
    return [t for t in turns if isinstance(t, dict)] if isinstance(turns, list) else []


def reached_of(turn: dict[str, Any]) -> list[str]:
    """The checkpoint ids a turn reached (a hand-edited file may hold anything there)."""
    listed = turn.get("checkpoints_reached")
    return [str(c) for c in listed] if isinstance(listed, list) else []


def checkpoints_of(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Checkpoint states as a list: ours is a list, Yao's a map keyed by id."""
    points = result.get("checkpoints")
    if points is None and isinstance(result.get("metadata"), dict):
        points = result["metadata"].get("checkpoints")
    if isinstance(points, dict):
        return [{"id": key, **value} for key, value in points.items() if isinstance(value, dict)]
    return [p for p in points if isinstance(p, dict)] if isinstance(points, list) else []


def failure_message(result: dict[str, Any]) -> str:
    """Why a result did not pass: its error, else its failed assertions' messages."""
    if result.get("error"):
        return str(result["error"])
    failed = [a for a in assertions_of(result) if not a.get("passed")]
    messages = [str(a.get("message") or f"{a.get('type', 'assertion')} failed") for a in failed]
    return "; ".join(messages)


# -- rates and stability -------------------------------------------------------------------


def finite(value: Any) -> float | None:
    """``value`` as a float when it is a real, finite number (not a bool, NaN, Infinity, or
    an integer too big for a float); else ``None``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


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


def summary_pass_rate(summary: dict[str, Any]) -> float | None:
    """The summary's pass rate as a percentage (0-1 fractions are scaled up)."""
    rate = _number(summary.get("pass_rate", summary.get("overall_pass_rate")))
    passed, total = _number(summary.get("passed")), _number(summary.get("total"))
    if rate is None:
        if passed is None or not total:
            return None
        ran = total - (_number(summary.get("skipped")) or 0)
        return passed / ran * 100 if ran else 0.0
    fractions = []
    if passed is not None and total:
        fractions.append(passed / total)
        ran = total - (_number(summary.get("skipped")) or 0)
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
    durations_raw = item.get("duration") if isinstance(item.get("duration"), dict) else {}
    durations = {k: v for k, v in durations_raw.items() if _number(v) is not None}
    for key, yao_key in _YAO_DURATIONS.items():
        if key not in durations and _number(item.get(yao_key)) is not None:
            durations[key] = float(item[yao_key])
    details = item.get("run_details")
    return StabilityView(
        id=str(item.get("id", "")),
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


def runs_by_id(results: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The per-run results of every stability case (results with a ``run``), by id: one
    pass over the results, however many cases."""
    runs: dict[str, list[dict[str, Any]]] = {}
    for result in results:
        if result.get("run") is not None:
            runs.setdefault(str(result.get("id")), []).append(result)
    return runs

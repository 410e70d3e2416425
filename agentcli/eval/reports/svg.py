"""Inline SVG charts for the HTML report: per-case pass rates and a duration histogram."""

from __future__ import annotations

import math
from html import escape

from agentcli.words import counted

from ._view import StabilityView, format_duration, format_percent

__all__ = ["STABILITY_COLORS", "duration_histogram", "pass_rate_chart"]

STABILITY_COLORS = {
    "stable": "#3fb950",
    "mostly_stable": "#d29922",
    "unstable": "#db6d28",
    "highly_unstable": "#f85149",
}

_WIDTH = 720


def _clip(text: str, limit: int) -> str:
    """A label cut to ``limit`` characters."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def pass_rate_chart(views: list[StabilityView]) -> str:
    """Horizontal bars of each case's pass rate, coloured by stability, with CI whiskers."""
    label_w, bar_w, row_h, top = 210, 420, 24, 10
    height = top * 2 + row_h * len(views)
    rows = []
    for index, view in enumerate(views):
        y = top + index * row_h
        rate = max(0.0, min(100.0, view.rate or 0.0))
        color = STABILITY_COLORS.get(view.label, "#58a6ff")
        tip = f"{view.id}: {format_percent(view.rate)} ({view.passed}/{view.runs}), {view.label}"
        parts = [
            f"<title>{escape(tip)}</title>",
            f'<text x="{label_w - 8}" y="{y + 16}" text-anchor="end">{escape(_clip(view.id, 30))}</text>',
            f'<rect class="track" x="{label_w}" y="{y + 4}" width="{bar_w}" height="16"/>',
            f'<rect x="{label_w}" y="{y + 4}" width="{bar_w * rate / 100:.1f}" height="16" fill="{color}"/>',
        ]
        if view.ci_low is not None and view.ci_high is not None:
            low = label_w + bar_w * max(0.0, min(100.0, view.ci_low)) / 100
            high = label_w + bar_w * max(0.0, min(100.0, view.ci_high)) / 100
            parts.append(
                f'<line class="ci" x1="{low:.1f}" x2="{high:.1f}" y1="{y + 12}" y2="{y + 12}"/>'
            )
        parts.append(
            f'<text x="{label_w + bar_w + 8}" y="{y + 16}">{format_percent(view.rate)}</text>'
        )
        rows.append("<g>" + "".join(parts) + "</g>")
    return (
        f'<svg role="img" aria-label="Pass rate per case" '
        f'width="{_WIDTH}" height="{height}" viewBox="0 0 {_WIDTH} {height}">'
        + "".join(rows)
        + "</svg>"
    )


def duration_histogram(durations: list[float]) -> str:
    """A histogram of run durations (ms) in up to 12 equal-width bins."""
    values = sorted(d for d in durations if math.isfinite(d))
    low, high = (values[0], values[-1]) if values else (0.0, 0.0)
    bins = max(1, min(12, math.ceil(math.sqrt(len(values))))) if high > low else 1
    width = (high - low) / bins or 1.0
    counts = [0] * bins
    for value in values:
        counts[min(bins - 1, int((value - low) / width))] += 1
    left, right, top, bottom, height = 50, _WIDTH - 20, 16, 180, 210
    peak = max(counts, default=0) or 1
    slot = (right - left) / bins
    bars = []
    for index, count in enumerate(counts):
        bar_h = (bottom - top) * count / peak
        x = left + index * slot
        start = low + index * width
        tip = f"{format_duration(start)}–{format_duration(start + width)}: {counted(count, 'run')}"
        bars.append(
            f'<g><title>{escape(tip)}</title><rect class="bar" x="{x + 1:.1f}" y="{bottom - bar_h:.1f}" '
            f'width="{max(slot - 2, 1):.1f}" height="{bar_h:.1f}"/></g>'
        )
    axis = (
        f'<line class="axis" x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}"/>'
        f'<line class="axis" x1="{left}" y1="{top}" x2="{left}" y2="{bottom}"/>'
        f'<text x="{left - 6}" y="{top + 4}" text-anchor="end">{peak}</text>'
        f'<text x="{left - 6}" y="{bottom}" text-anchor="end">0</text>'
        f'<text x="{left}" y="{bottom + 16}">{escape(format_duration(low))}</text>'
        f'<text x="{right}" y="{bottom + 16}" text-anchor="end">'
        f"{escape(format_duration(low + width * bins))}</text>"
        f'<text x="{(left + right) / 2:.0f}" y="{bottom + 28}" text-anchor="middle">'
        f"duration per run ({counted(len(values), 'run')})</text>"
    )
    return (
        f'<svg role="img" aria-label="Duration histogram" '
        f'width="{_WIDTH}" height="{height + 10}" viewBox="0 0 {_WIDTH} {height + 10}">'
        + axis
        + "".join(bars)
        + "</svg>"
    )

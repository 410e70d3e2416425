"""One JSON report object in Yao's shape (indented, stable key order, UTF-8)."""

from __future__ import annotations

from typing import Any

from ._buffered import BufferedWriter
from ._view import to_json

__all__ = ["JsonWriter", "render_json"]


def render_json(report: dict[str, Any]) -> str:
    """The report as 2-space indented JSON with a trailing newline."""
    return to_json(report, indent=2) + "\n"


class JsonWriter(BufferedWriter):
    """Writes ``{summary, environment, results, stability_results?, metadata}`` at close."""

    def render(self, report: dict[str, Any]) -> str:
        """The report as JSON."""
        return render_json(report)

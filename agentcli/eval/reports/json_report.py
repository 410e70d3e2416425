"""One JSON report object in Yao's shape (indented, stable key order, UTF-8)."""

from __future__ import annotations

import re

from agentcli.eval.results.codec import report_document, to_json
from agentcli.eval.results.model import RunReport

from ._buffered import BufferedWriter
from ._files import JSON_ERRORS

__all__ = ["JsonWriter", "render_json"]

_REPORT_START = re.compile(
    r'\s*\{\s*"(summary|environment|results|stability_results|metadata)"\s*:'
)


def render_json(report: RunReport) -> str:
    """The report as 2-space indented JSON with a trailing newline."""
    return to_json(report_document(report), indent=2) + "\n"


class JsonWriter(BufferedWriter):
    """Writes ``{summary, environment, results, stability_results?, metadata}`` at close."""

    errors = JSON_ERRORS  # a lone surrogate is written as its JSON escape and reads back

    @staticmethod
    def recognises(head: str) -> bool:
        """True when ``head`` opens a report object (ours or Yao's)."""
        return _REPORT_START.match(head) is not None

    def text(self, report: RunReport) -> str:
        """The JSON as it is: no character is replaced."""
        return self.render(report)

    def render(self, report: RunReport) -> str:
        """The report as JSON."""
        return render_json(report)

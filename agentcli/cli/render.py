"""Rendering one agent turn in a terminal: streamed text on stdout, tool activity on stderr
(so the answer can be piped), or every event as NDJSON with ``--json``."""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from agentcli.runtime.tools import result_text


def _short(value: Any, limit: int = 200) -> str:
    text = result_text(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class TurnPrinter:
    """An event listener that prints a turn as it happens."""

    def __init__(
        self,
        *,
        json_events: bool = False,
        verbose: bool = False,
        out: TextIO | None = None,
        err: TextIO | None = None,
    ) -> None:
        self.json_events = json_events
        self.verbose = verbose
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self._at_line_start = True

    def on_event(self, event: Any) -> None:
        """Print what ``event`` means for a person (or as JSON)."""
        if self.json_events:
            self.out.write(json.dumps(event.to_dict(), ensure_ascii=False, default=str) + "\n")
            self.out.flush()
            return
        kind = event.type
        if kind == "message_update" and getattr(event.delta, "type", "") == "text_delta":
            self._write(event.delta.text)
        elif kind == "tool_execution_start":
            self._newline()
            arguments = f" {_short(event.call.arguments)}" if self.verbose else ""
            self.err.write(f"⚙ {event.call.name}{arguments}\n")
            self.err.flush()
        elif kind == "tool_execution_end":
            mark = "✗" if event.result.is_error else "✓"
            detail = (
                f" {_short(event.result.content)}" if self.verbose or event.result.is_error else ""
            )
            self.err.write(f"{mark} {event.call.name} ({event.duration_ms:.0f} ms){detail}\n")
            self.err.flush()
        elif kind == "error":
            self._newline()
            self.err.write(f"error: {event.error}\n")
            self.err.flush()

    def _write(self, text: str) -> None:
        if text:
            self.out.write(text)
            self.out.flush()
            self._at_line_start = text.endswith("\n")

    def _newline(self) -> None:
        if not self._at_line_start:
            self.out.write("\n")
            self.out.flush()
            self._at_line_start = True

    def finish(self, result: Any) -> None:
        """End the output cleanly after a turn."""
        if self.json_events:
            return
        self._newline()
        if result.reason == "aborted":
            self.err.write("(aborted)\n")
        elif result.reason == "max_steps":
            self.err.write(f"(stopped after {result.steps} steps: max_steps reached)\n")

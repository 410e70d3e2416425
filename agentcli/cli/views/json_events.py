"""``agent eval --json``: the run as NDJSON events on stdout, one object a line."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, TextIO

from agentcli.eval.cases.model import input_text
from agentcli.jsonsafe import finite_json
from agentcli.secrets import redact_data

if TYPE_CHECKING:
    from collections.abc import Mapping

    from agentcli.eval.cases.model import Case
    from agentcli.eval.results.matrix import Matrix, MatrixPass
    from agentcli.eval.results.model import RunSummary, Trace
    from agentcli.eval.run.recap import RecapLists
    from agentcli.eval.run.view import RunEvent
    from agentcli.eval.stats.stability import CaseStability

__all__ = ["JsonEvents"]


class JsonEvents:
    """``--json``: one JSON object per line on stdout, nothing else there."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        self._failures: list[dict[str, Any]] = []
        self._flaky: list[dict[str, Any]] = []

    def emit(self, data: dict[str, Any]) -> None:
        """Write one event line (secrets redacted)."""
        self.out.write(finite_json(redact_data(data), spaced=True) + "\n")
        self.out.flush()

    def on_event(self, event: RunEvent) -> None:
        """Translate a runner event."""
        if event.type == "output" and event.case is not None:
            data: dict[str, Any] = {
                "type": "log",
                "level": "warning" if event.stream == "stderr" else "info",
                "id": event.case.id,
                "stream": event.stream,
                "message": event.message,
            }
            if event.run:
                data["run"] = event.run
            if event.connector is not None:
                data["connector"] = event.connector
            self.emit(data)
        elif event.case is not None and event.case.is_dynamic:
            self._dynamic(event)
        elif event.type == "test_start" and event.case is not None:
            data = {
                "type": "test_start",
                "id": event.case.id,
                "input": input_text(event.case)[:200],
            }
            if event.run:
                data["run"] = event.run
            if event.connector is not None:
                data["connector"] = event.connector
            self.emit(data)
        elif event.type == "test_result" and event.result is not None:
            result = event.result
            data = {
                "type": "test_result",
                "id": result.id,
                "status": result.status,
                "duration_ms": result.duration_ms,
            }
            if event.run:
                data["run"] = event.run
            if result.connector is not None:
                data["connector"] = result.connector
            if result.error:
                data["error"] = result.error
            if event.retrying:  # an attempt --retries runs again: the case's result follows
                data["retrying"] = True
            self.emit(data)
        elif event.type == "log":
            self.emit({"type": "log", "level": event.level, "message": event.message})

    def _dynamic(self, event: RunEvent) -> None:
        """``dynamic_start`` / ``dynamic_result`` in place of test_start / test_result."""
        case, result = event.case, event.result
        assert case is not None
        data: dict[str, Any]
        if event.type == "test_start":
            data = {
                "type": "dynamic_start",
                "id": case.id,
                "checkpoints": len(case.checkpoints),
                "max_turns": case.max_turns,
            }
        elif event.type == "test_result" and result is not None:
            reached = sum(1 for p in result.checkpoints or [] if p.reached)
            data = {
                "type": "dynamic_result",
                "id": result.id,
                "status": result.status,
                "turns": len(result.turns or []),
                "checkpoints": len(case.checkpoints),
                "checkpoints_reached": reached,
                "duration_ms": result.duration_ms,
            }
            if result.error:
                data["error"] = result.error
            if event.retrying:
                data["retrying"] = True
        else:
            return
        if event.run:
            data["run"] = event.run
        if event.connector is not None:
            data["connector"] = event.connector
        self.emit(data)

    def header(self, title: str = "") -> None:
        """Not part of the stream."""

    def section(self, title: str) -> None:
        """Not part of the stream."""

    def info(self, message: str) -> None:
        """A log event."""
        self.emit({"type": "log", "level": "info", "message": message})

    def warning(self, message: str) -> None:
        """A log event."""
        self.emit({"type": "log", "level": "warning", "message": message})

    def error(self, message: str) -> None:
        """A log event."""
        self.emit({"type": "log", "level": "error", "message": message})

    def start_progress(self, total: int) -> None:
        """No progress bar in the stream."""

    def stop_progress(self) -> None:
        """No progress bar in the stream."""

    def stability(self, stats: CaseStability) -> None:
        """A case's stability figures, once its runs are done."""
        self.emit({"type": "stability", **stats.to_dict()})

    def failures(self, recap: RecapLists, classes: Mapping[str, int]) -> None:
        """Kept for the summary event's ``failures`` (and ``flaky``)."""
        self._failures = [failure.to_dict() for failure in recap.failing]
        self._flaky = [failure.to_dict() for failure in recap.flaky]

    def summary(self, summary: RunSummary, output_path: str | None) -> None:
        """The summary event, with ``failures``: ``{id, status, reason, attribution}`` of
        every case that did not pass; under ``--runs``, ``flaky`` (the same) of the cases
        that met the bar with some failed runs, when there are any."""
        event = {"type": "summary", **summary.to_dict(), "failures": self._failures}
        if self._flaky:
            event["flaky"] = self._flaky
        self.emit(event)

    def matrix(self, grid: Matrix, mode: MatrixPass, min_pass_rate: float) -> None:
        """The connector matrix: every case's cells and verdict, per-connector figures."""
        self.emit({"type": "matrix", **grid.to_dict(mode, min_pass_rate)})

    def output_file(self, path: str) -> None:
        """Where the results went."""
        self.emit({"type": "output_file", "path": path})

    def banner(self, passed: bool) -> None:
        """Not part of the stream."""

    def dry_run_case(self, case: Case) -> None:
        """One planned case."""
        self.emit({"type": "dry_run_case", "case": case.to_dict()})

    def direct_output(
        self, output: Any, trace: Trace | None, duration_ms: float, error: str | None
    ) -> None:
        """Message mode's single JSON object."""
        data: dict[str, Any] = {
            "type": "direct_output",
            "output": output,
            "duration_ms": duration_ms,
        }
        if trace is not None:
            data["trace"] = trace.to_dict()
        if error:
            data["error"] = error
        self.emit(data)

    def direct_error(self, message: str) -> None:
        """Message mode failed before an answer."""
        self.emit({"type": "direct_output", "output": None, "error": message})

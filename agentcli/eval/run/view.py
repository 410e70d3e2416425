"""What an eval run shows, and to whom: the events the runner reports and the ``EvalView``
the session renders through. The views themselves (the console, ``--json`` NDJSON) belong
to the CLI; eval/ only knows this protocol."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from collections.abc import Mapping

    from agentcli.eval.cases.model import Case
    from agentcli.eval.results.matrix import Matrix, MatrixPass
    from agentcli.eval.results.model import CaseResult, RunSummary, Trace
    from agentcli.eval.run.recap import RecapLists
    from agentcli.eval.stats.stability import CaseStability

__all__ = ["EventType", "EvalView", "LogLevel", "RunEvent", "Stream"]

EventType = Literal["test_start", "test_result", "log", "output"]
LogLevel = Literal["info", "warning", "error"]
Stream = Literal["stdout", "stderr"]


@dataclass(slots=True)
class RunEvent:
    """Something the console or ``--json`` stream shows: ``type`` names it."""

    type: EventType  # output: a line the case's code printed
    case: Case | None = None
    run: int | None = None
    result: CaseResult | None = None
    level: LogLevel = "info"
    message: str = ""
    stream: Stream | None = None  # output only
    connector: str | None = None  # the matrix column the case runs on (None outside one)
    # test_result of an attempt --retries runs again: not the case's result, which follows
    retrying: bool = False


class EvalView(Protocol):
    """What the session and the runner call to show a run."""

    def header(self, title: str = "Agent Test") -> None:
        """The run's title."""

    def section(self, title: str) -> None:
        """A sub-header (``Running Tests``, ``Summary``)."""

    def info(self, message: str) -> None:
        """An information line."""

    def warning(self, message: str) -> None:
        """A warning line."""

    def error(self, message: str) -> None:
        """An error line."""

    def start_progress(self, total: int) -> None:
        """``total`` case runs are about to start."""

    def stop_progress(self) -> None:
        """The runs are over (finished or stopped)."""

    def on_event(self, event: RunEvent) -> None:
        """A runner event: a case started or ended, a log line, a printed line."""

    def stability(self, stats: CaseStability) -> None:
        """Every run of one case is done (``--runs`` > 1)."""

    def failures(self, recap: RecapLists, classes: Mapping[str, int]) -> None:
        """The recap of the cases that did not pass (and, under ``--runs``, the flaky ones
        that met the bar), told just before the summary."""

    def summary(self, summary: RunSummary, output_path: str | None) -> None:
        """The run's figures."""

    def matrix(self, grid: Matrix, mode: MatrixPass, min_pass_rate: float) -> None:
        """A connector matrix's side-by-side table (case x connector), after the summary."""

    def output_file(self, path: str) -> None:
        """Where the results went."""

    def banner(self, passed: bool) -> None:
        """The verdict, last."""

    def dry_run_case(self, case: Case) -> None:
        """One case ``--dry-run`` would run."""

    def direct_output(
        self, output: Any, trace: Trace | None, duration_ms: float, error: str | None
    ) -> None:
        """Message mode: the assistant's answer."""

    def direct_error(self, message: str) -> None:
        """Message mode failed before an answer."""

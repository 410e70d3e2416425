"""A connector matrix (``-c a -c b``, ``--matrix``) as a grid: one cell per case and
connector, holding that cell's runs, and the verdicts read from it.

A cell passes when its runs meet ``--min-pass-rate`` (a single run: when it passed; a
skipped cell never fails). ``--matrix-pass all`` (the default) fails the run when any cell
fails; ``--matrix-pass any`` only when a case passes on none of the connectors. The session
fills a grid as results come, the report writers, ``agent merge`` and ``agent report`` build
one from a results file: the same verdicts and the same table everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from .model import CaseResult, JsonObject, RunHeader, RunSummary, Status

__all__ = [
    "MATRIX_PASS",
    "Matrix",
    "MatrixCell",
    "MatrixPass",
    "header_connectors",
    "is_matrix",
    "matrix_of",
    "matrix_pass_of",
    "single_connector",
]

MatrixPass = Literal["all", "any"]
MATRIX_PASS: tuple[MatrixPass, ...] = get_args(MatrixPass)


@dataclass(slots=True)
class MatrixCell:
    """The runs of one case on one connector: their statuses, in the order they came, and
    where the first of them is among the run's results (for a report's drill-down)."""

    statuses: list[Status] = field(default_factory=list)
    first: int | None = None  # index of the cell's first result in the results
    failing: int | None = None  # index of its first result that did not pass

    @property
    def runs(self) -> int:
        """Runs that count (skipped ones do not)."""
        return sum(1 for status in self.statuses if status != "skipped")

    @property
    def passed(self) -> int:
        """Runs that passed."""
        return self.statuses.count("passed")

    def passes(self, min_pass_rate: float = 100.0) -> bool:
        """Whether the cell meets ``min_pass_rate`` (percent); with no counted run, yes."""
        runs = self.runs
        return runs == 0 or self.passed * 100 >= min_pass_rate * runs

    def status(self, min_pass_rate: float = 100.0) -> Status:
        """One status for the cell: its run's, or under ``--runs`` passed/failed by the
        threshold (skipped when no run counted)."""
        if len(self.statuses) == 1:
            return self.statuses[0]
        if self.runs == 0:
            return "skipped"
        return "passed" if self.passes(min_pass_rate) else "failed"

    def rate(self) -> float | None:
        """The pass rate in percent (``None`` with no counted run)."""
        runs = self.runs
        return self.passed / runs * 100 if runs else None


@dataclass(slots=True)
class Matrix:
    """The grid of a matrix run: connectors (columns) in their given order, cases (rows) in
    the order their first result came."""

    connectors: list[str]
    rows: dict[str, dict[str, MatrixCell]] = field(default_factory=dict)
    runs_per_case: int = 1
    count: int = 0  # results added (their indexes, for drill-down)

    def add(self, result: CaseResult) -> None:
        """Put one result in its cell (a result of no column of the grid adds a column)."""
        index, self.count = self.count, self.count + 1
        connector = result.connector
        if connector is None or not result.id:
            return  # not a matrix result, or no case's: no cell
        if connector not in self.connectors:
            self.connectors.append(connector)
        cell = self.rows.setdefault(result.id, {}).setdefault(connector, MatrixCell())
        cell.statuses.append(result.status)
        if cell.first is None:
            cell.first = index
        if cell.failing is None and result.status in ("failed", "error", "timeout"):
            cell.failing = index

    def cell(self, case_id: str, connector: str) -> MatrixCell | None:
        """The cell of a case on a connector (``None``: it did not run there)."""
        return self.rows.get(case_id, {}).get(connector)

    def threshold(self, min_pass_rate: float) -> float:
        """The pass rate a cell must reach: ``--min-pass-rate`` under ``--runs``; a single
        run must pass."""
        return min_pass_rate if self.runs_per_case > 1 else 100.0

    def failing_cells(self, min_pass_rate: float = 100.0) -> list[tuple[str, str]]:
        """``(case id, connector)`` of every cell that failed, in grid order."""
        threshold = self.threshold(min_pass_rate)
        return [
            (case_id, connector)
            for case_id, cells in self.rows.items()
            for connector in self.connectors
            if (cell := cells.get(connector)) is not None and not cell.passes(threshold)
        ]

    def case_passes(self, case_id: str, mode: MatrixPass, min_pass_rate: float = 100.0) -> bool:
        """Whether a case passes: on every connector it ran on (``all``), or on one (``any``)."""
        threshold = self.threshold(min_pass_rate)
        cells = [cell for cell in self.rows.get(case_id, {}).values() if cell.runs]
        if not cells:
            return True  # skipped everywhere: nothing failed
        verdicts = [cell.passes(threshold) for cell in cells]
        return all(verdicts) if mode == "all" else any(verdicts)

    def failing_cases(self, mode: MatrixPass, min_pass_rate: float = 100.0) -> list[str]:
        """Case ids that fail under ``mode``, in grid order."""
        return [c for c in self.rows if not self.case_passes(c, mode, min_pass_rate)]

    def passed_cases(self, mode: MatrixPass, min_pass_rate: float = 100.0) -> int:
        """How many cases pass under ``mode``."""
        return len(self.rows) - len(self.failing_cases(mode, min_pass_rate))

    def exit_code(self, mode: MatrixPass, min_pass_rate: float = 100.0) -> int:
        """1 when a case fails under ``mode``, else 0."""
        return 1 if self.failing_cases(mode, min_pass_rate) else 0

    def by_connector(self, min_pass_rate: float = 100.0) -> dict[str, JsonObject]:
        """Per connector: cells that ran, passed and failed, and the share that passed."""
        threshold = self.threshold(min_pass_rate)
        figures: dict[str, JsonObject] = {}
        for connector in self.connectors:
            cells = [c for cells in self.rows.values() if (c := cells.get(connector)) and c.runs]
            passed = sum(1 for cell in cells if cell.passes(threshold))
            figures[connector] = {
                "cases": len(cells),
                "passed": passed,
                "failed": len(cells) - passed,
                "pass_rate": round(passed / len(cells) * 100, 2) if cells else 0.0,
            }
        return figures

    def summary(self, mode: MatrixPass, min_pass_rate: float = 100.0) -> JsonObject:
        """``summary.matrix`` of the results file: columns, the pass rule, per-connector
        figures and the cases that fail under the rule."""
        return {
            "connectors": list(self.connectors),
            "pass": mode,
            "by_connector": self.by_connector(min_pass_rate),
            "failing_cases": self.failing_cases(mode, min_pass_rate),
        }

    def to_dict(self, mode: MatrixPass, min_pass_rate: float = 100.0) -> JsonObject:
        """The whole grid as JSON (``--json``'s ``matrix`` event): each case with its
        verdict and its cells' status, runs and passes."""
        threshold = self.threshold(min_pass_rate)
        cases: list[JsonObject] = []
        for case_id, cells in self.rows.items():
            row: dict[str, Any] = {}
            for connector in self.connectors:
                cell = cells.get(connector)
                if cell is not None:
                    row[connector] = {
                        "status": cell.status(threshold),
                        "runs": cell.runs,
                        "passed": cell.passed,
                    }
            verdict = self.case_passes(case_id, mode, min_pass_rate)
            cases.append({"id": case_id, "passed": verdict, "cells": row})
        return {**self.summary(mode, min_pass_rate), "cases": cases}


def matrix_of(
    results: Iterable[CaseResult], connectors: Iterable[str] = (), *, runs_per_case: int = 1
) -> Matrix | None:
    """The grid of ``results`` (columns: ``connectors`` first, then any other a result
    names); ``None`` when no result belongs to a matrix."""
    grid = Matrix(list(connectors), runs_per_case=runs_per_case)
    for result in results:
        grid.add(result)
        if result.run is not None and result.run > grid.runs_per_case:
            grid.runs_per_case = result.run
    return grid if grid.rows else None


def _header_options(header: RunHeader) -> JsonObject:
    """The options a results header recorded (``{}`` when it recorded none)."""
    options = header.metadata.get("options")
    return options if isinstance(options, dict) else {}


def header_connectors(header: RunHeader) -> list[str]:
    """The matrix columns a results header lists, in order (``[]`` outside a matrix)."""
    listed = _header_options(header).get("connectors")
    if not isinstance(listed, list):
        return []
    return [name for name in listed if isinstance(name, str) and name]


def is_matrix(results: Iterable[CaseResult]) -> bool:
    """Whether ``results`` are a connector matrix's: one of them names its connector (a run
    on one connector names none)."""
    return any(result.connector is not None for result in results)


def single_connector(header: RunHeader, summary: RunSummary | None = None) -> str | None:
    """The one connector a run that was no matrix ran on, as its header (else its summary)
    names it; ``None`` for a matrix or when the file names none. Its results carry no
    connector, so this is what pairs them with one column of a matrix."""
    if header_connectors(header):
        return None
    for value in (
        header.metadata.get("connector"),  # ours
        header.extra.get("connector"),  # a header with the connector at its top level
        summary.connector if summary is not None else None,
    ):
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def matrix_pass_of(header: RunHeader) -> MatrixPass:
    """The ``--matrix-pass`` a results header recorded (``all`` when it recorded none)."""
    return "any" if _header_options(header).get("matrix_pass") == "any" else "all"

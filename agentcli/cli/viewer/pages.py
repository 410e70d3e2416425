"""What a run page shows for a request: its filters read from the query string, the
matching rows in order (failures first), and the one page of them to decode."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlencode

from agentcli.choices import ATTRIBUTIONS
from agentcli.eval.reports._view import MatrixView
from agentcli.eval.results.codec import finite
from agentcli.eval.results.matrix import header_connectors, matrix_of, matrix_pass_of
from agentcli.eval.results.model import STATUSES, CaseResult

from .runfile import Row, RunFile

__all__ = [
    "PAGE_SIZE",
    "STATUS_CHOICES",
    "Filters",
    "Page",
    "filters_from",
    "matrix_page",
    "page_of",
    "page_number",
]

PAGE_SIZE = 50
MATRIX_PAGE_SIZE = 100
# "failing": failed, errored or timed out; then each status alone
STATUS_CHOICES = ("failing", *STATUSES)
_MAX_QUERY = 200  # characters of a search kept
_ORDER = {"failed": 0, "error": 0, "timeout": 0, "passed": 1, "skipped": 2}


@dataclass(frozen=True, slots=True)
class Filters:
    """A run page's filters; an empty value filters nothing."""

    status: str = ""
    tag: str = ""
    attribution: str = ""
    query: str = ""

    def keeps(self, row: Row) -> bool:
        """Whether ``row`` passes the status, tag and attribution filters."""
        if self.status == "failing":
            if not row.failing:
                return False
        elif self.status and row.status != self.status:
            return False
        if self.tag and self.tag not in row.tags:
            return False
        return not self.attribution or row.attribution == self.attribution

    def params(self, **changes: str | int) -> str:
        """The query string of these filters (with ``changes``), empty values left out."""
        values: dict[str, str | int] = {
            "status": self.status,
            "tag": self.tag,
            "attribution": self.attribution,
            "q": self.query,
            **changes,
        }
        return urlencode({key: value for key, value in values.items() if value not in ("", 0)})


def filters_from(params: Mapping[str, str]) -> Filters:
    """The filters a query string asks for (an unknown status or attribution: none)."""
    status = params.get("status", "")
    attribution = params.get("attribution", "")
    return Filters(
        status=status if status in STATUS_CHOICES else "",
        tag=params.get("tag", "")[:_MAX_QUERY],
        attribution=attribution if attribution in ATTRIBUTIONS else "",
        query=params.get("q", "").strip()[:_MAX_QUERY],
    )


def page_number(params: Mapping[str, str]) -> int:
    """The ``page`` asked for (1 when it is not a whole number >= 1)."""
    text = params.get("page", "1")
    return int(text) if text.isdigit() and 0 < len(text) < 9 and int(text) > 0 else 1


@dataclass(slots=True)
class Page:
    """One page of a run's matching results, decoded."""

    results: list[tuple[Row, CaseResult]]
    number: int
    pages: int
    matching: int  # results that pass the filters
    first: int  # 1-based position of the page's first result among them (0: none)
    tags: list[str] = field(default_factory=list)  # every tag of the run, for the filter
    attributions: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)  # statuses of the whole run


def page_of(run: RunFile, filters: Filters, number: int, size: int = PAGE_SIZE) -> Page:
    """Page ``number`` of the rows passing ``filters``, failures first, then passes and
    skips, each in file order; only that page's lines are decoded."""
    rows = [row for row in run.rows if filters.keeps(row)]
    if filters.query:
        found = run.matching(filters.query)
        rows = [row for row in rows if row.ordinal in found]
    rows.sort(key=lambda row: _ORDER[row.status])  # stable: file order within each
    pages = max(1, -(-len(rows) // size))
    number = min(number, pages)
    chosen = rows[(number - 1) * size : number * size]
    tags: set[str] = set()
    seen_tags: set[tuple[str, ...]] = set()
    attributions: set[str] = set()
    for row in run.rows:
        if row.tags not in seen_tags:  # few distinct tag sets: a set lookup per row
            seen_tags.add(row.tags)
            tags.update(row.tags)
        if row.attribution is not None:
            attributions.add(row.attribution)
    return Page(
        results=list(zip(chosen, run.results(chosen), strict=True)),
        number=number,
        pages=pages,
        matching=len(rows),
        first=(number - 1) * size + 1 if chosen else 0,
        tags=sorted(tags),
        attributions=[name for name in ATTRIBUTIONS if name in attributions],
        counts=dict(Counter(row.status for row in run.rows)),
    )


@dataclass(slots=True)
class MatrixPage:
    """One page of a run's connector matrix: its rows, each cell with the row it opens."""

    view: MatrixView
    rows: list[tuple[str, list[tuple[str, Row] | None], bool]]  # case, cells, passes
    number: int
    pages: int
    cases: int


def matrix_page(run: RunFile, number: int, size: int = MATRIX_PAGE_SIZE) -> MatrixPage | None:
    """The run's connector matrix (``None`` outside one), built by ``results.matrix`` from
    the index: a cell needs only its results' ids, connectors, runs and statuses."""
    stubs = (
        CaseResult(id=row.id, status=row.status, connector=row.connector, run=row.run)
        for row in run.rows
    )
    grid = matrix_of(stubs, header_connectors(run.header))
    if grid is None:
        return None
    bar = finite(run.summary.extra.get("min_pass_rate")) if run.summary is not None else None
    view = MatrixView(grid, matrix_pass_of(run.header), 100.0 if bar is None else bar)
    cases = list(grid.rows)
    pages = max(1, -(-len(cases) // size))
    number = min(number, pages)
    shown = []
    for case_id in cases[(number - 1) * size : number * size]:
        cells: list[tuple[str, Row] | None] = []
        for connector in grid.connectors:
            cell = grid.cell(case_id, connector)
            target = view.target(cell) if cell is not None else None
            cells.append(
                None if cell is None or target is None else (view.cell_text(cell), run.rows[target])
            )
        shown.append((case_id, cells, grid.case_passes(case_id, view.mode, view.min_pass_rate)))
    return MatrixPage(view, shown, number, pages, len(cases))

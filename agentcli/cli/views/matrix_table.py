"""The side-by-side table a connector matrix ends with: one row per case, one column per
connector (each cell its status, or under ``--runs`` its pass rate), the case's verdict by
``--matrix-pass``, and a last row of cells passed per connector.

A table wider than the terminal is shown case by case instead (one line per cell), so a
narrow terminal or many connectors never wrap a row into noise. A long suite shows the
cases that did not pass everywhere first, up to ``MAX_ROWS``, and counts the rest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.text import Text

from agentcli.cli.views.text import STATUS_STYLES, Block
from agentcli.words import counted

if TYPE_CHECKING:
    from agentcli.eval.results.matrix import Matrix, MatrixCell, MatrixPass

__all__ = ["MAX_ROWS", "MatrixTable"]

MAX_ROWS = 30  # cases shown; the others are counted
_ID_WIDTH = 24  # longest case id shown whole
_NAME_WIDTH = 20  # longest connector name shown whole
_GAP = "  "
_MODE_WORDS = {"all": "passes on every connector", "any": "passes on any connector"}


@dataclass(slots=True)
class MatrixTable(Block):
    """The matrix of a run, ``width`` columns wide at most."""

    grid: Matrix
    mode: MatrixPass = "all"
    min_pass_rate: float = 100.0
    width: int = 80

    def lines(self) -> list[Text]:
        """The title, then the table (or, when it is too wide, the cases one by one)."""
        grid = self.grid
        title = f"  Matrix: {_cases(len(grid.rows))} × {counted(len(grid.connectors), 'connector')}"
        rule = f"(a case {_MODE_WORDS[self.mode]})"
        shown, passing, more = self._shown_rows()
        table = self._table(shown)
        fits = all(cell_len(line.plain) <= self.width for line in table)
        lines = [Text("")]
        if cell_len(title) + 1 + cell_len(rule) <= self.width:
            lines.append(Text(f"{title} {rule}", style="bold"))
        else:  # a narrow terminal: the rule on a line of its own
            lines += [Text(title, style="bold"), Text(f"  {rule}", style="bold")]
        lines.extend(table if fits else self._listing(shown))
        if more:
            lines.append(Text(f"  … {_cases(more, 'more ')} with a cell that did not pass:"
                              " see -o report.html", style="bright_black"))  # fmt: skip
        if passing:
            lines.append(Text(f"  … {_cases(passing, 'more ')} passed on every connector",
                              style="bright_black"))  # fmt: skip
        return lines

    # -- what is shown ---------------------------------------------------------------

    def _threshold(self) -> float:
        return self.grid.threshold(self.min_pass_rate)

    def _shown_rows(self) -> tuple[list[str], int, int]:
        """The case ids shown, how many cases that passed everywhere are left out, and how
        many others: all of them when they fit, else those with a cell that did not pass."""
        ids = list(self.grid.rows)
        if len(ids) <= MAX_ROWS:
            return ids, 0, 0
        threshold = self._threshold()
        mixed = [
            case_id
            for case_id, cells in self.grid.rows.items()
            if not all(cell.passes(threshold) for cell in cells.values())
        ]
        return mixed[:MAX_ROWS], len(ids) - len(mixed), max(0, len(mixed) - MAX_ROWS)

    def _cell(self, cell: MatrixCell | None) -> tuple[str, str]:
        """A cell's text and style: its status, or under ``--runs`` ✓/✗, rate and counts."""
        if cell is None:
            return "-", "bright_black"
        threshold = self._threshold()
        status = cell.status(threshold)
        word, style = STATUS_STYLES[status]
        if self.grid.runs_per_case <= 1 or cell.runs == 0:
            return word, style
        rate = cell.rate() or 0.0
        mark = "✓" if cell.passes(threshold) else "✗"
        return f"{mark} {rate:.0f}% ({cell.passed}/{cell.runs})", style

    def _verdict(self, case_id: str) -> tuple[str, str]:
        """The case's verdict under ``--matrix-pass``."""
        passed = self.grid.case_passes(case_id, self.mode, self.min_pass_rate)
        return STATUS_STYLES["passed" if passed else "failed"]

    def _totals(self) -> list[str]:
        """Cells passed per connector (``passed/ran``), then the cases that passed."""
        figures = self.grid.by_connector(self.min_pass_rate)
        totals = [f"{f['passed']}/{f['cases']}" for f in figures.values()]
        passed = self.grid.passed_cases(self.mode, self.min_pass_rate)
        return [*totals, f"{passed}/{len(self.grid.rows)}"]

    # -- the table -------------------------------------------------------------------

    def _table(self, ids: list[str]) -> list[Text]:
        """Header, one row per case, the totals row: columns padded to their widest."""
        grid = self.grid
        head = ["Case", *(_fit(name, _NAME_WIDTH) for name in grid.connectors), "Verdict"]
        rows: list[list[tuple[str, str]]] = []
        for case_id in ids:
            cells = [self._cell(grid.cell(case_id, name)) for name in grid.connectors]
            rows.append([(_fit(case_id, _ID_WIDTH), "white"), *cells, self._verdict(case_id)])
        rows.append([("Passed", "bold"), *((text, "bold") for text in self._totals())])
        widths = [
            max(cell_len(head[i]), *(cell_len(row[i][0]) for row in rows)) for i in range(len(head))
        ]
        lines = [_row([(text, "bold") for text in head], widths)]
        lines.extend(_row(row, widths) for row in rows)
        return lines

    def _listing(self, ids: list[str]) -> list[Text]:
        """The narrow form: each case and its verdict, then one line per connector."""
        grid = self.grid
        name_width = max(cell_len(_fit(name, _NAME_WIDTH)) for name in grid.connectors)
        lines: list[Text] = []
        for case_id in ids:
            word, style = self._verdict(case_id)
            lines.append(Text.assemble(f"  [{case_id}] ", (word, style)))
            for name in grid.connectors:
                text, cell_style = self._cell(grid.cell(case_id, name))
                label = _pad(_fit(name, _NAME_WIDTH), name_width)
                lines.append(Text.assemble(f"    {label}  ", (text, cell_style)))
        totals = self._totals()
        lines.append(Text("  Passed:", style="bold"))
        for name, total in zip(grid.connectors, totals, strict=False):
            lines.append(Text(f"    {_pad(_fit(name, _NAME_WIDTH), name_width)}  {total}"))
        lines.append(Text(f"    {_pad('Verdict', name_width)}  {totals[-1]}"))
        return lines


def _cases(count: int, more: str = "") -> str:
    """``1 test case``, ``3 test cases`` (``3 more test cases``)."""
    return f"{count} {more}test case" + ("" if count == 1 else "s")


def _row(cells: list[tuple[str, str]], widths: list[int]) -> Text:
    """One line of the table: its cells padded to ``widths`` (the last one not)."""
    parts: list[tuple[str, str]] = [(_GAP, "")]
    for index, (text, style) in enumerate(cells):
        last = index == len(cells) - 1
        parts.append((text if last else _pad(text, widths[index]), style))
        if not last:
            parts.append((_GAP, ""))
    return Text.assemble(*parts)


def _pad(text: str, width: int) -> str:
    """``text`` padded with spaces to ``width`` terminal cells."""
    return text + " " * max(0, width - cell_len(text))


def _fit(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters with an ellipsis."""
    return text if len(text) <= width else text[: width - 1] + "…"

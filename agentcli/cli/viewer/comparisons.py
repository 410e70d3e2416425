"""The compare page's data: ``agent diff``'s ``RunDiff`` of two results files, computed by
``eval.compare`` as the command computes it, and kept while neither file changes."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from agentcli.eval.compare.compute import diff_runs
from agentcli.eval.compare.model import CHANGE_KINDS, KIND_TITLES, CaseChange, RunDiff
from agentcli.eval.compare.sources import source_of
from agentcli.eval.results.reader import read_results

from .catalog import Catalog
from .runfile import FileKey, RunFile

__all__ = ["Comparison", "Comparisons", "SHOWN_PER_KIND"]

SHOWN_PER_KIND = 200  # cases listed per kind; the rest are counted
_KEPT = 4  # comparisons kept


@dataclass(slots=True)
class Comparison:
    """Two runs compared, with where each case id is in each file (for links)."""

    base: str
    new: str
    diff: RunDiff
    base_rows: dict[str, int]  # cell label -> ordinal of its first result
    new_rows: dict[str, int]

    def sections(self) -> list[tuple[str, str, list[CaseChange], int]]:
        """``(kind, title, cases shown, how many)`` per kind with cases, passing last."""
        sections: list[tuple[str, str, list[CaseChange], int]] = []
        for kind in CHANGE_KINDS:
            cases = self.diff.of_kind(kind)
            if cases:
                sections.append((kind, KIND_TITLES[kind], cases[:SHOWN_PER_KIND], len(cases)))
        return sections


class Comparisons:
    """Comparisons of files of one catalog, cached by both files' keys (inode, mtime, size)."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self._kept: dict[tuple[str, FileKey, str, FileKey], Comparison] = {}
        self._lock = threading.Lock()

    def compare(self, base: str, new: str) -> Comparison:
        """``base`` against ``new`` (names under the catalog's folder; ``NotFound`` else)."""
        before, after = self.catalog.open(base), self.catalog.open(new)
        key = (base, before.key, new, after.key)
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None:
                return kept
            base_read, new_read = read_results(before.path), read_results(after.path)
            diff = diff_runs(
                base_read.results,
                new_read.results,
                base_source=source_of(base_read, base),
                new_source=source_of(new_read, new),
            )
            comparison = Comparison(base, new, diff, _first_rows(before), _first_rows(after))
            if len(self._kept) >= _KEPT:
                self._kept.pop(next(iter(self._kept)))
            self._kept[key] = comparison
            return comparison


def _first_rows(run: RunFile) -> dict[str, int]:
    """Each cell label's first result in ``run``."""
    first: dict[str, int] = {}
    for row in run.rows:
        first.setdefault(row.label, row.ordinal)
    return first

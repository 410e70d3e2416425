"""The hostile corpus (``corpus.py``) run through the real CLI: for every entry, load + run
with every writer, ``report``/``extract``/``merge``/``--resume`` on what was written; 0
internal errors, 0 hangs, 0 lost results. The entries run in parallel (one worker per
core) before the first test; each test then shows one entry's problems.

``python -m tests.hostile`` runs the same and prints the failures grouped by issue item."""

from __future__ import annotations

import os
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from .corpus import ENTRIES, Entry
from .harness import Problems, run_entry

BY_NAME = {entry.name: entry for entry in ENTRIES}


def run_corpus(
    entries: list[Entry], folder: Path, workers: int | None = None
) -> dict[str, tuple[Problems, float]]:
    """Every entry's problems and seconds (run in ``folder``, ``workers`` at a time)."""

    def run(entry: Entry) -> tuple[Problems, float]:
        started = time.monotonic()
        try:
            problems = run_entry(entry, folder / f"{ENTRIES.index(entry):03d}")
        except Exception as error:  # a harness bug must show as this entry, not stop the rest
            problems = Problems([f"harness error: {type(error).__name__}: {error}"])
        return problems, time.monotonic() - started

    with ThreadPoolExecutor(max_workers=workers or max(2, os.cpu_count() or 2)) as pool:
        return dict(zip((e.name for e in entries), pool.map(run, entries), strict=True))


@pytest.fixture(scope="module")
def outcomes(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """The problems of the entries this session selected, run all at once."""
    selected = [
        BY_NAME[item.callspec.params["name"]]
        for item in request.session.items
        if item.module is request.module and hasattr(item, "callspec")
    ]
    return run_corpus(selected, tmp_path_factory.mktemp("hostile"))


def test_corpus_size() -> None:
    """At least 100 entries, of every kind, with unique names."""
    kinds = Counter(entry.kind for entry in ENTRIES)
    assert len(ENTRIES) >= 100 and set(kinds) == {"cases", "results", "package"}, kinds
    assert len(BY_NAME) == len(ENTRIES), "duplicate entry names"


@pytest.mark.parametrize("name", list(BY_NAME))
def test_entry(name: str, outcomes: dict[str, tuple[Problems, float]]) -> None:
    entry = BY_NAME[name]
    problems, _ = outcomes[name]
    assert not problems, f"[issue 13 item {entry.item}] {entry.why}:\n  " + "\n  ".join(problems)


def main() -> int:
    """Run the corpus; print each failing entry with its reasons, grouped by item."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="hostile-") as folder:
        found = run_corpus(ENTRIES, Path(folder))
    failing = [e for e in ENTRIES if found[e.name][0]]
    for item in sorted({e.item for e in failing}):
        print(f"\n== issue 13 item {item or '(general)'}")
        for entry in (e for e in failing if e.item == item):
            print(f"- {entry.name} ({entry.kind}): {entry.why}")
            for problem in found[entry.name][0]:
                print(f"    {problem}")
    costly = sorted(ENTRIES, key=lambda e: -found[e.name][0].cpu)[:10]
    print(
        "\ncostliest (CPU s): " + ", ".join(f"{e.name} {found[e.name][0].cpu:.1f}" for e in costly)
    )
    seconds = time.monotonic() - started
    cpu = sum(problems.cpu for problems, _ in found.values())
    print(
        f"\n{len(ENTRIES)} entries, {len(failing)} failing; {seconds:.0f}s wall, "
        f"{cpu:.0f} CPU seconds in commands that did not hang"
    )
    return 1 if failing else 0

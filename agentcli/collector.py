"""The garbage collector around ``agent eval``: off while the command starts, set aside
for what was loaded and collecting less often while the cases run.

Almost everything made before the first case (modules, the package, the cases) lives as
long as the run, so every collection then only walks it again: ~15 ms of a W2 start
(bench/latency.py). During the run each case's objects live as long as its model call,
and a young-generation collection every 700 new objects walks the cases in flight over
and over: collecting every ``RUN_THRESHOLD`` instead takes ~60 µs of CPU off each case
(bench/overhead.py, bench/latency.py). Per-case objects hold no reference cycles, so
memory does not wait on the collector either way. A host that tuned the collector itself
(froze objects, changed the thresholds, turned it off) keeps its settings.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["RUN_THRESHOLD", "pause", "resume", "while_running"]

RUN_THRESHOLD = 10_000  # new objects between young collections while cases run (default 700)

_paused = False  # whether ``pause`` turned the collector off (and ``resume`` owes it back)


def pause() -> None:
    """Turn the collector off until ``resume`` (the ``agent eval`` command's start-up)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> None:
    """Turn the collector back on if ``pause`` turned it off; else nothing."""
    global _paused
    if _paused:
        _paused = False
        gc.enable()


@contextmanager
def while_running() -> Iterator[None]:
    """Around a run of cases: what is loaded is frozen (the collector's passes skip it)
    and young collections come every ``RUN_THRESHOLD`` objects; both undone after, so
    in-process callers keep the collector as they had it."""
    own = gc.get_freeze_count() == 0  # a host that froze objects itself made its own choice
    threshold = gc.get_threshold()
    if own:
        gc.freeze()
    resume()
    tune = own and threshold[0] < RUN_THRESHOLD
    if tune:
        gc.set_threshold(RUN_THRESHOLD, *threshold[1:])
    try:
        yield
    finally:
        if tune and gc.get_threshold()[0] == RUN_THRESHOLD:  # unless the run's code changed it
            gc.set_threshold(*threshold)
        if own:
            gc.unfreeze()

"""How much cyclic garbage a piece of work leaves for the collector (reference cycles per
case would make each case's objects wait for the collector's full passes)."""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any


def cyclic_garbage(work: Callable[[], Any], *, of: str | None = None) -> int:
    """The number of objects only the collector could free after ``work()`` (only those
    whose class comes from a module of package ``of``, when given)."""
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        work()
        gc.collect()
        if of is None:
            return len(gc.garbage)
        prefix = of + "."
        return sum(1 for item in gc.garbage if type(item).__module__.startswith(prefix))
    finally:
        gc.set_debug(0)
        gc.garbage.clear()

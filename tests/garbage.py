"""How much cyclic garbage a piece of work leaves for the collector (reference cycles per
case would make each case's objects wait for the collector's full passes)."""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any


def cyclic_garbage(work: Callable[[], Any]) -> int:
    """The number of objects only the collector could free after ``work()``."""
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        work()
        gc.collect()
        return len(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()

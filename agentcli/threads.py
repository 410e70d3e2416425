"""User code that may block (sync hooks, sync tools) runs in a thread of its own."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["in_own_thread"]


async def in_own_thread(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run ``function`` in a new daemon thread and await its result. Not the shared pool
    (``asyncio.to_thread``, 6 threads on 2 cores): a sync hook or tool that waits for a
    sub-call whose own sync code needs a thread would exhaust it, and concurrent cases would
    queue behind it; a daemon thread abandoned by an abort never delays the exit."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    context = contextvars.copy_context()

    def settle(outcome: Callable[[Any], None], value: Any) -> None:
        if not future.done():
            outcome(value)

    def target() -> None:
        try:
            value = context.run(function, *args, **kwargs)
        except Exception as error:
            deliver: tuple[Callable[[Any], None], Any] = (future.set_exception, error)
        except BaseException as error:  # SystemExit in user code is a failure, not an exit
            deliver = (future.set_exception, RuntimeError(f"{type(error).__name__}: {error}"))
        else:
            deliver = (future.set_result, value)
        try:
            loop.call_soon_threadsafe(settle, *deliver)
        except RuntimeError:  # the loop is gone: nobody waits for this result any more
            pass

    name = getattr(function, "__name__", "hook")
    threading.Thread(target=target, name=f"agentcli-{name}", daemon=True).start()
    return await future

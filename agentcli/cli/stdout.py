"""Stdout for agentcli's own lines alone (``--json``): a stream that only the view writes to."""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator
from typing import TextIO

__all__ = ["private_stdout"]


@contextlib.contextmanager
def private_stdout() -> Iterator[TextIO]:
    """A stream onto the real stdout, while file descriptor 1 points at stderr: whatever
    else writes to fd 1 (native code, child processes that inherit it, a thread no case
    owns) lands on stderr, and the NDJSON stream stays ours. In-process, where stdout has
    no file descriptor (a test runner's buffer), stdout itself is returned."""
    try:
        stdout_fd, stderr_fd = sys.stdout.fileno(), sys.stderr.fileno()
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        yield sys.stdout
        return
    sys.stdout.flush()
    saved = os.dup(stdout_fd)
    # A lone surrogate from a model or a case file is written as its JSON escape.
    events = os.fdopen(os.dup(saved), "w", encoding="utf-8", errors="backslashreplace")
    os.dup2(stderr_fd, stdout_fd)
    try:
        yield events
    finally:
        with contextlib.suppress(OSError, ValueError):
            events.flush()
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
        os.dup2(saved, stdout_fd)
        os.close(saved)
        with contextlib.suppress(OSError, ValueError):
            events.close()

"""How a command that was interrupted leaves.

After Ctrl-C, once everything finished is written, the process ends *by* SIGINT (the
default handler restored, the signal raised again), as a well-behaved Unix program does:
a shell sees exit status 130 and stops a loop or script that ran it, and Python's
``subprocess`` sees ``-2``. After SIGTERM it exits with status 130.
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
from types import FrameType
from typing import NoReturn

__all__ = ["EXIT_INTERRUPTED", "leave_interrupted", "note_interrupt"]

EXIT_INTERRUPTED = 130
_received: list[int] = []


def note_interrupt(signum: int) -> None:
    """Remember the signal that stopped the command."""
    _received.append(signum)


def leave_interrupted() -> NoReturn:
    """End the process the way the noted signal calls for (SIGINT when none was noted:
    a KeyboardInterrupt is Ctrl-C)."""
    signum = _received[0] if _received else signal.SIGINT
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    if signum == signal.SIGINT:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    _leave_on_a_further_signal()
    sys.exit(EXIT_INTERRUPTED)


def _leave_on_a_further_signal() -> None:
    """Everything is written: a further SIGINT or SIGTERM while the interpreter winds down
    leaves at once, with 130 all the same. Its last steps (after the ``atexit`` calls) put
    the default handlers back, and SIGTERM's would end the process by the signal: by then
    the signals are ignored."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _exit_interrupted)
    atexit.register(_ignore_signals)


def _exit_interrupted(signum: int, frame: FrameType | None) -> None:
    os._exit(EXIT_INTERRUPTED)


def _ignore_signals() -> None:
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_IGN)

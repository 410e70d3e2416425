"""Loading user Python files (hooks, tools, python: models, eval scripts) from a package's
``src/`` folder, each under a module name unique to its path so two packages' ``tools.py``
never collide and a file reached by several routes is executed once.

Every user module is imported here, and only here, so one place decides what importing
user code may do to us: whatever it raises (``sys.exit()`` included) becomes a
``PackageError`` naming the file, and Ctrl-C or SIGTERM stops an import that blocks."""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType, ModuleType

from agentcli.errors import PackageError

__all__ = ["load_source_module"]

# what signal.getsignal returns: a Python handler, SIG_DFL / SIG_IGN, or None (set outside Python)
_Handler = Callable[[int, FrameType | None], object] | int | None

_locks: dict[str, threading.RLock] = {}
_locks_guard = threading.Lock()


class _ImportInterrupted(Exception):
    """A signal arrived while an event loop that handles it was blocked in an import."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)


def load_source_module(path: Path, dotted: str) -> ModuleType:
    """Import ``path`` (named ``dotted`` under ``src/``) once; syntax and import errors, and
    ``SystemExit`` or any other exception at import, become a ``PackageError`` naming the
    file (and line). One import per file at a time: another thread asking meanwhile waits
    for it instead of seeing a half-run module."""
    resolved = path.resolve()
    digest = hashlib.sha1(str(resolved).encode()).hexdigest()[:12]
    unique = f"_agentcli_src_{digest}_{dotted.replace('.', '_').replace('-', '_')}"
    with _interruptible(), _lock_for(unique):
        loaded = sys.modules.get(unique)
        if loaded is not None:
            return loaded
        return _execute(unique, resolved)


def _execute(unique: str, resolved: Path) -> ModuleType:
    """Run the module's code under ``unique``; a failure leaves no half-made module behind."""
    spec = importlib.util.spec_from_file_location(unique, resolved)
    assert spec is not None and spec.loader is not None  # a .py path always has a loader
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[unique] = loaded
    try:
        spec.loader.exec_module(loaded)
    except BaseException as error:
        sys.modules.pop(unique, None)
        if isinstance(error, KeyboardInterrupt | GeneratorExit):
            raise
        raise _import_error(error, resolved) from (
            error if not isinstance(error, SyntaxError | _ImportInterrupted | SystemExit) else None
        )
    return loaded


def _import_error(error: BaseException, resolved: Path) -> PackageError:
    """The ``PackageError`` for what importing ``resolved`` raised."""
    if isinstance(error, SyntaxError):
        return PackageError(f"syntax error: {error.msg}", path=str(resolved), line=error.lineno)
    if isinstance(error, _ImportInterrupted):
        return PackageError(f"importing was interrupted by {error}", path=str(resolved))
    if isinstance(error, SystemExit):
        return PackageError(
            f"importing failed: the module called sys.exit({error.code!r})",
            path=str(resolved),
            line=_line_in(error, resolved),
            hint="a module of src/ must not exit the process; raise an exception instead",
        )
    return PackageError(
        f"importing failed: {type(error).__name__}: {error}",
        path=str(resolved),
        line=_line_in(error, resolved),
    )


def _line_in(error: BaseException, file: Path) -> int | None:
    """The last line of ``file`` in the error's traceback (None when it is not there)."""
    line = None
    trace = error.__traceback__
    while trace is not None:
        if Path(trace.tb_frame.f_code.co_filename) == file:
            line = trace.tb_lineno
        trace = trace.tb_next
    return line


def _lock_for(unique: str) -> threading.RLock:
    """The lock of one module name (re-entrant: a module may import itself, as in Python)."""
    with _locks_guard:
        return _locks.setdefault(unique, threading.RLock())


@contextlib.contextmanager
def _interruptible() -> Iterator[None]:
    """Let SIGINT and SIGTERM stop a blocking import on the main thread.

    Imports run synchronously on the event loop's thread, where neither signal would act
    until the import returns: ``asyncio.run`` only cancels its task on the first Ctrl-C,
    and handlers added with ``loop.add_signal_handler`` run only when the loop runs again.
    So for the import's duration the signal raises: ``KeyboardInterrupt`` (the command
    then leaves as interrupted) or, where the loop handles the signal itself (an eval run,
    which still writes its summary), an error that fails just this import."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signals reach the main thread only; the loop there handles them
        return
    previous: dict[signal.Signals, _Handler] = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        current = signal.getsignal(signum)
        if current in (signal.SIG_IGN, None):
            continue  # ignored on purpose (or set outside Python): leave it so
        previous[signum] = current
        signal.signal(signum, _raising(loop_handles=_is_loop_handler(current)))
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _raising(*, loop_handles: bool) -> Callable[[int, FrameType | None], None]:
    """A signal handler that stops the import in progress."""

    def handler(signum: int, frame: FrameType | None) -> None:
        if loop_handles:
            raise _ImportInterrupted(signum)  # the loop reads the signal from its wakeup fd
        from agentcli.interrupts import note_interrupt

        note_interrupt(signum)
        raise KeyboardInterrupt

    return handler


def _is_loop_handler(handler: _Handler) -> bool:
    """Whether ``handler`` is the stand-in asyncio installs for ``loop.add_signal_handler``
    (the real handler is called by the loop, from the signal number it writes to a pipe)."""
    unix_events = sys.modules.get("asyncio.unix_events")
    return handler is getattr(unix_events, "_sighandler_noop", object())

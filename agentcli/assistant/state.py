"""The state folder: where a run keeps what outlives one request — the SQLite store behind
``ctx.memory.user/team/chat`` of every assistant the run reaches (and, later, the package's
data models).

Three kinds, as ``agent eval --state`` names them::

    fresh        a new, empty folder per run, in the temp dir, removed when the run ends
    persistent   the user's store, $AGENTCLI_HOME (default ~/.local/share/agentcli)
    DIR          a folder of your choice, created if missing and kept (reused across runs)

``agent run`` and ``agent chat`` always use the persistent one; ``agent eval`` a fresh one
unless told otherwise, so two runs of the same cases cannot differ by what an earlier run
left behind.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Literal

from agentcli.errors import ConfigError
from agentcli.home import data_home

__all__ = [
    "FRESH",
    "PERSISTENT",
    "StateDir",
    "StateKind",
    "data_home",
    "open_state",
    "terminate_as_interrupt",
]

StateKind = Literal["fresh", "persistent", "dir"]
FRESH, PERSISTENT = "fresh", "persistent"  # the two words of --state that are not folders
MEMORY_FILE = "memory.sqlite3"
_FRESH_PREFIX = "agentcli-state-"


@dataclass(frozen=True, slots=True)
class StateDir:
    """One state folder and what it holds; ``kind`` says whose it is and whether it goes."""

    path: Path
    kind: StateKind = "persistent"

    @property
    def memory_path(self) -> Path:
        """The SQLite file of the user/team/chat memory namespaces."""
        return self.path / MEMORY_FILE

    @property
    def label(self) -> str:
        """How the results header records it: ``fresh``, ``persistent`` or the folder."""
        return str(self.path) if self.kind == "dir" else self.kind

    @classmethod
    def persistent(cls) -> StateDir:
        """The user's store (its folder is created when memory is first written)."""
        return cls(data_home(), "persistent")

    @classmethod
    def fresh(cls) -> StateDir:
        """A new, empty folder in the temp dir; ``remove`` deletes it."""
        try:
            return cls(Path(tempfile.mkdtemp(prefix=_FRESH_PREFIX)), "fresh")
        except OSError as exc:
            raise ConfigError(
                f"cannot create a fresh state folder in {tempfile.gettempdir()}: {exc}",
                hint="set TMPDIR to a writable folder, or pass --state DIR",
            ) from exc

    @classmethod
    def folder(cls, path: Path) -> StateDir:
        """``path`` as a kept state folder: created if missing, and writable."""
        where = f"--state {path}"
        if path.exists() and not path.is_dir():
            raise ConfigError(
                f"{where}: not a folder",
                hint="give a folder for the state (created if missing), 'fresh' or 'persistent'",
            )
        try:
            path.mkdir(parents=True, exist_ok=True)
            # A probe file, not os.access: the only test that holds for ACLs, read-only
            # mounts and root alike.
            with tempfile.TemporaryFile(dir=path):
                pass
        except OSError as exc:
            raise ConfigError(
                f"{where}: cannot write there ({exc.strerror or exc})",
                hint="give a writable folder, or leave --state out for a fresh one per run",
            ) from exc
        return cls(path.resolve(), "dir")

    @classmethod
    def parse(cls, text: str, *, cwd: Path) -> StateDir:
        """``--state``'s value: ``fresh``, ``persistent`` or a folder (relative to ``cwd``);
        ``fresh`` creates the folder, so the caller must ``remove`` it."""
        value = text.strip()
        if not value:
            raise ConfigError("--state: empty value", hint="give 'fresh', 'persistent' or a folder")
        if value == FRESH:
            return cls.fresh()
        if value == PERSISTENT:
            return cls.persistent()
        return cls.folder(cwd / Path(value).expanduser())

    def remove(self) -> None:
        """Delete a fresh folder and everything in it; a kept folder stays as it is."""
        if self.kind == "fresh":
            shutil.rmtree(self.path, ignore_errors=True)


@contextlib.contextmanager
def open_state(text: str, *, cwd: Path) -> Iterator[StateDir]:
    """The state folder ``--state`` names for the block; a fresh one is removed after it,
    however the block ends (SIGTERM included, see ``terminate_as_interrupt``)."""
    state = StateDir.parse(text, cwd=cwd)
    try:
        with terminate_as_interrupt() if state.kind == "fresh" else contextlib.nullcontext():
            yield state
    finally:
        state.remove()


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """Inside the block SIGTERM unwinds like Ctrl-C (``KeyboardInterrupt``, exit 130), so
    clean-up in ``finally`` runs; the default would end the process on the spot."""
    from agentcli.interrupts import note_interrupt

    def interrupt(signum: int, frame: FrameType | None) -> None:
        note_interrupt(signum)
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread: signals are not ours to take
        yield
        return
    try:
        yield
    finally:
        # Put back only its own: a stopping run keeps SIGTERM counted until the process ends
        # (agentcli.eval.run.session), and the default would end it by SIGTERM, not with 130.
        if signal.getsignal(signal.SIGTERM) is interrupt:
            signal.signal(signal.SIGTERM, previous)

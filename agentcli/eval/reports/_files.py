"""Putting results on disk without ever losing them: explaining OS failures, checking an
output before a run, atomic replacement, and text every string survives.

- An OS failure becomes "what is wrong" and "what to do" (``explain``).
- ``check_target`` refuses an output that *is* one of the run's inputs (same inode, also
  through a symlink, another relative path or a folder not created yet: ``x/../cases.jsonl``)
  and an existing file that is not a report of that format (unless ``force``), then proves
  the folder takes a file (``probe_writable``).
- ``atomic_write_text`` writes beside the target and renames over it: the old file stays
  whole until the new one is complete.
- JSON text goes to disk with ``errors="backslashreplace"``: a lone surrogate (valid JSON
  ``"\\ud800"``) becomes exactly its JSON escape and reads back as the same string; text
  formats replace it with U+FFFD (``scrub_surrogates``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
from collections.abc import Callable, Iterable
from pathlib import Path

from agentcli.errors import ConfigError, OutputClosed, OutputError

# A file a writer replaces, with the check that its first bytes are a report of its format.
Target = tuple[Path, Callable[[str], bool]]

__all__ = [
    "JSON_ERRORS",
    "Target",
    "atomic_write_text",
    "check_target",
    "explain",
    "fsync_folder",
    "landing",
    "probe_writable",
    "real_target",
    "same_file",
    "scrub_surrogates",
    "temp_beside",
    "temp_target",
    "write_failed",
]

JSON_ERRORS = "backslashreplace"  # a lone surrogate -> its JSON escape, which round-trips
_SURROGATES = re.compile("[\ud800-\udfff]")
_HEAD_BYTES = 8192  # enough to see any format's signature

# What an errno means for an output path, and what the user can do about it.
_REASONS: dict[int, tuple[str, str]] = {
    errno.ENOTDIR: ("a part of the path is a file, not a folder", "choose a path in a folder"),
    # mkdir(parents=True) meeting a file where a folder should be
    errno.EEXIST: ("a part of the path is a file, not a folder", "choose a path in a folder"),
    errno.EISDIR: ("it is a folder", "name a file, e.g. -o results.jsonl"),
    errno.EACCES: ("permission denied", "choose a folder you can write to"),
    errno.EPERM: ("permission denied", "choose a folder you can write to"),
    errno.EROFS: ("the file system is read-only", "choose a writable folder"),
    errno.ENOSPC: ("no space left on the device", "free some space or write elsewhere"),
    errno.EDQUOT: ("disk quota exceeded", "free some space or write elsewhere"),
    errno.ENAMETOOLONG: ("the file name is too long", "choose a shorter name"),
    errno.ENOENT: ("a folder on the path does not exist", "create it or choose another path"),
    errno.EIO: ("an I/O error on the device", "check the disk, or write elsewhere"),
}


def explain(exc: OSError) -> tuple[str, str]:
    """``(what is wrong, what to do)`` for an OS failure on an output path."""
    if exc.errno in _REASONS:
        return _REASONS[exc.errno]
    return (exc.strerror or str(exc), "choose another output path")


def write_failed(path: Path, exc: OSError, *, saved: str) -> OutputError:
    """The error for a write that failed after work began; ``saved`` says what is safe
    (stdout closed by its reader: ``OutputClosed``, which ends the command quietly)."""
    if exc.errno == errno.EPIPE and str(path) == "-":
        return OutputClosed(f"stdout was closed; {saved}")
    what, todo = explain(exc)
    return OutputError(f"cannot write {path}: {what}; {saved}", hint=todo)


def scrub_surrogates(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (for non-JSON text formats)."""
    return _SURROGATES.sub("\ufffd", text)


def temp_beside(path: Path) -> Path:
    """A hidden, unique temporary name in ``path``'s folder (same file system: rename works)."""
    return path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")


_TEMP_NAME = re.compile(r"\.(?P<name>.+)\.\d+\.[0-9a-f]+\.tmp")


def temp_target(name: str) -> str | None:
    """The file name a ``temp_beside`` name is the temporary of (None for another name)."""
    found = _TEMP_NAME.fullmatch(name)
    return found["name"] if found is not None else None


def real_target(path: Path) -> Path:
    """The file a write to ``path`` should replace: through a symlink, its target."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def landing(path: Path) -> Path:
    """The file a write to ``path`` lands on once its missing folders are created: the
    symlinks of the part that exists followed, and a ``..`` after a folder that does not
    exist yet undone by name (``x/../cases.jsonl`` is ``cases.jsonl``: ``x`` will be a
    plain folder). The kernel cannot say this before the folders exist, so ``stat`` fails."""
    return Path(os.path.realpath(path))


def same_file(a: Path, b: Path) -> bool:
    """True when both name one existing file (same device and inode), also when a path
    goes through folders that do not exist yet (``x/../cases.jsonl``)."""
    try:
        return os.path.samefile(a, b)
    except FileNotFoundError:
        # A missing folder on the way: compare where the writes would land (a folder
        # that is a file, ENOTDIR, lands nowhere: creating the folders reports it).
        try:
            return os.path.samefile(landing(a), landing(b))
        except (OSError, ValueError):
            return False
    except (OSError, ValueError):
        return False


def probe_writable(path: Path) -> None:
    """Prove a file can be created and written beside ``path`` (creating its folders), or
    raise a ``ConfigError`` saying what is wrong: before a run, this is bad input (exit 2)."""
    probe: Path | None = None
    try:
        if path.is_dir():  # also ".", which has no name to put a temporary beside
            raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
        probe = temp_beside(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with probe.open("xb") as handle:
            handle.write(b"\n" * 512)  # a full disk fails here, not only at the end of the run
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as exc:
        what, todo = explain(exc)
        raise ConfigError(f"cannot write {path}: {what}", hint=todo) from None
    finally:
        if probe is not None:
            _discard(probe)


def _head(path: Path) -> str | None:
    """The first bytes of an existing file as text (``None`` when unreadable)."""
    try:
        with path.open("rb") as handle:
            data = handle.read(_HEAD_BYTES)
    except OSError:
        return None
    return data.decode("utf-8", errors="replace").lstrip("\ufeff")


def check_target(
    path: Path,
    *,
    recognises: Callable[[str], bool],
    inputs: Iterable[Path] = (),
    force: bool = False,
    flag: str = "-o",
) -> None:
    """Refuse an output that is one of ``inputs`` or an existing file this format did not
    write (``recognises`` sees its first bytes); ``force`` allows the latter only."""
    for source in inputs:
        if same_file(path, source):
            raise ConfigError(
                f"{flag} {path} is the input file {source}: writing it would destroy the input",
                hint="choose another output path",
            )
    # What is there now where the write lands, also through folders not created yet
    # (``x/../notes.txt`` is ``notes.txt``, which must not be replaced unchecked).
    where = landing(path)
    if where.exists() and not where.is_file() and not where.is_dir():
        # A report replaces its file by a rename: over /dev/null or a pipe that would put a
        # regular file in its place, so even --force does not.
        raise ConfigError(
            f"{flag} {path} is not a regular file (a device, pipe or socket)",
            hint="name a regular file; reports are written by replacing the file",
        )
    if not where.exists() or where.is_dir() or force:
        return
    try:
        empty = where.stat().st_size == 0
    except OSError:
        return  # probe_writable reports what is wrong with it
    head = _head(where)
    if empty or (head is not None and recognises(head)):
        return  # nothing to lose, or a report of ours: replaced, as promptfoo and inspect do
    raise ConfigError(
        f"{flag} {path} exists and is not a results file of this format: not overwriting it",
        hint="choose another path, or pass --force to replace it",
    )


def atomic_write_text(
    path: Path, text: str, *, errors: str = "strict", saved: str = "the file was left as it was"
) -> None:
    """Write ``text`` to a temp file beside ``path`` and rename it over ``path``; the old
    file stays whole until then. A failure is an ``OutputError`` (the work is done) whose
    message ends with ``saved``: what is safe."""
    target = real_target(path)
    # Not mkstemp: its 0600 mode would leave the report unreadable to others; "x" keeps umask.
    tmp = temp_beside(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with tmp.open("x", encoding="utf-8", errors=errors, newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except OSError as exc:
        _discard(tmp)
        raise write_failed(path, exc, saved=saved) from exc


def _discard(path: Path) -> None:
    """Remove a temporary file, if it was created."""
    with contextlib.suppress(OSError):  # an unwritable folder: nothing was created
        path.unlink(missing_ok=True)


def fsync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (best effort: not every file system allows it)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):  # not every file system syncs a folder
            os.fsync(fd)
    finally:
        os.close(fd)

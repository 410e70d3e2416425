"""Confinement: every path a sandbox's file operations take stays inside its workdir.

A path is refused before anything is opened when it is empty, holds a NUL, has a ``..``
part, or is absolute and not under the workdir. It is then resolved (symlinks followed) and
refused when it lands outside. Finally it is opened one component at a time from the
workdir, each with ``O_NOFOLLOW``: a symlink put in place between the check and the open (a
directory swapped for a link to ``/``) makes the open fail instead of following it. Special
files (FIFOs, devices) are refused; reads and writes are bounded in size.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from agentcli.errors import SandboxError, SandboxPathError

__all__ = [
    "MAX_FILE_BYTES",
    "is_file",
    "list_dir",
    "read_file",
    "relative_parts",
    "resolve_inside",
    "write_file",
]

MAX_FILE_BYTES = 16 * 1024 * 1024  # what one read_file returns or one write_file writes
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def relative_parts(workdir: Path, path: str) -> list[str]:
    """The components of ``path`` below ``workdir`` (``[]`` for the workdir itself), or a
    SandboxPathError saying why it may not be used."""
    if not isinstance(path, str):
        raise SandboxPathError(f"a sandbox path must be text, got {type(path).__name__}")
    if "\0" in path:
        raise SandboxPathError(f"sandbox path {path!r} holds a NUL character")
    if not path.strip():
        raise SandboxPathError("empty sandbox path", hint='use "." for the workdir')
    pure = PurePosixPath(path)
    if ".." in pure.parts:
        raise SandboxPathError(
            f"sandbox path {path!r} has a '..' part", hint="paths are relative to the workdir"
        )
    if pure.is_absolute():
        try:
            pure = pure.relative_to(PurePosixPath(workdir))
        except ValueError:
            raise SandboxPathError(
                f"sandbox path {path!r} is outside the workspace",
                hint=f"use a path relative to the workdir ({workdir})",
            ) from None
    return [part for part in pure.parts if part not in ("", ".")]


def resolve_inside(workdir: Path, path: str) -> list[str]:
    """The components of ``path`` once its symlinks are resolved, checked to stay in the
    workdir (a link that points out is a SandboxPathError)."""
    parts = relative_parts(workdir, path)
    root = Path(os.path.realpath(workdir))
    real = Path(os.path.realpath(root.joinpath(*parts)))
    if not real.is_relative_to(root):
        raise SandboxPathError(f"sandbox path {path!r} leads outside the workspace (a symlink)")
    return list(real.relative_to(root).parts)


@contextmanager
def _directory(workdir: Path, parts: list[str], *, create: bool = False) -> Iterator[int]:
    """A descriptor of the directory ``parts`` below ``workdir``, opened link by link with
    ``O_NOFOLLOW`` (``create``: missing directories are made on the way)."""
    fd = _open_dir(os.path.realpath(workdir), None, "the workdir")
    try:
        for part in parts:
            try:
                child = _open_dir(part, fd, part)
            except FileNotFoundError:
                if not create:
                    raise
                os.mkdir(part, 0o755, dir_fd=fd)
                child = _open_dir(part, fd, part)
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def _open_dir(name: str, dir_fd: int | None, shown: str) -> int:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR):
            raise SandboxPathError(
                f"{shown!r} is not a directory of the workspace (or became a symlink)"
            ) from None
        raise


def _split(workdir: Path, path: str) -> tuple[list[str], str]:
    """The resolved directory parts and the file name of a path naming a file."""
    parts = resolve_inside(workdir, path)
    if not parts:
        raise SandboxPathError(f"sandbox path {path!r} names the workdir, not a file")
    return parts[:-1], parts[-1]


def _open_file(dir_fd: int, name: str, flags: int, path: str) -> int:
    """``name`` in ``dir_fd`` without following a link or blocking on a FIFO, checked to
    be a regular file."""
    try:
        fd = os.open(
            name, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o644, dir_fd=dir_fd
        )
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise SandboxPathError(f"sandbox path {path!r} is a symlink (not followed)") from None
        if error.errno == errno.ENXIO:
            raise SandboxPathError(f"sandbox path {path!r} is not a regular file") from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise SandboxPathError(f"sandbox path {path!r} is not a regular file")
    os.set_blocking(fd, True)
    return fd


@contextmanager
def _os_errors(path: str, missing: str) -> Iterator[None]:
    """OSErrors of one operation as SandboxErrors naming the path."""
    try:
        yield
    except FileNotFoundError:
        raise SandboxError(f"no {missing} {path!r} in the sandbox") from None
    except SandboxError:
        raise
    except OSError as error:
        raise SandboxError(f"sandbox path {path!r}: {error.strerror}") from None


def is_file(workdir: Path, path: str) -> bool:
    """Whether ``path`` names a regular file of the workspace (its links resolved inside)."""
    parts = resolve_inside(workdir, path)
    return bool(parts) and os.path.isfile(Path(os.path.realpath(workdir)).joinpath(*parts))


def read_file(workdir: Path, path: str, *, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a file in the workspace (at most ``limit``; a larger file is an error)."""
    folder, name = _split(workdir, path)
    with _os_errors(path, "file"):
        with _directory(workdir, folder) as dir_fd:
            fd = _open_file(dir_fd, name, os.O_RDONLY, path)
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(limit + 1)
    if len(data) > limit:
        raise SandboxError(f"sandbox file {path!r} is larger than {limit} bytes")
    return data


def write_file(workdir: Path, path: str, content: str | bytes) -> int:
    """Write ``content`` to a file in the workspace (parents made); the bytes written."""
    data = content.encode() if isinstance(content, str) else bytes(content)
    if len(data) > MAX_FILE_BYTES:
        raise SandboxError(f"{len(data)} bytes for {path!r}: more than {MAX_FILE_BYTES}")
    folder, name = _split(workdir, path)
    with _os_errors(path, "folder for"):
        with _directory(workdir, folder, create=True) as dir_fd:
            fd = _open_file(dir_fd, name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, path)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
    return len(data)


def list_dir(workdir: Path, path: str = ".") -> list[dict[str, object]]:
    """The entries of a workspace folder, sorted by name: ``{name, size, is_dir}`` (a
    symlink is listed as itself, not followed)."""
    parts = resolve_inside(workdir, path)
    with (
        _os_errors(path, "folder"),
        _directory(workdir, parts) as dir_fd,
        os.scandir(dir_fd) as entries,
    ):
        found = [
            {
                "name": entry.name,
                "size": entry.stat(follow_symlinks=False).st_size,
                "is_dir": entry.is_dir(follow_symlinks=False),
            }
            for entry in entries
        ]
    return sorted(found, key=lambda item: str(item["name"]))

"""The ``local`` backend: a temporary folder on this machine and commands run as plain
subprocesses in it.

A command gets a scrubbed environment (``PATH``, ``HOME`` and ``TMPDIR`` in the workspace,
``LANG``, and what the caller passes), no standard input, a session and process group of
its own, a timeout that kills the whole group (children and grandchildren with it), and
its output kept up to ``MAX_OUTPUT_BYTES`` per stream (the rest read and dropped, so the
command never blocks on a full pipe). Every wait is bounded. This backend confines file
operations, not commands: a command can read the machine as the user can; use ``bwrap``
to isolate them.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import stat
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar

from agentcli.assistant.sandbox import paths
from agentcli.assistant.sandbox.protocol import MAX_OUTPUT_BYTES, ExecResult
from agentcli.assistant.sandbox.spec import SandboxSpec
from agentcli.errors import SandboxError, SandboxExecError, SandboxTimeout

__all__ = ["DEFAULT_PATH", "LocalSandbox"]

DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
_KILL_WAIT = 5.0  # for a killed process to be reaped
_DRAIN_WAIT = 2.0  # for the pipes to close once the command has ended
_CHUNK = 64 * 1024


class LocalSandbox:
    """A workspace in a temporary folder: ``root`` holds ``work/`` (the workdir) and
    ``tmp/`` (``TMPDIR``)."""

    backend: ClassVar[str] = "local"

    def __init__(self, spec: SandboxSpec, root: Path) -> None:
        self.spec = spec
        self.root = root
        self.workdir = root / "work"
        self.tmp = root / "tmp"

    @classmethod
    def create(cls, spec: SandboxSpec, *, parent: Path | None = None) -> LocalSandbox:
        """A new workspace (under ``parent``, else the system's temporary folder), seeded
        with the spec's files."""
        root = Path(os.path.realpath(tempfile.mkdtemp(prefix="agentcli-sandbox-", dir=parent)))
        sandbox = cls(spec, root)
        try:
            sandbox.workdir.mkdir()
            sandbox.tmp.mkdir()
            for path, text in spec.files.items():
                paths.write_file(sandbox.workdir, path, text)
        except BaseException:
            sandbox.remove()
            raise
        return sandbox

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.workdir)!r})"

    # -- files ---------------------------------------------------------------------------

    async def read_file(self, path: str) -> str:
        """A file's text (UTF-8; undecodable bytes replaced)."""
        data = await asyncio.to_thread(paths.read_file, self.workdir, path)
        return data.decode("utf-8", "replace")

    async def write_file(self, path: str, content: str | bytes) -> int:
        """Write a file (its folders made); the bytes written."""
        if not isinstance(content, str | bytes):
            raise SandboxError(f"write_file content must be text, got {type(content).__name__}")
        return await asyncio.to_thread(paths.write_file, self.workdir, path, content)

    async def list_dir(self, path: str = ".") -> list[dict[str, Any]]:
        """A folder's entries: ``{name, size, is_dir}``, sorted by name."""
        return await asyncio.to_thread(paths.list_dir, self.workdir, path)

    # -- commands ------------------------------------------------------------------------

    async def exec(
        self,
        argv: list[str],
        *,
        timeout: float | str | None = None,
        env: dict[str, str] | None = None,
    ) -> str:
        """Run a command; its stdout, or SandboxExecError (status, stderr) when it fails."""
        result = await self.run(argv, timeout=timeout, env=env)
        if result.returncode != 0:
            raise SandboxExecError(result.argv, result.returncode, result.stdout, result.stderr)
        return result.stdout

    async def run(
        self,
        argv: list[str],
        *,
        timeout: float | str | None = None,
        env: dict[str, str] | None = None,
    ) -> ExecResult:
        """Run a command to its end (any exit status); SandboxTimeout past ``timeout``
        seconds (the spec's by default), its process group killed."""
        words = _argv(argv)
        limit = self.spec.timeout if timeout is None else _timeout(timeout)
        environment = self.environment(env)
        await self.ready()
        command = self.command(words, environment)
        if command is None:
            return ExecResult(words, 127, "", f"{words[0]}: command not found\n")
        process = await asyncio.create_subprocess_exec(
            *command,
            cwd=self.workdir,
            env=environment,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        out, err = _Capture(), _Capture()
        assert process.stdout is not None and process.stderr is not None
        readers = [
            asyncio.create_task(out.read(process.stdout)),
            asyncio.create_task(err.read(process.stderr)),
        ]
        timed_out = False
        try:
            async with asyncio.timeout(limit):
                await _exited(process)
        except TimeoutError:
            timed_out = True
        finally:  # also when cancelled: nothing the command started outlives it
            await _end(process, readers)
        if timed_out:
            raise SandboxTimeout(words, limit, out.text(), err.text())
        return ExecResult(
            words, process.returncode or 0, out.text(), err.text(), out.cut or err.cut
        )

    def environment(self, env: Mapping[str, str] | None) -> dict[str, str]:
        """The scrubbed environment of a command, with the caller's ``env`` over it."""
        base = {
            "PATH": DEFAULT_PATH,
            "HOME": str(self.workdir),
            "TMPDIR": str(self.tmp),
            "PWD": str(self.workdir),
            "LANG": "C.UTF-8",
        }
        for key, value in (env or {}).items():
            if not isinstance(key, str) or not key or "=" in key or not isinstance(value, str):
                raise SandboxError(f"exec env must map names to text, got {key!r}: {value!r}")
            base[key] = value
        return base

    def command(self, argv: list[str], environment: Mapping[str, str]) -> list[str] | None:
        """What to start for ``argv``: the program found on the sandbox's PATH (None when
        there is none)."""
        program = argv[0]
        if "/" in program:
            return argv
        found = shutil.which(program, path=environment.get("PATH", DEFAULT_PATH))
        return None if found is None else [found, *argv[1:]]

    async def ready(self) -> None:
        """Raise SandboxError when this backend cannot run commands here (local always can)."""

    def remove(self) -> None:
        """Delete the workspace, folders a command made read-only included (idempotent)."""
        if self.root.exists():
            _remove_tree(self.root)


class _Capture:
    """One output stream, kept up to MAX_OUTPUT_BYTES (what follows is read and dropped)."""

    def __init__(self) -> None:
        self.kept = bytearray()
        self.cut = False

    async def read(self, stream: asyncio.StreamReader) -> None:
        """Read to the end of ``stream``."""
        while chunk := await stream.read(_CHUNK):
            room = MAX_OUTPUT_BYTES - len(self.kept)
            if room > 0:
                self.kept += chunk[:room]
            if len(chunk) > room:
                self.cut = True

    def text(self) -> str:
        """What was kept, as text (a cut stream says so at its end)."""
        text = self.kept.decode("utf-8", "replace")
        return f"{text}\n[output cut at {MAX_OUTPUT_BYTES} bytes]" if self.cut else text


async def _exited(process: asyncio.subprocess.Process) -> None:
    """Until the command has exited. Not ``process.wait()``: that also waits for its pipes
    to close, which a process it left running in the background keeps open."""
    try:
        fd = os.pidfd_open(process.pid)
    except OSError:  # reaped already, or no pidfd here: the exit status tells
        while process.returncode is None:
            await asyncio.sleep(0.02)
        return
    loop = asyncio.get_running_loop()
    ended: asyncio.Future[None] = loop.create_future()

    def readable() -> None:
        if not ended.done():
            ended.set_result(None)

    loop.add_reader(fd, readable)
    try:
        await ended
    finally:
        loop.remove_reader(fd)
        os.close(fd)


async def _end(process: asyncio.subprocess.Process, readers: list[asyncio.Task[None]]) -> None:
    """Kill what is left of the command's process group, reap it and let the pipes drain,
    each wait bounded."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(_KILL_WAIT):
            await process.wait()
    # A process that left the group (setsid) may still hold a pipe: stop reading it.
    _, pending = await asyncio.wait(readers, timeout=_DRAIN_WAIT)
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.wait(pending, timeout=_DRAIN_WAIT)


def _argv(argv: Any) -> list[str]:
    """``argv`` checked to be a non-empty list of text."""
    if isinstance(argv, str):
        raise SandboxError(
            f"exec takes a list of words, got the text {argv!r}",
            hint='e.g. ["python3", "main.py"], or ["sh", "-c", "..."] for a shell line',
        )
    if not isinstance(argv, list | tuple) or not argv:
        raise SandboxError(f"exec takes a non-empty list of words, got {argv!r}")
    if not all(isinstance(word, str) and "\0" not in word for word in argv):
        raise SandboxError(f"exec words must be text without NUL characters, got {argv!r}")
    if not argv[0]:
        raise SandboxError("exec: the program name is empty")
    return list(argv)


def _timeout(value: Any) -> float:
    """A call's ``timeout=`` in seconds (a number or a duration such as ``"10s"``)."""
    from agentcli.durations import parse_duration
    from agentcli.errors import ConfigError

    try:
        return parse_duration(value)
    except ConfigError as error:
        raise SandboxError(f"exec timeout: {error.message}") from None


def _remove_tree(root: Path) -> None:
    """``shutil.rmtree`` that makes what it cannot remove writable and tries again."""
    if sys.version_info >= (3, 12):
        shutil.rmtree(root, onexc=_writable_then_retry)
    else:
        shutil.rmtree(root, onerror=_writable_then_retry)


def _writable_then_retry(function: Callable[..., Any], path: str, _error: object) -> None:
    """rmtree's error handler: make the parent writable and searchable, then retry once."""
    with contextlib.suppress(OSError):
        parent = os.path.dirname(path)
        os.chmod(parent, os.stat(parent).st_mode | stat.S_IRWXU)
        if os.path.isdir(path) and not os.path.islink(path):
            os.chmod(path, os.stat(path).st_mode | stat.S_IRWXU)
            _remove_tree(Path(path))
        else:
            function(path)

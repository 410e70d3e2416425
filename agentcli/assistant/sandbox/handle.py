"""``ctx.sandbox``: the request's workspace as hooks and tool functions use it.

Each method works from both worlds, as every ``ctx`` service does: awaited in an async
hook, or called plainly in a sync one (which runs in a thread of its own and blocks until
the call is done). PascalCase aliases (``ReadFile``, ``WriteFile``, ``ListDir``, ``Exec``)
match Yao's sandbox API.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from agentcli.assistant.sandbox.protocol import Sandbox

__all__ = ["SandboxHandle"]

Bridge = Callable[[Coroutine[Any, Any, Any]], Any]


class SandboxHandle:
    """One request's sandbox: ``workdir``, files and commands."""

    def __init__(self, sandbox: Sandbox, bridge: Bridge) -> None:
        self._sandbox = sandbox
        self._bridge = bridge

    @property
    def workdir(self) -> str:
        """The folder commands start in; relative file paths are relative to it."""
        return str(self._sandbox.workdir)

    @property
    def backend(self) -> str:
        """``local`` or ``bwrap``."""
        return self._sandbox.spec.backend

    def __repr__(self) -> str:
        return f"SandboxHandle(backend={self.backend!r}, workdir={self.workdir!r})"

    def read_file(self, path: str) -> Any:
        """A file's text."""
        return self._bridge(self._sandbox.read_file(path))

    def write_file(self, path: str, content: str | bytes) -> Any:
        """Write a file (its folders made); the bytes written."""
        return self._bridge(self._sandbox.write_file(path, content))

    def list_dir(self, path: str = ".") -> Any:
        """A folder's entries: ``[{name, size, is_dir}]``."""
        return self._bridge(self._sandbox.list_dir(path))

    def exec(
        self, argv: list[str], timeout: float | str | None = None, env: dict[str, str] | None = None
    ) -> Any:
        """Run a command; its stdout. A non-zero exit raises SandboxExecError (``returncode``,
        ``stderr``), a timeout SandboxTimeout."""
        return self._bridge(self._sandbox.exec(argv, timeout=timeout, env=env))

    ReadFile = read_file
    WriteFile = write_file
    ListDir = list_dir
    Exec = exec

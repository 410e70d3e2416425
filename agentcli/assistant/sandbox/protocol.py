"""The contract of a sandbox backend: a workspace folder with confined file operations and
commands run inside it (``local.py``, ``bwrap.py``), and what a command leaves (``ExecResult``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from agentcli.assistant.sandbox.spec import SandboxSpec

__all__ = ["MAX_OUTPUT_BYTES", "ExecResult", "Sandbox"]

MAX_OUTPUT_BYTES = 1024 * 1024  # of each of stdout and stderr kept per command


@dataclass(slots=True)
class ExecResult:
    """A command that ran to its end: its exit status and what it printed (each stream cut
    at ``MAX_OUTPUT_BYTES``, ``truncated`` then true)."""

    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    truncated: bool = False

    def to_dict(self) -> dict[str, Any]:
        """What the model's ``sandbox__exec`` returns."""
        data: dict[str, Any] = {
            "exit_code": self.returncode,
            "stdout": self.stdout,
            "stderr": self.stderr,
        }
        if self.truncated:
            data["truncated"] = True
        return data


class Sandbox(Protocol):
    """One workspace: ``root`` is the folder made for it (removed by ``remove``),
    ``workdir`` the folder commands start in and file paths are relative to."""

    spec: SandboxSpec
    root: Path
    workdir: Path

    async def read_file(self, path: str) -> str:
        """A file's text (UTF-8; undecodable bytes replaced)."""
        ...

    async def write_file(self, path: str, content: str | bytes) -> int:
        """Write a file (its folders made); the bytes written."""
        ...

    async def list_dir(self, path: str = ".") -> list[dict[str, Any]]:
        """A folder's entries: ``{name, size, is_dir}``, sorted by name."""
        ...

    async def run(
        self,
        argv: list[str],
        *,
        timeout: float | str | None = None,
        env: dict[str, str] | None = None,
    ) -> ExecResult:
        """Run a command to its end (any exit status); SandboxTimeout past ``timeout``."""
        ...

    async def exec(
        self,
        argv: list[str],
        *,
        timeout: float | str | None = None,
        env: dict[str, str] | None = None,
    ) -> str:
        """Run a command; its stdout, or SandboxExecError when it exits non-zero."""
        ...

    async def ready(self) -> None:
        """SandboxError when the backend cannot run commands here."""
        ...

    def remove(self) -> None:
        """Delete the workspace (idempotent)."""
        ...

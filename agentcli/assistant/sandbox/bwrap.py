"""The ``bwrap`` backend: commands run under bubblewrap (Debian's ``bubblewrap``).

The command sees a new, read-only root: the system folders (``/usr`` and its ``/bin``,
``/lib``... links, a few files of ``/etc``) bound read-only, a fresh ``/proc`` and ``/dev``,
and the workspace bound writable at the same path it has outside (so ``workdir`` means the
same folder to the hook that reads a file and to the command that wrote it): its ``work/``
and ``tmp/`` (``TMPDIR``) are all a command can write. Every
namespace is unshared — the network too, unless the spec says ``network: true`` — every
capability dropped, and the command runs in a session of its own. ``--die-with-parent`` and
the new PID namespace end every process of it when bwrap is killed at the timeout (or
agentcli dies). File operations are the local backend's, on the same folder.

Whether bwrap works here (installed, and allowed by the kernel to make namespaces) is
probed once per process; a refusal is a SandboxError naming the reason.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from agentcli.assistant.sandbox.local import LocalSandbox
from agentcli.errors import SandboxError

__all__ = ["BwrapSandbox", "bwrap_args", "bwrap_refusal", "check_bwrap"]

_SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# What programs commonly read from /etc: the dynamic loader's cache, Debian's alternatives,
# name resolution (for network: true), certificates, time zone, users.
_ETC = (
    "alternatives", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "ssl", "ca-certificates",
    "resolv.conf", "hosts", "nsswitch.conf", "passwd", "group", "localtime", "mime.types",
)  # fmt: skip
_PROBE_TIMEOUT = 15.0
_probed: dict[str, str | None] = {}  # the bwrap binary -> why it cannot run (None: it can)


def bwrap_args(root: Path, workdir: Path, *, network: bool) -> list[str]:
    """bwrap's options for a workspace ``root`` whose commands start in ``workdir``."""
    args = ["--die-with-parent", "--new-session", "--unshare-all", "--cap-drop", "ALL"]
    if network:
        args.append("--share-net")
    args += ["--ro-bind", "/usr", "/usr"]
    for place in _SYSTEM_LINKS:
        if os.path.islink(place):
            args += ["--symlink", os.readlink(place), place]
        elif os.path.isdir(place):
            args += ["--ro-bind", place, place]
    for name in _ETC:
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    args += ["--proc", "/proc", "--dev", "/dev"]
    args += ["--bind", str(root), str(root), "--chdir", str(workdir)]
    # Last: the new root itself read-only, so the workspace is all a command can write.
    return [*args, "--remount-ro", "/"]


async def bwrap_refusal() -> str | None:
    """Why bwrap cannot run sandboxes here (not installed, refused by the kernel), or None;
    asked once per process."""
    binary = shutil.which("bwrap") or ""
    if binary in _probed:
        return _probed[binary]
    reason = await _probe(binary) if binary else "bwrap is not installed"
    _probed[binary] = reason
    return reason


async def check_bwrap() -> None:
    """SandboxError, saying what to do, when bwrap cannot run sandboxes here."""
    reason = await bwrap_refusal()
    if reason is not None:
        raise SandboxError(
            f"sandbox backend bwrap cannot run here: {reason}",
            hint='install Debian\'s "bubblewrap" (apt-get install bubblewrap), allow '
            'unprivileged user namespaces, or use "backend": "local"',
        )


async def _probe(binary: str) -> str | None:
    """Run ``true`` in a throw-away workspace the way every command will be run."""
    with tempfile.TemporaryDirectory(prefix="agentcli-bwrap-probe-") as folder:
        root = Path(os.path.realpath(folder))
        command = [binary, *bwrap_args(root, root, network=False), "--", "true"]
        try:
            process = await asyncio.create_subprocess_exec(
                *command,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as error:
            return f"bwrap could not be started: {error.strerror}"
        try:
            async with asyncio.timeout(_PROBE_TIMEOUT):
                _, stderr = await process.communicate()
        except TimeoutError:
            process.kill()
            await process.wait()
            return f"bwrap did not finish a trial command within {_PROBE_TIMEOUT:g}s"
    if process.returncode != 0:
        said = stderr.decode("utf-8", "replace").strip() or f"status {process.returncode}"
        return f"bwrap refused a trial command: {said}"
    return None


class BwrapSandbox(LocalSandbox):
    """A workspace whose commands run under bubblewrap."""

    backend: ClassVar[str] = "bwrap"

    async def ready(self) -> None:
        """SandboxError when bwrap cannot run here, with what to do."""
        await check_bwrap()

    def command(self, argv: list[str], environment: Mapping[str, str]) -> list[str] | None:
        """bwrap with this workspace's options, then ``argv`` (its program found on the
        sandbox's PATH: the system folders inside are the ones bound from outside)."""
        found = super().command(argv, environment)
        if found is None:
            return None
        binary = shutil.which("bwrap") or "bwrap"
        network = self.spec.network
        return [binary, *bwrap_args(self.root, self.workdir, network=network), "--", *found]

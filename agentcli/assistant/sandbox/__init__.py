"""``ctx.sandbox``: a workspace per request (per case in eval) where files are written and
commands run, confined to it.

``spec.py`` reads what a package or case asks for; ``protocol.py`` is a backend's contract;
``local.py`` (a temporary folder, plain subprocesses) and ``bwrap.py`` (bubblewrap:
read-only system, writable workdir only, no network) are the backends; ``paths.py`` keeps
every file operation inside the workdir; ``handle.py`` is what hooks see as ``ctx.sandbox``;
``tools.py`` the ``sandbox__*`` tools offered to the model.
"""

from __future__ import annotations

from pathlib import Path

from agentcli.assistant.sandbox.bwrap import BwrapSandbox
from agentcli.assistant.sandbox.local import LocalSandbox
from agentcli.assistant.sandbox.protocol import ExecResult, Sandbox
from agentcli.assistant.sandbox.spec import SandboxSpec, merge_spec, parse_spec

__all__ = [
    "ExecResult",
    "Sandbox",
    "SandboxSpec",
    "create_sandbox",
    "merge_spec",
    "open_sandbox",
    "parse_spec",
]


def create_sandbox(spec: SandboxSpec, *, parent: Path | None = None) -> Sandbox:
    """A new workspace of the spec's backend, seeded with its files (whether the backend
    can run commands here is found out by its first command)."""
    backend = BwrapSandbox if spec.backend == "bwrap" else LocalSandbox
    return backend.create(spec, parent=parent)


async def open_sandbox(spec: SandboxSpec, *, parent: Path | None = None) -> Sandbox:
    """A new workspace whose backend is known to run here (SandboxError otherwise)."""
    sandbox = create_sandbox(spec, parent=parent)
    try:
        await sandbox.ready()
    except BaseException:
        sandbox.remove()
        raise
    return sandbox

"""The sandbox as tools for the model: ``sandbox__exec``, ``sandbox__read_file``,
``sandbox__write_file`` and ``sandbox__list_dir`` (``"sandbox": {"tools": true}``).

They are offered by the package's ToolBox beside its MCP tools, so a cassette records and
replays them and the trace shows them as calls of the ``sandbox`` server. Each acts on the
workspace of the request that calls it (``ctx.sandbox``). ``exec`` returns the exit status
with the output, a failing command included (the model reads stderr and tries again); a
timeout, a path out of the workspace or a missing file is an error result.
"""

from __future__ import annotations

from typing import Any

from agentcli.assistant.sandbox.protocol import Sandbox
from agentcli.errors import SandboxError
from agentcli.runtime.tools import Tool, ToolContext

__all__ = ["SANDBOX_SERVER", "sandbox_tool", "sandbox_tools"]

SANDBOX_SERVER = "sandbox"

_PATH = {"type": "string", "description": "A path relative to the workdir."}


def _workspace(ctx: ToolContext) -> Sandbox:
    """The calling request's sandbox."""
    open_workspace = getattr(ctx.services, "sandbox_workspace", None)
    sandbox: Sandbox | None = open_workspace() if open_workspace is not None else None
    if sandbox is None:
        raise SandboxError("this request has no sandbox")
    return sandbox


async def _exec(arguments: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    result = await _workspace(ctx).run(
        arguments["argv"], timeout=arguments.get("timeout"), env=arguments.get("env")
    )
    return result.to_dict()


async def _read_file(arguments: dict[str, Any], ctx: ToolContext) -> str:
    return await _workspace(ctx).read_file(arguments["path"])


async def _write_file(arguments: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    written = await _workspace(ctx).write_file(arguments["path"], arguments["content"])
    return {"path": arguments["path"], "bytes": written}


async def _list_dir(arguments: dict[str, Any], ctx: ToolContext) -> list[dict[str, Any]]:
    return await _workspace(ctx).list_dir(arguments.get("path") or ".")


_TOOLS: dict[str, tuple[Any, str, dict[str, Any]]] = {
    "exec": (
        _exec,
        "Run a command in the sandbox's workdir; returns exit_code, stdout and stderr.",
        {
            "type": "object",
            "properties": {
                "argv": {
                    "type": "array",
                    "items": {"type": "string"},
                    "minItems": 1,
                    "description": 'The program and its arguments, e.g. ["python3", "main.py"].',
                },
                "timeout": {"type": "number", "exclusiveMinimum": 0, "description": "Seconds."},
                "env": {"type": "object", "additionalProperties": {"type": "string"}},
            },
            "required": ["argv"],
            "additionalProperties": False,
        },
    ),
    "read_file": (
        _read_file,
        "Read a text file of the sandbox.",
        {
            "type": "object",
            "properties": {"path": _PATH},
            "required": ["path"],
            "additionalProperties": False,
        },
    ),
    "write_file": (
        _write_file,
        "Write a text file in the sandbox (folders are made).",
        {
            "type": "object",
            "properties": {"path": _PATH, "content": {"type": "string"}},
            "required": ["path", "content"],
            "additionalProperties": False,
        },
    ),
    "list_dir": (
        _list_dir,
        "List a folder of the sandbox: name, size, is_dir of each entry.",
        {
            "type": "object",
            "properties": {"path": {**_PATH, "default": "."}},
            "additionalProperties": False,
        },
    ),
}


def sandbox_tool(name: str) -> Tool | None:
    """The sandbox tool of bare name ``name`` (``exec``...), or None."""
    entry = _TOOLS.get(name)
    if entry is None:
        return None
    execute, description, parameters = entry
    return Tool(
        name=f"{SANDBOX_SERVER}__{name}",
        execute=execute,
        description=description,
        parameters=parameters,
        label=name,
        server=SANDBOX_SERVER,
        bare_name=name,
    )


def sandbox_tools() -> list[Tool]:
    """Every sandbox tool, in a fixed order."""
    return [tool for name in _TOOLS if (tool := sandbox_tool(name)) is not None]

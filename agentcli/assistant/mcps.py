"""Tool server definitions: ``mcps/**/*.mcp.yao`` files and their input-schema mappings.

A definition is read, checked and ``$ENV``-substituted here, once, into a ``ToolServerSpec``;
nothing is imported or started. ``agentcli.assistant.tools`` turns specs into tools.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from agentcli.assistant.jsonc import load_jsonc
from agentcli.choices import one_of
from agentcli.errors import PackageError

__all__ = [
    "SUFFIXES",
    "TRANSPORTS",
    "ToolServerSpec",
    "Transport",
    "check_sequential",
    "is_sequential",
    "load_tool_servers",
]

SUFFIXES = (".mcp.yao", ".mcp.json", ".mcp.jsonc")
# process: tools in the package's own Python; stdio: a subprocess; http / sse: a URL
Transport = Literal["process", "stdio", "http", "sse"]
TRANSPORTS: tuple[Transport, ...] = get_args(Transport)
_ALIASES = {"streamable-http": "http", "streamable_http": "http", "streamablehttp": "http"}
# `command: "python"` means the interpreter running agentcli, so an example server written
# with the mcp SDK runs in the same environment on every machine.
_PYTHON_COMMANDS = ("python", "python3")
_ENV_REFERENCE = re.compile(r"\$ENV\.([A-Za-z_][A-Za-z0-9_]*)")
_SCHEMA_SUFFIX = ".in.yao"
_OUTPUT_SUFFIX = ".out.yao"


@dataclass(slots=True)
class ToolServerSpec:
    """One tool server of a package, as its ``.mcp.yao`` file defines it.

    ``id`` is the file's path under ``mcps/`` without the suffix, ``/`` -> ``.``;
    ``schemas`` maps tool names to input schemas from ``mcps/mapping/<id>/schemes/``.
    ``command`` is resolved (``python`` -> this interpreter; a relative path containing
    ``/`` -> against the package folder); stdio servers run with the package folder as
    their working directory, so relative ``args`` resolve against it too.
    """

    id: str
    path: Path
    transport: Transport
    label: str = ""
    description: str = ""
    tools: dict[str, str] = field(default_factory=dict)
    command: str = ""
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    # where a process server's functions live: the package's src/ (None), or the app's
    src_dir: Path | None = None
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    timeout: float | None = None
    # how the MCP protocol version is negotiated: "auto" (probe, then the handshake),
    # "legacy" (the initialize handshake only: servers of the 2025-11-25 era and before), or
    # a modern version pinned
    protocol: str = "auto"
    # tools whose calls never run beside other calls (they share state: a database);
    # True: every tool of the server
    sequential: frozenset[str] | bool = frozenset()
    schemas: dict[str, dict[str, Any]] = field(default_factory=dict)
    schema_paths: dict[str, Path] = field(default_factory=dict)
    # x-process-args of an input schema: how a process tool's arguments become the
    # process's (``[":arguments"]``, ``["$args.id", ":arguments"]``)
    process_args: dict[str, list[Any]] = field(default_factory=dict)
    # ``<tool>.out.yao``: the JSON Schema a tool's result must match
    output_schemas: dict[str, dict[str, Any]] = field(default_factory=dict)
    output_schema_paths: dict[str, Path] = field(default_factory=dict)
    # process servers: resource and prompt names -> functions (resolved like `tools`), and
    # what mcps/mapping/<id>/resources/<name>.res.yao and prompts/<name>.pmt.yao say of them
    resources: dict[str, str] = field(default_factory=dict)
    prompts: dict[str, str] = field(default_factory=dict)
    resource_meta: dict[str, dict[str, Any]] = field(default_factory=dict)
    prompt_meta: dict[str, dict[str, Any]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)  # e.g. unset $ENV variables


def load_tool_servers(
    package_dir: Path, *, env: Mapping[str, str] = os.environ, app_dir: Path | None = None
) -> list[ToolServerSpec]:
    """Read every ``mcps/**/*.mcp.yao`` (``.json``/``.jsonc``) of a package, sorted by id.

    ``app_dir`` (the folder above the assistants root, a Yao app) adds the app-level
    servers of its ``mcps/``, as Yao finds them by id; a package's own server of the same
    id wins. An app-level process server's functions are found from the app folder (Yao's
    ``scripts.tests.mcp.Ping`` is ``<app>/scripts/tests/mcp.py``)."""
    package_dir = Path(package_dir)
    specs = _servers_in(package_dir, env, src_dir=package_dir / "src")
    if (
        app_dir is not None
        and (Path(app_dir) / "mcps").resolve() != (package_dir / "mcps").resolve()
    ):
        for server_id, spec in _servers_in(Path(app_dir), env, src_dir=Path(app_dir)).items():
            specs.setdefault(server_id, spec)
    return [specs[key] for key in sorted(specs)]


def server_file_problems(
    package_dir: Path, *, env: Mapping[str, str] = os.environ
) -> list[PackageError]:
    """The problem of each of the package's tool server files that does not load, every
    file checked (``agent list --check``; ``load_tool_servers`` stops at the first)."""
    root = Path(package_dir) / "mcps"
    if not root.is_dir():
        return []
    found = []
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        suffix = next((s for s in SUFFIXES if path.name.endswith(s)), None)
        if suffix is None or relative.parts[0] == "mapping" or not path.is_file():
            continue
        server_id = relative.as_posix()[: -len(suffix)].replace("/", ".")
        try:
            _load_spec(server_id, path, Path(package_dir), env)
        except PackageError as error:
            found.append(error)
    return found


def _servers_in(
    folder: Path, env: Mapping[str, str], *, src_dir: Path
) -> dict[str, ToolServerSpec]:
    """The servers of ``folder/mcps`` by id (relative paths resolve against ``folder``; the
    functions of process servers are found in ``src_dir``)."""
    root = folder / "mcps"
    if not root.is_dir():
        return {}
    specs: dict[str, ToolServerSpec] = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        suffix = next((s for s in SUFFIXES if path.name.endswith(s)), None)
        if suffix is None or relative.parts[0] == "mapping" or not path.is_file():
            continue
        server_id = relative.as_posix()[: -len(suffix)].replace("/", ".")
        if server_id in specs:
            raise PackageError(
                f"tool server {server_id!r} is defined twice (also in {specs[server_id].path})",
                path=str(path),
                hint="keep one definition file per server",
            )
        specs[server_id] = _load_spec(server_id, path, folder, env)
        specs[server_id].src_dir = src_dir
    return specs


def _load_spec(
    server_id: str, path: Path, package_dir: Path, environ: Mapping[str, str]
) -> ToolServerSpec:
    data = load_jsonc(path)
    where = str(path)
    if not isinstance(data, dict):
        raise PackageError("a tool server definition must be a JSON object", path=where)
    warnings: list[str] = []
    env = _Env(environ, warnings)
    transport = _transport(data, where)
    spec = ToolServerSpec(
        id=server_id,
        path=path,
        transport=transport,
        label=_string(data, "label", where),
        description=_string(data, "description", where),
        timeout=_timeout(data.get("timeout"), where),
        protocol=_protocol(data.get("protocol"), where),
        sequential=_sequential(data.get("sequential"), where),
    )
    if transport == "process":
        spec.tools = _string_map(data, "tools", where, env=None)
        spec.resources = _string_map(data, "resources", where, env=None)
        spec.prompts = _string_map(data, "prompts", where, env=None)
        if not (spec.tools or spec.resources or spec.prompts):
            raise PackageError(
                'a process server needs `tools`: {tool name: "file.Function"}',
                path=where,
                hint='e.g. "tools": {"search": "tools.Search"} for src/tools.py:Search',
            )
        check_sequential(spec, list(spec.tools))
        mapping = package_dir / "mcps" / "mapping" / server_id
        spec.resource_meta = _load_meta(mapping / "resources", ".res.yao", spec.resources)
        spec.prompt_meta = _load_meta(mapping / "prompts", ".pmt.yao", spec.prompts)
    elif transport == "stdio":
        command = _substitute(_string(data, "command", where), "command", where, env, required=True)
        if not command:
            raise PackageError("a stdio server needs `command`", path=where)
        spec.command = _command(command, package_dir)
        raw_args = data.get("arguments", data.get("args", []))
        if not isinstance(raw_args, list) or not all(
            isinstance(a, str | int | float) for a in raw_args
        ):
            raise PackageError("`arguments` must be a list of strings", path=where)
        spec.args = [_substitute(str(a), "arguments", where, env, required=True) for a in raw_args]
        spec.env = _string_map(data, "env", where, env=env)
        spec.cwd = package_dir.resolve()
    else:
        spec.url = _substitute(_string(data, "url", where), "url", where, env, required=True)
        if not spec.url.startswith(("http://", "https://")):
            raise PackageError(
                f"an {transport} server needs an http(s) `url`, got {spec.url!r}", path=where
            )
        spec.headers = _string_map(data, "headers", where, env=env)
        token = _substitute(
            _string(data, "authorization_token", where), "authorization_token", where, env
        )
        if token:
            scheme = "" if token.lower().startswith(("bearer ", "basic ")) else "Bearer "
            spec.headers.setdefault("Authorization", scheme + token)
    mapping = package_dir / "mcps" / "mapping" / server_id
    spec.schemas, spec.schema_paths = _load_schemas(mapping)
    spec.process_args = _process_args(mapping)
    spec.output_schemas, spec.output_schema_paths = _load_output_schemas(mapping)
    spec.warnings = warnings
    return spec


def _transport(data: dict[str, Any], where: str) -> Transport:
    raw = data.get("transport")
    if raw is None:
        # Configs copied from other MCP clients often omit the transport; the fields tell it.
        inferred: tuple[tuple[str, Transport], ...] = (
            ("tools", "process"),
            ("command", "stdio"),
            ("url", "http"),
        )
        for key, transport in inferred:
            if key in data:
                return transport
        raise PackageError(
            "missing `transport`", path=where, hint=f"use one of: {', '.join(TRANSPORTS)}"
        )
    named = one_of(_ALIASES.get(str(raw).lower(), str(raw).lower()), TRANSPORTS)
    if named is None:
        raise PackageError(
            f"unknown transport {raw!r}", path=where, hint=f"use one of: {', '.join(TRANSPORTS)}"
        )
    return named


# handshake-era versions; pinning one means the initialize handshake
_HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")


def _protocol(value: Any, where: str) -> str:
    """``protocol``: ``auto``, ``legacy``, or a protocol version (a handshake-era one means
    ``legacy``)."""
    if value is None or value == "auto":
        return "auto"
    if not isinstance(value, str) or not value:
        raise PackageError("`protocol` must be auto, legacy or a protocol version", path=where)
    return "legacy" if value in _HANDSHAKE_VERSIONS else value


def _command(command: str, package_dir: Path) -> str:
    if command in _PYTHON_COMMANDS:
        return sys.executable
    if "/" in command and not Path(command).is_absolute():
        return str((package_dir / command).resolve())
    return command


def _string(data: dict[str, Any], key: str, where: str) -> str:
    value = data.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise PackageError(f"`{key}` must be a string, got {type(value).__name__}", path=where)
    return value


def _string_map(data: dict[str, Any], key: str, where: str, *, env: _Env | None) -> dict[str, str]:
    value = data.get(key) or {}
    if not isinstance(value, dict):
        raise PackageError(f"`{key}` must be an object of strings", path=where)
    result: dict[str, str] = {}
    for name, item in value.items():
        if isinstance(item, bool) or not isinstance(item, str | int | float):
            raise PackageError(f"`{key}.{name}` must be a string", path=where)
        text = str(item)
        result[str(name)] = text if env is None else _substitute(text, f"{key}.{name}", where, env)
    return result


def _sequential(value: Any, where: str) -> frozenset[str] | bool:
    """``sequential``: the tools whose calls run alone, one at a time (true: all of them)."""
    if value is None or value is False:
        return frozenset()
    if value is True:
        return True
    if not isinstance(value, list) or not all(isinstance(name, str) and name for name in value):
        raise PackageError(
            "`sequential` must be a list of tool names (or true for every tool)",
            path=where,
            hint='e.g. "sequential": ["book_reservation"]',
        )
    return frozenset(value)


def check_sequential(spec: ToolServerSpec, tools: list[str]) -> None:
    """Every tool ``sequential`` names is one of the server's ``tools``: a misspelt name
    would let calls that share state run at once."""
    if isinstance(spec.sequential, bool):
        return
    for name in sorted(spec.sequential):
        if name not in tools:
            import difflib

            close = difflib.get_close_matches(name, tools, n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"its tools: {', '.join(tools)}"
            raise PackageError(
                f"`sequential` names {name!r}, which is not a tool of server {spec.id!r}",
                path=str(spec.path),
                hint=hint,
            )


def is_sequential(spec: ToolServerSpec, tool: str) -> bool:
    """Whether calls of ``tool`` (a bare name) must run alone."""
    return spec.sequential if isinstance(spec.sequential, bool) else tool in spec.sequential


def _timeout(value: Any, where: str) -> float | None:
    """A server's ``timeout``: finite seconds > 0 (NaN or infinity would never cut a wait)."""
    from agentcli.models.retry import seconds

    if value is None:
        return None
    if isinstance(value, str) or not seconds(value):
        raise PackageError("`timeout` must be a positive, finite number of seconds", path=where)
    return float(value)


class _Env:
    """The environment as a definition reads it. An unset variable in what decides which
    server runs or is reached (``command``, ``arguments``, ``url``) is an error: read as ""
    it started a server with an empty argument that never answered. Elsewhere (``env``,
    ``headers``, the token) it reads as "" and leaves a warning, as SPEC says."""

    def __init__(self, env: Mapping[str, str], warnings: list[str]) -> None:
        self.env = env
        self.warnings = warnings

    def lookup(self, name: str, key: str, where: str, *, required: bool = False) -> str:
        """The value of ``name`` for field ``key`` of the file ``where``."""
        if name in self.env:
            return self.env[name]
        if required:
            raise PackageError(
                f"`{key}` uses $ENV.{name}, but {name} is not set",
                path=where,
                hint=f"export {name}=... before running, or write the value into `{key}`",
            )
        self.warnings.append(f"{where}: `{key}` uses $ENV.{name}, but {name} is not set (empty)")
        return ""


def _substitute(text: str, key: str, where: str, env: _Env, *, required: bool = False) -> str:
    """Replace every ``$ENV.NAME`` in ``text`` (unset: an error when ``required``, else
    empty with a warning)."""
    return _ENV_REFERENCE.sub(
        lambda match: env.lookup(match.group(1), key, where, required=required), text
    )


def _schema_files(folder: Path, suffix: str) -> list[tuple[str, Path, Any]]:
    """``(tool, path, parsed JSON)`` of each ``schemes/<tool><suffix>`` under ``folder``."""
    schemes = folder / "schemes"
    if not schemes.is_dir():
        return []
    found = sorted(schemes.glob(f"*{suffix}"))
    return [(path.name[: -len(suffix)], path, load_jsonc(path)) for path in found]


def _load_schemas(folder: Path) -> tuple[dict[str, dict[str, Any]], dict[str, Path]]:
    schemas: dict[str, dict[str, Any]] = {}
    paths: dict[str, Path] = {}
    for tool, path, schema in _schema_files(folder, _SCHEMA_SUFFIX):
        if not isinstance(schema, dict) or schema.get("type", "object") != "object":
            raise PackageError(
                'an input schema must be a JSON Schema object with "type": "object"',
                path=str(path),
            )
        # Yao's own `x-*` keys (x-process-args) mean nothing to a model or a validator.
        schemas[tool] = {k: v for k, v in schema.items() if not k.startswith("x-")}
        schemas[tool].setdefault("type", "object")
        paths[tool] = path
    return schemas, paths


def _process_args(folder: Path) -> dict[str, list[Any]]:
    """The ``x-process-args`` of each input schema that has one (checked to be a list)."""
    found: dict[str, list[Any]] = {}
    for tool, path, schema in _schema_files(folder, _SCHEMA_SUFFIX):
        if "x-process-args" not in schema:
            continue
        value = schema["x-process-args"]
        if not isinstance(value, list):
            raise PackageError(
                "`x-process-args` must be a list",
                path=str(path),
                hint='e.g. [":arguments"] or ["$args.id", ":arguments"]',
            )
        found[tool] = value
    return found


def _load_output_schemas(folder: Path) -> tuple[dict[str, dict[str, Any]], dict[str, Path]]:
    """``schemes/<tool>.out.yao``: the schema each tool's result is checked against."""
    schemas: dict[str, dict[str, Any]] = {}
    paths: dict[str, Path] = {}
    for tool, path, schema in _schema_files(folder, _OUTPUT_SUFFIX):
        if not isinstance(schema, dict):
            raise PackageError("an output schema must be a JSON Schema object", path=str(path))
        schemas[tool] = {k: v for k, v in schema.items() if not k.startswith("x-")}
        paths[tool] = path
    return schemas, paths


def _load_meta(folder: Path, suffix: str, names: dict[str, str]) -> dict[str, dict[str, Any]]:
    """The mapping files (``<name>.res.yao``, ``<name>.pmt.yao``) of a process server's
    resources or prompts, by name; a name without one has none."""
    found: dict[str, dict[str, Any]] = {}
    for name in names:
        path = folder / f"{name}{suffix}"
        if not path.is_file():
            continue
        data = load_jsonc(path)
        if not isinstance(data, dict):
            raise PackageError("a mapping file must be a JSON object", path=str(path))
        found[name] = data
    return found

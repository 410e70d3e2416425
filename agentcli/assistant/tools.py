"""The tools of an assistant package: ``mcps/`` servers as runtime ``Tool`` objects.

``process`` servers map tool names to Python functions in the package's ``src/``
(``"search": "tools.Search"`` -> ``src/tools.py:Search``); ``stdio``, ``http`` and ``sse``
servers are real MCP servers reached through the official SDK, connected on first use.

The model sees a tool as ``<server>__<tool>``: the server id with ``.`` -> ``_``, and any
character outside ``[A-Za-z0-9_-]`` -> ``_`` (OpenAI's rule for function names), e.g.
``weather__get_forecast`` or ``sub_tools__search``; a name longer than 64 characters is cut
and ends in a short hash. ``Tool.server`` and ``Tool.bare_name`` keep the real names.
"""

from __future__ import annotations

import asyncio
import dataclasses
import fnmatch
import hashlib
import os
import re
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from agentcli.assistant.cassette import Cassette
from agentcli.assistant.cassette import Kind as CassetteKind
from agentcli.assistant.cassette import active as active_cassette
from agentcli.assistant.cassette import call_server as cassette_server_call
from agentcli.assistant.cassette import call_tool as cassette_call
from agentcli.assistant.cassette import recorded as cassette_record
from agentcli.assistant.interception import FAULT, STUBBED, InterceptedCall, ToolInterceptor
from agentcli.assistant.interception import active as active_interceptor
from agentcli.assistant.mcp_client import McpConnection
from agentcli.assistant.mcp_process import (
    match_uri,
    process_prompt,
    process_resource,
    prompt_messages,
    resource_content,
)
from agentcli.assistant.mcps import (
    ToolServerSpec,
    check_sequential,
    is_sequential,
    load_tool_servers,
)
from agentcli.assistant.package import McpServerRef
from agentcli.assistant.request import ToolCall as ReplyToolCall
from agentcli.assistant.sandbox.tools import SANDBOX_SERVER, sandbox_tool, sandbox_tools
from agentcli.errors import AgentCliError, PackageError, ToolError
from agentcli.pysource import load_source_module
from agentcli.runtime.tools import (
    ArgumentValidator,
    Tool,
    ToolCall,
    ToolContext,
    ToolResult,
    call_tool_function,
)
from agentcli.threads import in_own_thread

if TYPE_CHECKING:
    from agentcli.assistant.package import AssistantPackage
    from agentcli.assistant.process import Process, Processes

__all__ = [
    "ToolBox",
    "ToolServerSpec",
    "load_src_function",
    "load_tool_servers",
    "parse_server_refs",
    "tool_name",
]

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_MAX_NAME = 64
_SEGMENT = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]*")
_EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}
_T = TypeVar("_T")


def tool_name(server_id: str, tool: str) -> str:
    """The name the model sees for ``tool`` of ``server_id``: ``<server>__<tool>``."""
    name = _UNSAFE.sub("_", f"{server_id.replace('.', '_')}__{tool}")
    if len(name) > _MAX_NAME:
        digest = hashlib.sha1(name.encode()).hexdigest()[:8]
        name = f"{name[: _MAX_NAME - 9]}_{digest}"
    return name


def parse_server_refs(value: Any, *, source: str) -> list[McpServerRef]:
    """Read an ``mcp.servers``-style list (``"id"`` or ``{server_id, tools, resources}``)."""
    if not isinstance(value, list):
        raise PackageError(f"mcp servers must be a list, got {type(value).__name__}", path=source)
    refs: list[McpServerRef] = []
    for index, entry in enumerate(value):
        if isinstance(entry, McpServerRef):
            refs.append(entry)
        elif isinstance(entry, str) and entry:
            refs.append(McpServerRef(entry))
        elif isinstance(entry, dict) and isinstance(entry.get("server_id"), str):
            lists = {}
            for key in ("tools", "resources"):
                items = entry.get(key)
                if items is not None and (
                    not isinstance(items, list) or not all(isinstance(i, str) for i in items)
                ):
                    raise PackageError(
                        f"mcp servers[{index}].{key} must be a list of names", path=source
                    )
                lists[key] = items
            refs.append(McpServerRef(entry["server_id"], lists["tools"], lists["resources"]))
        else:
            raise PackageError(
                f"mcp servers[{index}] must be a server id or {{server_id, tools}}, got {entry!r}",
                path=source,
            )
    return refs


def load_src_function(src_dir: Path, ref: str, *, path: Path) -> Callable[..., Any]:
    """Load ``ref`` (``"file.Func"``, ``"dir.file.Func"``) from ``src_dir``; ``path`` is the
    file that named it, for errors. Only files inside ``src_dir`` can be loaded."""
    file, module, function, shown = _locate_src(src_dir, ref, path)
    loaded = load_source_module(file, module)
    target: object = getattr(loaded, function, None)
    if not callable(target):
        raise PackageError(f"{ref!r}: {shown} has no function {function!r}", path=str(path))
    return target


def check_src_function(src_dir: Path, ref: str, *, path: Path) -> None:
    """Raise ``PackageError`` when ``ref`` names no file, or a file that defines no such
    top-level name, without importing it: importing may need what a BeforeAll hook sets up,
    and a module that fails to import is its caller's error at call time."""
    import ast

    file, _, function, shown = _locate_src(src_dir, ref, path)
    try:
        tree = ast.parse(file.read_bytes(), filename=str(file))
    except (SyntaxError, ValueError, OSError):
        return  # reported, with its line, when the hook is called
    defined: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defined.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            defined.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            defined.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        else:  # names made under if/try/for/with, at any depth (generous on purpose)
            for inner in ast.walk(node):
                if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Store):
                    defined.add(inner.id)
                elif isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    defined.add(inner.name)
                elif isinstance(inner, ast.Import | ast.ImportFrom):
                    defined.update(
                        (alias.asname or alias.name).split(".")[0] for alias in inner.names
                    )
    if function not in defined and "*" not in defined:
        raise PackageError(f"{ref!r}: {shown} has no function {function!r}", path=str(path))


def _locate_src(src_dir: Path, ref: str, path: Path) -> tuple[Path, str, str, str]:
    """The file, module name, function name and shown path behind ``ref``."""
    module, _, function = ref.rpartition(".")
    parts = module.split(".")
    if not module or not function.isidentifier() or not all(_SEGMENT.fullmatch(p) for p in parts):
        raise PackageError(
            f"{ref!r} is not a function reference",
            path=str(path),
            hint='write "file.Function" for src/file.py:Function',
        )
    src = src_dir.resolve()
    file = src.joinpath(*parts[:-1], parts[-1] + ".py")
    resolved = file.resolve()
    if not resolved.is_relative_to(src):
        raise PackageError(f"{ref!r} points outside the package's src/ folder", path=str(path))
    # as the package author sees it: src/tools.py (an app folder's own: scripts/tests/mcp.py)
    below = file.relative_to(src).as_posix()
    shown = f"src/{below}" if src.name == "src" else below
    if not resolved.is_file():
        raise PackageError(f"{ref!r}: module file {shown} not found", path=str(path))
    return resolved, module, function, shown


class ToolBox:
    """The tools of one package. Use as ``async with ToolBox(...) as box`` (or call
    ``aclose()``): MCP servers started on first use are stopped on exit.

    ``servers`` is the package's ``mcp.servers`` selection; ``None`` selects every server in
    ``mcps/``. ``tools(servers=...)`` takes a Create hook's ``mcp_servers``, which replaces
    that selection for the request. The ``list_tools`` / ``call_tool`` / ``call_tools`` /
    ``call_tools_parallel`` methods back ``ctx.mcp`` and reach every tool of a server.
    """

    def __init__(
        self,
        package_dir: Path,
        *,
        servers: list[McpServerRef] | list[Any] | None = None,
        source: str | None = None,
        env: Mapping[str, str] = os.environ,
        specs: list[ToolServerSpec] | None = None,
        app_dir: Path | None = None,
    ) -> None:
        self.package_dir = Path(package_dir)
        found = (
            load_tool_servers(self.package_dir, env=env, app_dir=app_dir)
            if specs is None
            else specs
        )
        self.specs: dict[str, ToolServerSpec] = {spec.id: spec for spec in found}
        self._source = source or str(self.package_dir / "package.yao")
        self.selection = None if servers is None else self._refs(servers, self._source)
        self._connections: dict[str, McpConnection] = {}
        self._built: dict[str, list[Tool]] = {}
        # per server: its tools that must run as MCP tasks, never offered to the model
        self._task_only: dict[str, list[str]] = {}
        self._validator = ArgumentValidator()
        # the package's own selection, and whether it asks for resources (checked per request)
        self._refs_default = (
            self.selection
            if self.selection is not None
            else [McpServerRef(server_id) for server_id in self.specs]
        )
        self._default_resources = any(ref.resources for ref in self._refs_default)
        # Set by a registry opened for cassettes: listings and calls then go through the
        # active cassette of the calling task (agentcli.assistant.cassette).
        self.cassettes = False
        # Set by the Assistant that owns the box: process tools resolve their names through
        # it (data models, other assistants' functions); without one, src/ functions only.
        self.processes: Processes | None = None
        self._output_validators: dict[tuple[str, str], Any] = {}

    @classmethod
    def for_package(
        cls, package: AssistantPackage, *, env: Mapping[str, str] = os.environ
    ) -> ToolBox:
        """The ToolBox of a loaded package (no ``mcp.servers``: every server in ``mcps/``)."""
        raw = package.raw.get("mcp")
        declared = isinstance(raw, list) or (
            isinstance(raw, dict) and raw.get("servers") is not None
        )
        servers = package.mcp if declared else None
        app_dir = package.root.parent if package.root is not None else None
        return cls(
            package.path, servers=servers, source=str(package.file), env=env, app_dir=app_dir
        )

    async def __aenter__(self) -> ToolBox:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop every MCP server this box started (a later use starts it again)."""
        await asyncio.gather(*(c.aclose() for c in self._connections.values()))

    async def tools(self, servers: list[Any] | None = None, *, sandbox: bool = False) -> list[Tool]:
        """Runtime tools of the selected servers (the package's, or ``servers`` instead),
        and the ``sandbox__*`` tools when ``sandbox``; lists the tools of MCP servers,
        starting them if needed. Under a cassette the listing and every call are recorded,
        or replayed without starting anything; under an interceptor (a case's stubs and
        faults) every call goes through it first."""
        tools = None
        if self.cassettes:
            cassette = active_cassette()
            if cassette is not None:
                tools = await self._cassette_tools(cassette, servers, sandbox)
        if tools is None:
            tools = await self._live_tools(servers, sandbox)
        interceptor = active_interceptor()
        if interceptor is None:
            return tools
        return [self._intercepted_tool(tool, interceptor) for tool in tools]

    def _intercepted_tool(self, tool: Tool, interceptor: ToolInterceptor) -> Tool:
        """``tool``, its calls going through ``interceptor`` (which may answer them)."""
        spec = self.specs.get(tool.server)
        timeout = spec.timeout if spec is not None else None

        async def execute(arguments: dict[str, Any], ctx: ToolContext) -> Any:
            call = InterceptedCall(tool.server, tool.bare_name, arguments, False, timeout)
            return await interceptor.call(
                call, lambda: call_tool_function(tool.execute, arguments, ctx)
            )

        return dataclasses.replace(tool, execute=execute)

    async def _cassette_tools(
        self, cassette: Cassette, servers: list[Any] | None, sandbox: bool
    ) -> list[Tool]:
        """The tools as the cassette has them (replay), or the live ones, recorded."""
        # Without sandbox tools the request is what it always was: older cassettes match.
        request = cassette_record({"servers": servers, **({"sandbox": True} if sandbox else {})})
        found = cassette.recording_for("tools", request, "the tool listing")
        if found is not None:
            return [_replayed_tool(item, self._live_call) for item in found.reply or []]
        live = await self._live_tools(servers, sandbox)
        if cassette.records:
            cassette.add("tools", request, cassette_record([_listed(tool) for tool in live]))
        return [_recording_tool(tool) for tool in live]

    async def _live_call(
        self, server: str, name: str, arguments: dict[str, Any], ctx: ToolContext
    ) -> Any:
        """Call a replayed listing's tool for real (``--record missing``: a call that was
        not recorded), as the model's call of it would run."""
        found = sandbox_tool(name) if server == SANDBOX_SERVER else None
        tool = found if found is not None else (await self._tool(server, name))[1]
        return await call_tool_function(tool.execute, arguments, ctx)

    async def _tool(self, server: str, name: str) -> tuple[ToolServerSpec, Tool]:
        """A server's spec and its tool of that bare name (a ``ToolError`` when it has none)."""
        spec = self._spec(server)
        tool = next((t for t in await self._server_tools(spec) if t.bare_name == name), None)
        if tool is None:
            raise ToolError(f"server {server!r} has no tool {name!r}")
        return spec, tool

    async def _live_tools(self, servers: list[Any] | None, sandbox: bool = False) -> list[Tool]:
        source = self._source if servers is None else "Create hook mcp_servers"
        refs = self.selection if servers is None else self._refs(servers, source)
        if refs is None:
            refs = [McpServerRef(server_id) for server_id in self.specs]
        result: list[Tool] = []
        seen: dict[str, Tool] = {}
        groups = [(ref, await self._server_tools(self.specs[ref.server_id])) for ref in refs]
        if sandbox:
            groups.append((McpServerRef(SANDBOX_SERVER), sandbox_tools()))
        for ref, available in groups:
            task_only = self._task_only.get(ref.server_id, [])
            available = [tool for tool in available if tool.bare_name not in task_only]
            if ref.tools is not None:
                by_name = {tool.bare_name: tool for tool in available}
                missing = [
                    name for name in ref.tools if name not in by_name and name not in task_only
                ]
                if missing:
                    raise PackageError(
                        f"server {ref.server_id!r} has no tool {', '.join(map(repr, missing))}"
                        f" (it has: {', '.join(sorted(by_name)) or 'none'})",
                        path=source,
                    )
                available = [by_name[name] for name in dict.fromkeys(ref.tools) if name in by_name]
            for tool in available:
                other = seen.get(tool.name)
                if other is tool:
                    continue
                if other is not None:
                    raise PackageError(
                        f"tools {other.server}/{other.bare_name} and {tool.server}/{tool.bare_name}"
                        f" would both be called {tool.name!r}",
                        path=str(self.specs[other.server].path),
                        hint="rename one of the tools or servers",
                    )
                seen[tool.name] = tool
                result.append(tool)
        return result

    async def list_tools(self, server: str | None = None) -> list[dict[str, Any]]:
        """Every tool of ``server`` (or of all servers): server, name, description,
        input_schema. Under a cassette, recorded or replayed like the model's listing."""
        cassette = active_cassette() if self.cassettes else None
        if cassette is None:
            return await self._list_tools(server)
        request = cassette_record({"list": server})
        found = cassette.recording_for("tools", request, "the tool listing")
        if found is not None:
            return list(found.reply or [])
        listed = await self._list_tools(server)
        if cassette.records:
            cassette.add("tools", request, cassette_record(listed))
        return listed

    async def _list_tools(self, server: str | None) -> list[dict[str, Any]]:
        specs = [self._spec(server)] if server is not None else list(self.specs.values())
        return [
            {
                "server": spec.id,
                "name": tool.bare_name,
                "description": tool.description,
                "input_schema": tool.parameters,
            }
            for spec in specs
            for tool in await self._server_tools(spec)
        ]

    async def call_tool(
        self, server: str, name: str, arguments: dict[str, Any] | None = None, *, ctx: Any = None
    ) -> Any:
        """Call one tool and return its result; a failure raises ``ToolError``. Under a
        cassette the outcome is recorded, or replayed without the server."""
        arguments = {} if arguments is None else arguments
        if not isinstance(arguments, dict):
            raise ToolError(f"{server}/{name}: arguments must be an object")
        interceptor = active_interceptor()
        if interceptor is not None:
            spec = self.specs.get(server)
            call = InterceptedCall(server, name, arguments, True, spec.timeout if spec else None)
            try:
                result = await interceptor.call(
                    call, lambda: self._recorded_call(server, name, arguments, ctx)
                )
            except ToolError as error:
                _note_stubbed(ctx, call, None, str(error))
                raise
            _note_stubbed(ctx, call, result, None)
            return result
        return await self._recorded_call(server, name, arguments, ctx)

    async def _recorded_call(
        self, server: str, name: str, arguments: dict[str, Any], ctx: Any
    ) -> Any:
        """``call_tool`` without the interceptor: through the cassette when one is active."""
        if self.cassettes and active_cassette() is not None:
            return await cassette_call(
                server, name, arguments, lambda: self._checked_call(server, name, arguments, ctx),
                raising=True,
            )  # fmt: skip
        return await self._checked_call(server, name, arguments, ctx)

    async def _checked_call(
        self, server: str, name: str, arguments: dict[str, Any], ctx: Any
    ) -> Any:
        spec, tool = await self._tool(server, name)
        problem = self._validator.errors(tool, arguments)
        if problem:
            raise ToolError(f"{server}/{name}: invalid arguments: {problem}")
        return await self._call_tool(spec, tool, arguments, ctx)

    async def _call_tool(
        self, spec: ToolServerSpec, tool: Tool, arguments: dict[str, Any], ctx: Any
    ) -> Any:
        server, name = spec.id, tool.bare_name
        if spec.transport == "process":
            try:
                value = await call_tool_function(tool.execute, arguments, _direct_context(ctx))
            except AgentCliError:
                raise
            except Exception as error:
                raise ToolError(
                    f"{server}/{name} failed: {type(error).__name__}: {error}"
                ) from error
            if isinstance(value, ToolResult) and value.is_error:
                raise ToolError(str(value.content))
            return value
        value, is_error = await self._connection(spec).call_tool(name, arguments)
        if is_error:
            raise ToolError(f"{server}/{name} failed: {value}")
        checked = self._checked_result(spec, name, value)
        if isinstance(checked, ToolResult):
            raise ToolError(str(checked.content))
        return value

    def withheld(self, servers: list[Any] | None = None) -> list[str]:
        """``server/tool`` of every listed tool of the selected servers that needs MCP task
        execution (``taskSupport: required``), which the model is not offered."""
        if not any(self._task_only.values()):
            return []
        return [
            f"{ref.server_id}/{name}"
            for ref in self._selected(servers)
            for name in self._task_only.get(ref.server_id, [])
            if ref.tools is None or name in ref.tools
        ]

    def _selected(self, servers: list[Any] | None) -> list[McpServerRef]:
        """The server refs of the package's selection (or of ``servers`` instead)."""
        if servers is None:
            return self._refs_default
        return self._refs(servers, "Create hook mcp_servers")

    def selects_resources(self, servers: list[Any] | None = None) -> bool:
        """Whether the selection (the package's, or ``servers``) names any resources."""
        if servers is None:
            return self._default_resources
        return any(ref.resources for ref in self._selected(servers))

    async def list_resources(self, server: str, *, ctx: Any = None) -> list[dict[str, Any]]:
        """The resources of ``server``: ``[{uri, name, description, mime_type}]``. Under a
        cassette, recorded or replayed (as are reads, prompt listings and fetches): a
        replay reads no server."""
        return await self._taped(
            "resources", {"server": server}, f"the resource listing of {server}",
            lambda: self._list_resources(server),
        )  # fmt: skip

    async def _list_resources(self, server: str) -> list[dict[str, Any]]:
        spec = self._spec(server)
        if spec.transport == "process":
            return [process_resource(spec, name) for name in spec.resources]
        return await self._connection(spec).list_resources()

    async def read_resource(
        self, server: str, uri: str, *, ctx: Any = None
    ) -> list[dict[str, Any]]:
        """The contents of resource ``uri`` of ``server``: ``[{uri, mime_type, text | blob}]``."""
        return await self._taped(
            "resource", {"server": server, "uri": uri}, f"the read of {uri} from {server}",
            lambda: self._read_resource(server, uri, ctx),
        )  # fmt: skip

    async def _read_resource(self, server: str, uri: str, ctx: Any) -> list[dict[str, Any]]:
        spec = self._spec(server)
        if spec.transport != "process":
            return await self._connection(spec).read_resource(uri)
        for name in spec.resources:
            arguments = match_uri(process_resource(spec, name)["uri"], uri)
            if arguments is not None:
                function = await in_own_thread(self._resolve_process, spec, spec.resources[name])
                value = await self._run_process(spec, name, function, arguments, ctx)
                return [resource_content(uri, process_resource(spec, name), value)]
        raise ToolError(f"server {server!r} has no resource {uri!r}")

    async def list_prompts(self, server: str, *, ctx: Any = None) -> list[dict[str, Any]]:
        """The prompts of ``server``: ``[{name, description, arguments}]``."""
        return await self._taped(
            "prompts", {"server": server}, f"the prompt listing of {server}",
            lambda: self._list_prompts(server),
        )  # fmt: skip

    async def _list_prompts(self, server: str) -> list[dict[str, Any]]:
        spec = self._spec(server)
        if spec.transport == "process":
            return [process_prompt(spec, name) for name in spec.prompts]
        return await self._connection(spec).list_prompts()

    async def get_prompt(
        self, server: str, name: str, arguments: dict[str, Any] | None = None, *, ctx: Any = None
    ) -> dict[str, Any]:
        """Prompt ``name`` of ``server`` filled with ``arguments``: ``{description, messages}``."""
        values = {str(k): str(v) for k, v in (arguments or {}).items()}
        return await self._taped(
            "prompt", {"server": server, "prompt": name, "arguments": values},
            f"the prompt {server}/{name}", lambda: self._get_prompt(server, name, values, ctx),
        )  # fmt: skip

    async def _get_prompt(
        self, server: str, name: str, values: dict[str, str], ctx: Any
    ) -> dict[str, Any]:
        spec = self._spec(server)
        if spec.transport != "process":
            return await self._connection(spec).get_prompt(name, values)
        if name not in spec.prompts:
            raise ToolError(f"server {server!r} has no prompt {name!r}")
        function = await in_own_thread(self._resolve_process, spec, spec.prompts[name])
        value = await self._run_process(spec, name, function, values, ctx)
        return prompt_messages(process_prompt(spec, name), value)

    async def _taped(
        self, kind: CassetteKind, request: dict[str, Any], what: str,
        live: Callable[[], Awaitable[_T]],
    ) -> _T:  # fmt: skip
        """``live()`` through the active cassette when the box was opened for cassettes (a
        replayed value is the JSON the live one was recorded as)."""
        if self.cassettes and active_cassette() is not None:
            return cast("_T", await cassette_server_call(kind, request, what, live))
        return await live()

    async def context_resources(
        self, servers: list[Any] | None = None, *, ctx: Any = None
    ) -> list[dict[str, Any]]:
        """The contents of every resource the selection's ``resources`` patterns match, in
        order, each ``{server, uri, name, mime_type, text | blob}``. A pattern is a URI,
        ``*`` matching any run of characters (``data://users/*``); a URI without ``*`` is
        read even when the server does not list it (a template's instance)."""
        found: list[dict[str, Any]] = []
        for ref in self._selected(servers):
            if not ref.resources:
                continue
            listed = await self.list_resources(ref.server_id, ctx=ctx)
            by_uri = {item["uri"]: item for item in listed}
            uris: dict[str, None] = {}
            for pattern in ref.resources:
                if "*" not in pattern:
                    uris[pattern] = None
                    continue
                for uri in by_uri:
                    if fnmatch.fnmatchcase(uri, pattern):
                        uris[uri] = None
            for uri in uris:
                name = next((i["name"] for i in listed if match_uri(i["uri"], uri) is not None), "")
                for content in await self.read_resource(ref.server_id, uri, ctx=ctx):
                    found.append({"server": ref.server_id, "name": name, **content})
        return found

    async def _run_process(
        self,
        spec: ToolServerSpec,
        name: str,
        function: Callable[..., Any],
        arguments: Any,
        ctx: Any,
    ) -> Any:
        """Call a process server's resource or prompt function, as its tools are called."""
        try:
            async with asyncio.timeout(spec.timeout):
                return await call_tool_function(function, arguments, ctx)
        except TimeoutError:
            raise ToolError(f"{spec.id}/{name} timed out after {spec.timeout:g}s") from None
        except AgentCliError:
            raise
        except Exception as error:
            raise ToolError(f"{spec.id}/{name} failed: {type(error).__name__}: {error}") from error

    async def call_tools(
        self, server: str, calls: list[dict[str, Any]], *, ctx: Any = None
    ) -> list[Any]:
        """Call tools one after another (``[{name, arguments}]``); stops at the first failure."""
        return [await self.call_tool(server, *_call(c), ctx=ctx) for c in calls]

    async def call_tools_parallel(
        self, server: str, calls: list[dict[str, Any]], *, ctx: Any = None
    ) -> list[Any]:
        """Call tools concurrently; results in the given order. Every call runs to its end;
        then the first failure (in the given order) is raised."""
        parsed = [_call(c) for c in calls]
        results = await asyncio.gather(
            *(self.call_tool(server, name, args, ctx=ctx) for name, args in parsed),
            return_exceptions=True,
        )
        for result in results:
            if isinstance(result, BaseException):
                raise result
        return results

    def _refs(self, servers: list[Any], source: str) -> list[McpServerRef]:
        refs = parse_server_refs(servers, source=source)
        for ref in refs:
            if ref.server_id not in self.specs:
                known = ", ".join(self.specs) or "none; add mcps/<id>.mcp.yao"
                raise PackageError(
                    f"unknown tool server {ref.server_id!r} (servers: {known})", path=source
                )
        return refs

    def _spec(self, server: str) -> ToolServerSpec:
        spec = self.specs.get(server)
        if spec is None:
            raise ToolError(
                f"unknown tool server {server!r} (servers: {', '.join(self.specs) or 'none'})"
            )
        return spec

    def _connection(self, spec: ToolServerSpec) -> McpConnection:
        connection = self._connections.get(spec.id)
        if connection is None:
            connection = self._connections[spec.id] = McpConnection(spec)
        return connection

    async def _server_tools(self, spec: ToolServerSpec) -> list[Tool]:
        tools = self._built.get(spec.id)
        if tools is None:
            if spec.transport == "process":
                # Imported in a thread of its own: a module that blocks at import is then
                # cut by the case timeout and by Ctrl-C, as a tool that blocks when called is.
                targets = await in_own_thread(self._process_targets, spec)
                tools = [self._process_tool(spec, name, targets[name]) for name in spec.tools]
            else:
                tools = await self._mcp_tools(spec)
            self._built[spec.id] = tools
        return tools

    def _process_targets(self, spec: ToolServerSpec) -> dict[str, Process]:
        """The process behind each tool of a ``process`` server (importing its modules): a
        Process name through the package's resolver; an app-level server's (``mcps/`` beside
        the assistants root) a function of its own folder."""
        from agentcli.assistant.process import Process, wants_ctx

        own = spec.src_dir is None or spec.src_dir == self.package_dir / "src"
        if self.processes is not None and own:
            return {
                name: self.processes.resolve(ref, path=spec.path)
                for name, ref in spec.tools.items()
            }
        targets = {}
        for name, ref in spec.tools.items():
            function = self._resolve_process(spec, ref)
            targets[name] = Process(ref, "python", function, wants_ctx(function))
        return targets

    def _resolve_process(self, spec: ToolServerSpec, ref: str) -> Callable[..., Any]:
        """The function a process server's ``ref`` names in its own folder (its resources
        and prompts resolve here, and an app-level server's tools)."""
        src = spec.src_dir or self.package_dir / "src"
        return load_src_function(src, ref, path=spec.path)

    def _process_tool(self, spec: ToolServerSpec, bare: str, target: Process) -> Tool:
        from agentcli.assistant.process import map_process_args

        schema = self._schema(spec, bare)
        doc = (
            (target.function.__doc__ or "").strip().splitlines() if target.kind == "python" else []
        )
        description = str((schema or {}).get("description") or (doc[0] if doc else ""))
        timeout = spec.timeout
        process_args = spec.process_args.get(bare)

        async def execute(arguments: dict[str, Any], ctx: ToolContext) -> Any:
            # A tool function receives the host's ctx (the hook ctx), like hooks do.
            args = map_process_args(process_args, arguments)
            try:
                async with asyncio.timeout(timeout):
                    result = await target.call(args, ctx.services)
            except TimeoutError:
                raise ToolError(f"{spec.id}/{bare} timed out after {timeout:g}s") from None
            return self._checked_result(spec, bare, result)

        return Tool(
            name=tool_name(spec.id, bare),
            execute=execute,
            description=description,
            parameters=schema or dict(_EMPTY_SCHEMA),
            label=bare,
            server=spec.id,
            bare_name=bare,
            sequential=is_sequential(spec, bare),
        )

    def _checked_result(self, spec: ToolServerSpec, bare: str, result: Any) -> Any:
        """``result``, or an error result when it does not match the tool's ``.out.yao``."""
        schema = spec.output_schemas.get(bare)
        if schema is None or isinstance(result, ToolResult):
            return result
        validator = self._output_validators.get((spec.id, bare))
        if validator is None:
            from jsonschema import Draft202012Validator, SchemaError

            try:
                Draft202012Validator.check_schema(schema)
            except SchemaError as error:
                raise PackageError(
                    f"invalid JSON Schema: {error.message}",
                    path=str(spec.output_schema_paths[bare]),
                ) from None
            validator = self._output_validators[(spec.id, bare)] = Draft202012Validator(schema)
        from jsonschema.exceptions import best_match

        from agentcli.jsonsafe import json_safe

        problem = best_match(validator.iter_errors(json_safe(result)))
        if problem is None:
            return result
        shown = spec.output_schema_paths[bare].name
        return ToolResult(
            "",
            bare,
            f"{spec.id}/{bare} returned a result that does not match {shown}"
            f" at {problem.json_path}: {problem.message}",
            is_error=True,
        )

    async def _mcp_tools(self, spec: ToolServerSpec) -> list[Tool]:
        connection = self._connection(spec)
        tools = []
        listed = await connection.list_tools()
        check_sequential(spec, [info.name for info in listed])
        self._task_only[spec.id] = [i.name for i in listed if i.task_support == "required"]
        for info in listed:
            parameters = self._schema(spec, info.name) or info.input_schema or dict(_EMPTY_SCHEMA)
            tools.append(
                Tool(
                    name=tool_name(spec.id, info.name),
                    execute=self._mcp_execute(spec, connection, info.name),
                    description=info.description,
                    parameters=parameters,
                    label=info.name,
                    server=spec.id,
                    bare_name=info.name,
                    sequential=is_sequential(spec, info.name),
                )
            )
        return tools

    def _mcp_execute(
        self, spec: ToolServerSpec, connection: McpConnection, name: str
    ) -> Callable[..., Any]:
        async def execute(arguments: dict[str, Any], ctx: ToolContext) -> Any:
            def progress(done: float, total: float | None, message: str | None) -> None:
                # becomes a tool_execution_update event (`agent run -v` shows it)
                ctx.update({"progress": done, "total": total, "message": message})

            value, is_error = await connection.call_tool(name, arguments, progress=progress)
            if is_error:
                return ToolResult("", name, value, is_error=True)
            return self._checked_result(spec, name, value)

        return execute

    def _schema(self, spec: ToolServerSpec, tool: str) -> dict[str, Any] | None:
        """The mapping schema of ``tool``, checked to be a valid JSON Schema."""
        schema = spec.schemas.get(tool)
        if schema is not None:
            from jsonschema import Draft202012Validator, SchemaError

            try:
                Draft202012Validator.check_schema(schema)
            except SchemaError as error:
                where = "/".join(str(p) for p in error.path) or "top level"
                raise PackageError(
                    f"invalid JSON Schema at {where}: {error.message}",
                    path=str(spec.schema_paths[tool]),
                ) from None
        return schema


def _listed(tool: Tool) -> dict[str, Any]:
    """What a cassette keeps of a listed tool."""
    return {
        "name": tool.name,
        "description": tool.description,
        "parameters": tool.parameters,
        "label": tool.label,
        "server": tool.server,
        "bare_name": tool.bare_name,
        "sequential": tool.sequential,
    }


def _recording_tool(tool: Tool) -> Tool:
    """``tool``, its calls recorded into the active cassette."""

    async def execute(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        return await cassette_call(
            tool.server, tool.bare_name, arguments,
            lambda: call_tool_function(tool.execute, arguments, ctx), raising=False,
        )  # fmt: skip

    return dataclasses.replace(tool, execute=execute)


def _replayed_tool(item: dict[str, Any], live: Callable[..., Awaitable[Any]]) -> Tool:
    """A tool from a cassette's listing, its calls answered from the cassette (or, for one
    it lacks under ``--record missing``, by ``live``)."""
    server, bare = str(item.get("server") or ""), str(item.get("bare_name") or "")

    async def execute(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        return await cassette_call(
            server, bare, arguments, lambda: live(server, bare, arguments, ctx), raising=False
        )

    return Tool(
        name=str(item.get("name") or bare),
        execute=execute,
        description=str(item.get("description") or ""),
        parameters=dict(item.get("parameters") or _EMPTY_SCHEMA),
        sequential=bool(item.get("sequential")),
        label=str(item.get("label") or bare),
        server=server,
        bare_name=bare,
    )


def _note_stubbed(ctx: Any, call: InterceptedCall, result: Any, error: str | None) -> None:
    """List a ``ctx.mcp`` call a stub answered among the reply's tool calls (the request's
    ``ctx.stubbed_calls``), marked as the model's stubbed calls are; a call the stub did
    not answer (it ran, or failed by a fault or ``unmatched: error``) is not listed."""
    calls = getattr(ctx, "stubbed_calls", None)
    if not call.marks.get(STUBBED) or not isinstance(calls, list):
        return
    calls.append(
        ReplyToolCall(
            server=call.server,
            tool=call.tool,
            arguments=call.arguments,
            result=None if error is not None else result,
            error=error,
            stubbed=True,
            fault=call.marks.get(FAULT),
        )
    )


def _direct_context(ctx: Any) -> ToolContext:
    """The ToolContext of a call made through ``ctx.mcp`` rather than by the model."""
    return ToolContext(ToolCall(id="", name=""), services=ctx)


def _call(entry: Any) -> tuple[str, dict[str, Any]]:
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        raise ToolError(f"a tool call must be {{name, arguments}}, got {entry!r}")
    return entry["name"], entry.get("arguments") or {}

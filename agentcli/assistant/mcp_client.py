"""Connections to real MCP servers (stdio, streamable HTTP, SSE) through the official SDK.

A connection opens on first use, never at package load: nothing is spawned or imported
until a tool of the server is listed or called. The SDK's client must be entered and exited
by one task (its transports are anyio task groups), so each connection lives in a
background task that owns it; callers from any task share the one session, which
multiplexes concurrent requests.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any, TextIO

from agentcli.assistant.mcps import ToolServerSpec
from agentcli.errors import ToolError, ToolServerError

__all__ = [
    "McpConnection",
    "McpToolInfo",
    "Progress",
    "content_parts",
    "prompt_value",
    "resource_contents",
    "result_value",
]

# What a progress notification carries: (progress, total, message).
Progress = Callable[[float, float | None, str | None], None]

_CONNECT_TIMEOUT = 30.0
# The SDK's own shutdown (flush, stdin closed, grace, SIGTERM, SIGKILL, reap) is bounded by
# ~6.5 s; past this a connection task is cancelled outright and then abandoned.
_STOP_GRACE = 8.0
_ABANDON_AFTER = 1.0
_HTTP_READ_TIMEOUT = 300.0  # streamable HTTP / SSE hold a response stream open
_MAX_PAGES = 100
_STDERR_TAIL = 1500


@dataclass(slots=True, frozen=True)
class McpToolInfo:
    """A tool as a server lists it: name, description and input schema."""

    name: str
    description: str
    input_schema: dict[str, Any]
    # MCP's execution.taskSupport: "required" tools can only run as tasks, which the
    # runtime does not start, so they are not offered to the model
    task_support: str = "forbidden"


class McpConnection:
    """One MCP server: connects lazily, lists and calls tools, stops on ``aclose()``."""

    def __init__(self, spec: ToolServerSpec) -> None:
        self.spec = spec
        self._lock = asyncio.Lock()
        self._ready: asyncio.Future[Any] | None = None
        self._stop: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._scope: Any = None  # the anyio cancel scope the connection task runs in
        self._stopping: set[asyncio.Task[None]] = set()  # stopped, the server not yet gone
        self._tools: list[McpToolInfo] | None = None
        self._wrapped: set[str] = set()

    async def list_tools(self) -> list[McpToolInfo]:
        """The server's tools (listed once per connection, every page)."""
        if self._tools is None:
            ready, client = await self._connect()
            tools: list[McpToolInfo] = []
            cursor: str | None = None
            for _ in range(_MAX_PAGES):
                page = await self._request(ready, client.list_tools(cursor=cursor), "list tools")
                for tool in page.tools:
                    execution = getattr(tool, "execution", None)
                    tools.append(
                        McpToolInfo(
                            tool.name,
                            tool.description or "",
                            dict(tool.input_schema or {}),
                            getattr(execution, "task_support", None) or "forbidden",
                        )
                    )
                    if _wraps_result(tool.output_schema):
                        self._wrapped.add(tool.name)
                cursor = page.next_cursor
                if not cursor:
                    break
            self._tools = tools
        return self._tools

    async def call_tool(
        self, name: str, arguments: dict[str, Any], *, progress: Progress | None = None
    ) -> tuple[Any, bool]:
        """Call a tool; returns ``(value, is_error)`` as ``result_value`` reads the result.
        ``progress`` sees the server's progress notifications for this call."""
        ready, client = await self._connect()
        callback = None
        if progress is not None:

            async def callback(done: float, total: float | None, message: str | None) -> None:
                progress(done, total, message)

        call = client.call_tool(name, arguments, progress_callback=callback)
        result = await self._request(ready, call, f"call {name!r}")
        return result_value(result, unwrap=name in self._wrapped)

    async def list_resources(self) -> list[dict[str, Any]]:
        """The server's resources (every page): ``[{uri, name, description, mime_type}]``."""
        ready, client = await self._connect()
        found: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(_MAX_PAGES):
            page = await self._request(
                ready, client.list_resources(cursor=cursor), "list resources"
            )
            for item in page.resources:
                found.append(
                    {
                        "uri": str(item.uri),
                        "name": item.name,
                        "description": item.description or "",
                        "mime_type": item.mime_type or "",
                    }
                )
            cursor = page.next_cursor
            if not cursor:
                break
        return found

    async def read_resource(self, uri: str) -> list[dict[str, Any]]:
        """The contents of ``uri``: ``[{uri, mime_type, text}]`` or ``{..., blob}`` (base64)."""
        ready, client = await self._connect()
        result = await self._request(ready, client.read_resource(uri), f"read {uri!r}")
        return resource_contents(result.contents)

    async def list_prompts(self) -> list[dict[str, Any]]:
        """The server's prompts (every page): ``[{name, description, arguments}]``."""
        ready, client = await self._connect()
        found: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(_MAX_PAGES):
            page = await self._request(ready, client.list_prompts(cursor=cursor), "list prompts")
            for prompt in page.prompts:
                arguments = [
                    {
                        "name": a.name,
                        "description": a.description or "",
                        "required": bool(a.required),
                    }
                    for a in prompt.arguments or []
                ]
                found.append(
                    {
                        "name": prompt.name,
                        "description": prompt.description or "",
                        "arguments": arguments,
                    }
                )
            cursor = page.next_cursor
            if not cursor:
                break
        return found

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> dict[str, Any]:
        """A prompt filled with ``arguments``: ``{description, messages}`` (chat messages)."""
        ready, client = await self._connect()
        call = client.get_prompt(name, arguments or None)
        result = await self._request(ready, call, f"get prompt {name!r}")
        return prompt_value(result)

    async def aclose(self) -> None:
        """Close the session and stop the server process (no orphans left behind)."""
        async with self._lock:
            self._shutdown()
        await self._settle()

    async def _connect(self) -> tuple[asyncio.Future[Any], Any]:
        """The current connection (started if needed): its start future and its client."""
        async with self._lock:
            if self._ready is None:
                self._start()
            ready = self._ready
        assert ready is not None
        timeout = self.spec.timeout or _CONNECT_TIMEOUT
        try:
            async with asyncio.timeout(timeout):
                return ready, await asyncio.shield(ready)
        except TimeoutError:
            await self._stop_if(ready)
            raise ToolServerError(
                f"tool server {self.spec.id!r} did not start within {timeout:g}s",
                hint=f"check {self.spec.path}",
            ) from None
        except ToolError:
            await self._stop_if(ready)
            raise

    async def _stop_if(self, ready: asyncio.Future[Any]) -> None:
        """Shut the connection down unless another caller already replaced it; the server
        stops in the background (``aclose`` waits for it), so the caller's error is prompt."""
        async with self._lock:
            if self._ready is ready:
                self._shutdown()

    def _start(self) -> None:
        loop = asyncio.get_running_loop()
        self._ready = loop.create_future()
        self._stop = asyncio.Event()
        import anyio

        # Made here, entered by the task: a stop before the task first runs still lands.
        self._scope = anyio.CancelScope()
        self._task = loop.create_task(
            self._own(self._ready, self._stop, self._scope), name=f"mcp {self.spec.id}"
        )

    async def _own(self, ready: asyncio.Future[Any], stop: asyncio.Event, scope: Any) -> None:
        """Enter the SDK client, publish it, hold it until asked to stop."""
        from mcp import Client

        # The server's stderr is kept aside (not mixed into our output) and shown when it fails.
        with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as stderr:
            try:
                # Stopped through this scope, not Task.cancel(): a native cancel breaks into
                # the SDK's shielded shutdown, leaving the server alive and its pipes open.
                with scope:
                    transport = self._transport(stderr)
                    async with Client(
                        transport, read_timeout_seconds=self.spec.timeout, mode=self.spec.protocol
                    ) as client:
                        if not ready.done():
                            ready.set_result(client)
                        await stop.wait()
                if not ready.done():  # the scope was cancelled while it was still starting
                    ready.cancel()
            except asyncio.CancelledError:
                if not ready.done():
                    ready.cancel()
                raise
            except Exception as error:
                # A failure after the start reaches callers as a closed connection instead.
                if not ready.done():
                    ready.set_exception(self._start_error(error, stderr))

    def _transport(self, stderr: TextIO) -> AbstractAsyncContextManager[Any]:
        spec = self.spec
        if spec.transport == "stdio":
            from mcp import StdioServerParameters
            from mcp.client.stdio import stdio_client

            # The SDK passes only a safe part of our environment (PATH, HOME, ...) plus `env`.
            parameters = StdioServerParameters(
                command=spec.command, args=spec.args, env=spec.env or None, cwd=spec.cwd
            )
            return stdio_client(parameters, errlog=stderr)
        if spec.transport == "sse":
            from mcp.client.sse import sse_client

            return sse_client(
                spec.url,
                headers=spec.headers or None,
                timeout=spec.timeout or _CONNECT_TIMEOUT,
                sse_read_timeout=_HTTP_READ_TIMEOUT,
            )
        return _streamable_http(spec)

    async def _request(self, ready: asyncio.Future[Any], call: Any, what: str) -> Any:
        from mcp import MCPError
        from mcp_types import CONNECTION_CLOSED

        try:
            return await call
        except MCPError as error:
            if error.code != CONNECTION_CLOSED:
                raise ToolError(f"tool server {self.spec.id!r}: {error.message}") from None
            # The server went away; the next use starts it again.
            await self._stop_if(ready)
            raise ToolServerError(
                f"tool server {self.spec.id!r} stopped ({error.message}); it is restarted on next use",
                hint=f"check {self.spec.path}",
            ) from None
        except (RuntimeError, ValueError, OSError) as error:
            raise ToolError(f"tool server {self.spec.id!r} could not {what}: {error}") from None

    def _start_error(self, error: BaseException, stderr: TextIO) -> ToolServerError:
        while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
            error = error.exceptions[0]
        detail = str(error) or type(error).__name__
        if detail == "Connection closed":  # the SDK's words for a server that went away
            detail = "it exited (or closed its output) before answering"
        hint = f"check {self.spec.path}"
        stderr.seek(0)
        tail = stderr.read()[-_STDERR_TAIL:].strip()
        if tail:
            hint += f"; the server wrote:\n{tail}"
        return ToolServerError(f"tool server {self.spec.id!r} could not start: {detail}", hint=hint)

    def _shutdown(self) -> None:
        """Tell the connection task to stop (the SDK then closes stdin, waits, kills)."""
        task, stop, ready, scope = self._task, self._stop, self._ready, self._scope
        self._task = self._stop = self._ready = self._scope = None
        self._tools = None
        if task is None or stop is None:
            return
        stop.set()
        if ready is not None and not ready.done() and scope is not None:
            scope.cancel()  # still connecting: the SDK's start-up waits need a cancel
        self._stopping.add(task)
        task.add_done_callback(self._stopping.discard)

    async def _settle(self) -> None:
        """Wait, bounded, for every stopped connection task to have stopped its server."""
        if not self._stopping:
            return
        # asyncio.wait, not gather: a caller cancelled while waiting must not cancel them.
        await asyncio.wait(set(self._stopping), timeout=_STOP_GRACE)
        late = set(self._stopping)
        for task in late:
            task.cancel()  # the SDK's bounded shutdown overran: stop waiting for it
        if late:
            await asyncio.wait(late, timeout=_ABANDON_AFTER)


@asynccontextmanager
async def _streamable_http(spec: ToolServerSpec) -> AsyncIterator[Any]:
    """The streamable HTTP transport with the spec's headers and timeout."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    timeout = httpx2.Timeout(spec.timeout or _CONNECT_TIMEOUT, read=_HTTP_READ_TIMEOUT)
    async with (
        httpx2.AsyncClient(headers=spec.headers, timeout=timeout) as http,
        streamable_http_client(spec.url, http_client=http) as streams,
    ):
        yield streams


def _wraps_result(output_schema: dict[str, Any] | None) -> bool:
    """Whether a tool's output schema is the SDK's ``{"result": ...}`` wrapper, which carries a
    value that is not an object (structured content must be one)."""
    properties = (output_schema or {}).get("properties")
    return isinstance(properties, dict) and list(properties) == ["result"]


def result_value(result: Any, *, unwrap: bool = False) -> tuple[Any, bool]:
    """A ``CallToolResult`` as ``(value, is_error)``.

    Structured content wins (``{"result": x}`` read as ``x`` when ``unwrap``); otherwise
    text blocks are joined, and text that is a JSON object or array is parsed (servers
    commonly return JSON as text); other blocks (images, resources) keep their JSON form.
    """
    structured = result.structured_content
    if structured is not None and not result.is_error:
        if unwrap and isinstance(structured, dict) and list(structured) == ["result"]:
            return structured["result"], False
        return structured, False
    blocks = list(result.content or [])
    if all(getattr(block, "type", None) == "text" for block in blocks):
        text = "\n".join(block.text for block in blocks)
        if not result.is_error and text.lstrip().startswith(("{", "[")):
            try:
                return json.loads(text), False
            except ValueError:
                pass
        return text, bool(result.is_error)
    dumped = [block.model_dump(mode="json", by_alias=True, exclude_none=True) for block in blocks]
    parts = content_parts(dumped)
    return (dumped if parts is None else parts), bool(result.is_error)


def _audio_format(mime_type: str) -> str:
    """OpenAI's ``input_audio.format`` for a MIME type (``audio/mpeg`` -> ``mp3``)."""
    subtype = mime_type.partition("/")[2].lower()
    return {"mpeg": "mp3", "x-wav": "wav", "wave": "wav"}.get(subtype, subtype or "wav")


def content_parts(blocks: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """MCP content blocks with an image or audio among them as OpenAI content parts (image
    as a ``data:`` URL, audio as ``input_audio``), so the model receives the media itself;
    None when there is no media (the blocks stay as they are)."""
    if not any(block.get("type") in ("image", "audio") for block in blocks):
        return None
    parts: list[dict[str, Any]] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "image":
            url = f"data:{block.get('mimeType') or 'image/png'};base64,{block.get('data', '')}"
            parts.append({"type": "image_url", "image_url": {"url": url}})
        elif kind == "audio":
            audio = {
                "data": block.get("data", ""),
                "format": _audio_format(block.get("mimeType", "")),
            }
            parts.append({"type": "input_audio", "input_audio": audio})
        elif kind == "text":
            parts.append({"type": "text", "text": str(block.get("text", ""))})
        else:  # an embedded resource or a link: what it is, as text
            parts.append({"type": "text", "text": json.dumps(block, ensure_ascii=False)})
    return parts


def resource_contents(contents: list[Any]) -> list[dict[str, Any]]:
    """``ReadResourceResult.contents`` as plain dicts: ``{uri, mime_type, text | blob}``."""
    found: list[dict[str, Any]] = []
    for item in contents:
        entry: dict[str, Any] = {"uri": str(item.uri), "mime_type": item.mime_type or ""}
        if getattr(item, "text", None) is not None:
            entry["text"] = item.text
        else:
            entry["blob"] = getattr(item, "blob", "")
        found.append(entry)
    return found


def prompt_value(result: Any) -> dict[str, Any]:
    """A ``GetPromptResult`` as ``{description, messages}``: text content as a string, other
    blocks (images, resources) as their JSON form."""
    messages = []
    for message in result.messages:
        block = message.content
        if getattr(block, "type", None) == "text":
            content: Any = block.text
        else:
            dumped = block.model_dump(mode="json", by_alias=True, exclude_none=True)
            content = content_parts([dumped]) or [dumped]
        messages.append({"role": message.role, "content": content})
    return {"description": result.description or "", "messages": messages}

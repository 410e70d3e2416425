"""``ctx.agent``, ``ctx.llm`` and ``ctx.mcp``: calls from hooks and tools to other
assistants, to connectors and to the package's tool servers.

Each method works from both worlds through ``ctx.bridge``: awaited in an async hook, or
called plainly from a sync hook or tool (which blocks until the call is done). Calls to
several targets follow the seed: ``all`` (every answer, in order), ``any`` (the first answer
without an error, else the last error) and ``race`` (the first answer, error or not); each
takes a shared callback too (``all(requests, {"on_chunk": f})``, ``f(target, index, text)``).
An ``on_chunk`` (or Yao's ``onChunk``) that returns a non-zero number stops that stream: the
answer so far is the answer. Yao's PascalCase names (``CallToolsParallel``, ``All``) are
aliases of these.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine, Iterable
from typing import TYPE_CHECKING, Any

from agentcli.pascal import PascalAliases

if TYPE_CHECKING:
    from agentcli.assistant.context import Context
    from agentcli.assistant.conversation import Conversation
    from agentcli.runtime.events import Event

__all__ = ["AgentCalls", "LlmCalls", "McpCalls", "stops"]


def stops(answer: object) -> bool:
    """Whether an ``on_chunk`` answer asks to stop the stream: a non-zero number (Yao's
    ``return 1``); None, 0 and anything else go on."""
    return isinstance(answer, int | float) and answer != 0


def _on_chunk(options: dict[str, Any], request: dict[str, Any]) -> Callable[..., Any] | None:
    """The request's chunk callback: ``on_chunk`` or ``onChunk``, in its options or itself."""
    found = (
        options.pop("on_chunk", None)
        or options.pop("onChunk", None)
        or request.get("on_chunk")
        or request.get("onChunk")
    )
    return found if callable(found) else None


class _ChunkStream:
    """An agent event listener passing streamed text to ``on_chunk``; when it asks to stop,
    the conversation is aborted and ``text`` (what was streamed so far) is the answer."""

    def __init__(self, on_chunk: Callable[[str], object]) -> None:
        self.on_chunk = on_chunk
        self.running: list[Conversation] = []  # the conversation of the call, once started
        self.pieces: list[str] = []
        self.stopped = False

    @property
    def text(self) -> str:
        """The text streamed up to the stop."""
        return "".join(self.pieces)

    def __call__(self, event: Event) -> None:
        from agentcli.models.base import TextDelta
        from agentcli.runtime.events import MessageUpdate

        if self.stopped or not isinstance(event, MessageUpdate):
            return
        if isinstance(event.delta, TextDelta):
            self.pieces.append(event.delta.text)
            if stops(self.on_chunk(event.delta.text)):
                self.stopped = True
                for conversation in self.running:
                    conversation.abort()


class _Fanout(PascalAliases):
    """``all`` / ``any`` / ``race`` over one service's ``_call`` (each request a dict, each
    answer a dict with ``error``). ``options`` may give a shared ``on_chunk(target, index,
    text)``, which sees every request's stream (a request's own callback wins)."""

    _ctx: Context
    _target_key = ""  # the request key naming the target, passed to a shared callback

    async def _call(self, request: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def _requests(
        self, requests: list[dict[str, Any]], options: dict[str, Any] | None
    ) -> list[dict[str, Any]]:
        """The requests, each given the shared callback when ``options`` has one."""
        shared = _on_chunk(dict(options or {}), {})
        if shared is None:
            return list(requests)
        given = []
        for index, request in enumerate(requests):
            target = str(request.get(self._target_key) or "")
            chunk = functools.partial(shared, target, index)
            given.append({"on_chunk": chunk, **request})
        return given

    def all(self, requests: list[dict[str, Any]], options: dict[str, Any] | None = None) -> Any:
        """Every request concurrently; every answer, in request order."""
        calls = self._requests(requests, options)
        return self._ctx.bridge(_gather(self._call(r) for r in calls))

    def any(self, requests: list[dict[str, Any]], options: dict[str, Any] | None = None) -> Any:
        """The first answer without an error (else the last error)."""
        calls = self._requests(requests, options)
        return self._ctx.bridge(_first(self._call(r) for r in calls))

    def race(self, requests: list[dict[str, Any]], options: dict[str, Any] | None = None) -> Any:
        """The first answer to arrive, error or not."""
        calls = self._requests(requests, options)
        return self._ctx.bridge(_first((self._call(r) for r in calls), ok_only=False))


class AgentCalls(_Fanout):
    """``ctx.agent``: call other assistants (A2A). ``all``/``any``/``race`` take
    requests ``{agent, messages, options}``."""

    _target_key = "agent"

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx

    async def _call(self, request: dict[str, Any]) -> dict[str, Any]:
        agent_id = str(request.get("agent") or request.get("agent_id") or "")
        options = dict(request.get("options") or {})
        on_chunk = _on_chunk(options, request)
        chunks = _ChunkStream(on_chunk) if on_chunk else None
        try:
            reply = await self._ctx.registry.ask(
                agent_id,
                _as_messages(request.get("messages")),
                parent=self._ctx,
                options=options,
                on_event=chunks,
                started=chunks.running.append if chunks else None,
            )
        except Exception as error:  # a failed sub-call is a value the hook can inspect
            return {"agent_id": agent_id, "content": None, "text": None, "error": str(error)}
        if chunks is not None and chunks.stopped:  # the answer is what streamed until then
            return {
                "agent_id": agent_id,
                "content": chunks.text,
                "text": chunks.text,
                "response": reply.to_dict(),
                "error": None,
            }
        return {
            "agent_id": agent_id,
            "content": reply.output,
            "text": reply.text,
            "response": reply.to_dict(),
            "error": reply.error,
        }

    def call(self, agent_id: str, messages: Any, options: dict[str, Any] | None = None) -> Any:
        """Ask one assistant: ``{agent_id, content, text, response, error}``. Options:
        ``connector``, ``mode``, ``metadata``, ``skip``, ``on_chunk(text)``."""
        request = {"agent": agent_id, "messages": messages, "options": options}
        return self._ctx.bridge(self._call(request))


class LlmCalls(_Fanout):
    """``ctx.llm``: call a connector directly, without prompts, hooks or tools. ``all``/``any``/``race`` take
    requests ``{connector, messages, options}``."""

    _target_key = "connector"

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx

    async def _call(self, request: dict[str, Any]) -> dict[str, Any]:
        from agentcli.models.base import ModelSettings

        connector = str(request.get("connector") or "")
        options = dict(request.get("options") or {})
        on_chunk = _on_chunk(options, request)
        try:
            model = self._ctx.registry.model(connector, package=self._ctx.package)
            settings = ModelSettings(
                temperature=options.pop("temperature", None),
                max_tokens=options.pop("max_tokens", None),
                tool_choice=options.pop("tool_choice", None),
                extra=options,
            )
            if self._ctx.registry.seed is not None:  # --seed, as for the agent's calls
                settings.extra.setdefault("seed", self._ctx.registry.seed)
            messages = _as_messages(request.get("messages"))
            response = await _collect_until(model, messages, settings, on_chunk)
        except Exception as error:
            return {"connector": connector, "content": None, "error": str(error)}
        return {
            "connector": connector,
            "content": response.content,
            "response": {
                "content": response.content,
                "finish_reason": response.finish_reason,
                "usage": response.usage.to_dict(),
            },
            "error": None,
        }

    def stream(
        self,
        connector: str,
        messages: Any,
        options: dict[str, Any] | None = None,
        on_chunk: Callable[[str], Any] | None = None,
    ) -> Any:
        """Call ``connector``: ``{connector, content, response, error}``; ``on_chunk(text)``
        (or ``options["on_chunk"]``) sees the answer as it streams."""
        request = {
            "connector": connector,
            "messages": messages,
            "options": options,
            "on_chunk": on_chunk,
        }
        return self._ctx.bridge(self._call(request))


class McpCalls(_Fanout):
    """``ctx.mcp``: the tools of the package's servers (every tool, whatever ``mcp.servers``
    selects for the model). ``all``/``any``/``race`` take
    requests ``{mcp, tool, arguments}``."""

    _target_key = "mcp"

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx

    @property
    def _toolbox(self) -> Any:
        return self._ctx.conversation.assistant.toolbox

    def list_tools(self, server: str | None = None) -> Any:
        """The tools of one server (or all): ``[{server, name, description, input_schema}]``."""
        return self._ctx.bridge(self._toolbox.list_tools(server))

    def call_tool(self, server: str, name: str, arguments: dict[str, Any] | None = None) -> Any:
        """Call one tool and return its result (a failure raises ``ToolError``)."""
        return self._ctx.bridge(self._toolbox.call_tool(server, name, arguments, ctx=self._ctx))

    def call_tools(self, server: str, calls: list[dict[str, Any]]) -> Any:
        """Call tools (``[{name, arguments}]``) one after another; their results."""
        return self._ctx.bridge(self._toolbox.call_tools(server, calls, ctx=self._ctx))

    def call_tools_parallel(self, server: str, calls: list[dict[str, Any]]) -> Any:
        """Call tools concurrently; their results in the given order."""
        return self._ctx.bridge(self._toolbox.call_tools_parallel(server, calls, ctx=self._ctx))

    def list_resources(self, server: str) -> Any:
        """The resources of a server: ``[{uri, name, description, mime_type}]``."""
        return self._ctx.bridge(self._toolbox.list_resources(server, ctx=self._ctx))

    def read_resource(self, server: str, uri: str) -> Any:
        """The contents of a resource: ``[{uri, mime_type, text}]`` (``blob``: base64)."""
        return self._ctx.bridge(self._toolbox.read_resource(server, uri, ctx=self._ctx))

    def list_prompts(self, server: str) -> Any:
        """The prompts of a server: ``[{name, description, arguments}]``."""
        return self._ctx.bridge(self._toolbox.list_prompts(server, ctx=self._ctx))

    def get_prompt(self, server: str, name: str, arguments: dict[str, Any] | None = None) -> Any:
        """A prompt filled with ``arguments``: ``{description, messages}``."""
        return self._ctx.bridge(self._toolbox.get_prompt(server, name, arguments, ctx=self._ctx))

    async def _call(self, request: dict[str, Any]) -> dict[str, Any]:
        server, tool = str(request.get("mcp") or ""), str(request.get("tool") or "")
        try:
            result = await self._toolbox.call_tool(
                server, tool, request.get("arguments"), ctx=self._ctx
            )
        except Exception as error:
            return {"mcp": server, "tool": tool, "error": str(error)}
        return {"mcp": server, "tool": tool, "result": result}


async def _collect_until(
    model: Any, messages: list[dict[str, Any]], settings: Any, on_chunk: Callable[[str], Any] | None
) -> Any:
    """The model's response, streamed to ``on_chunk`` until it asks to stop (then the text
    so far, ``finish_reason`` "stopped")."""
    from contextlib import aclosing

    from agentcli.errors import ProviderError
    from agentcli.models.base import ModelResponse, ResponseDone, TextDelta

    texts: list[str] = []
    async with aclosing(model.stream(messages, [], settings)) as parts:
        async for part in parts:
            if isinstance(part, TextDelta):
                texts.append(part.text)
                if on_chunk is not None and stops(on_chunk(part.text)):
                    return ModelResponse(content="".join(texts), finish_reason="stopped")
            elif isinstance(part, ResponseDone):
                return part.response
    raise ProviderError(f"model {model.name!r} ended its stream without a response")


def _as_messages(messages: Any) -> list[dict[str, Any]]:
    if messages is None:
        return []
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    if isinstance(messages, dict):
        return [messages]
    return list(messages)


async def _gather(coroutines: Iterable[Coroutine[Any, Any, Any]]) -> list[Any]:
    return list(await asyncio.gather(*coroutines))


async def _first(coroutines: Iterable[Coroutine[Any, Any, Any]], *, ok_only: bool = True) -> Any:
    tasks = [asyncio.ensure_future(c) for c in coroutines]
    last: Any = None
    try:
        for next_done in asyncio.as_completed(tasks):
            result = await next_done
            last = result
            if not ok_only or not result.get("error"):
                return result
        return last
    finally:
        for task in tasks:
            task.cancel()

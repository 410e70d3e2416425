"""``ctx.agent``, ``ctx.llm`` and ``ctx.mcp``: calls from hooks and tools to other
assistants, to connectors and to the package's tool servers.

Each method works from both worlds through ``ctx.bridge``: awaited in an async hook, or
called plainly from a sync hook or tool (which blocks until the call is done). Calls to
several targets follow the seed: ``all`` (every answer, in order), ``any`` (the first answer
without an error, else the last error) and ``race`` (the first answer, error or not).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentcli.assistant.context import Context
    from agentcli.runtime.events import Event

__all__ = ["AgentCalls", "LlmCalls", "McpCalls"]


def _text_listener(on_chunk: Callable[[str], object]) -> Callable[[Event], None]:
    """An agent event listener passing streamed text to ``on_chunk``."""
    from agentcli.models.base import TextDelta
    from agentcli.runtime.events import MessageUpdate

    def listener(event: Event) -> None:
        if isinstance(event, MessageUpdate) and isinstance(event.delta, TextDelta):
            on_chunk(event.delta.text)

    return listener


class _Fanout:
    """``all`` / ``any`` / ``race`` over one service's ``_call`` (each request a dict, each
    answer a dict with ``error``)."""

    _ctx: Context

    async def _call(self, request: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def all(self, requests: list[dict[str, Any]]) -> Any:
        """Every request concurrently; every answer, in request order."""
        return self._ctx.bridge(_gather(self._call(r) for r in requests))

    def any(self, requests: list[dict[str, Any]]) -> Any:
        """The first answer without an error (else the last error)."""
        return self._ctx.bridge(_first(self._call(r) for r in requests))

    def race(self, requests: list[dict[str, Any]]) -> Any:
        """The first answer to arrive, error or not."""
        return self._ctx.bridge(_first((self._call(r) for r in requests), ok_only=False))


class AgentCalls(_Fanout):
    """``ctx.agent``: call other assistants (A2A). ``all``/``any``/``race`` take
    requests ``{agent, messages, options}``."""

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx

    async def _call(self, request: dict[str, Any]) -> dict[str, Any]:
        agent_id = str(request.get("agent") or request.get("agent_id") or "")
        options = dict(request.get("options") or {})
        on_chunk = options.pop("on_chunk", None) or request.get("on_chunk")
        try:
            reply = await self._ctx.registry.ask(
                agent_id,
                _as_messages(request.get("messages")),
                parent=self._ctx,
                options=options,
                on_event=_text_listener(on_chunk) if on_chunk else None,
            )
        except Exception as error:  # a failed sub-call is a value the hook can inspect
            return {"agent_id": agent_id, "content": None, "text": None, "error": str(error)}
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

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx

    async def _call(self, request: dict[str, Any]) -> dict[str, Any]:
        from agentcli.models.base import ModelSettings, collect

        connector = str(request.get("connector") or "")
        options = dict(request.get("options") or {})
        on_chunk = options.pop("on_chunk", None) or request.get("on_chunk")
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
            response = await collect(model, messages, [], settings, on_text=on_chunk)
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

    async def _call(self, request: dict[str, Any]) -> dict[str, Any]:
        server, tool = str(request.get("mcp") or ""), str(request.get("tool") or "")
        try:
            result = await self._toolbox.call_tool(
                server, tool, request.get("arguments"), ctx=self._ctx
            )
        except Exception as error:
            return {"mcp": server, "tool": tool, "error": str(error)}
        return {"mcp": server, "tool": tool, "result": result}


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

"""The ``ctx`` object handed to hooks, tools and script tests.

It carries the request's identity (chat, assistant, user, team, locale, metadata) and the
services of the seed in Python form: ``memory`` (user/team/chat in SQLite, context per
request), ``trace``, output messages (``send``, ``send_stream``, ``append``, ``replace``,
``merge``, ``set``, ``end``), and calls to other assistants (``agent``), to connectors
(``llm``) and to tool servers (``mcp``).

Service methods that do I/O work from both worlds: awaited in an ``async`` hook, or called
plainly in a sync hook (which runs in a worker thread and blocks until the call is done).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentcli.assistant.memory import Memory, MemoryStore
from agentcli.assistant.trace import TraceRecorder
from agentcli.runtime.messages import new_id

if TYPE_CHECKING:
    from agentcli.assistant.session import AssistantRegistry, Conversation

__all__ = ["Context", "OutputMessage"]


@dataclass(slots=True)
class OutputMessage:
    """A message a hook sent to the output stream (``agent run`` shows it, eval records it)."""

    id: str
    type: str = "text"
    props: dict[str, Any] = field(default_factory=dict)
    done: bool = True

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"id": self.id, "type": self.type, "props": self.props, "done": self.done}


class _Bridge:
    """Runs a coroutine from either side: returned to await on the loop's thread, or run
    to completion from a worker thread (sync hooks)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.loop_thread = threading.get_ident()  # built on the loop's thread

    def __call__(self, coroutine: Coroutine[Any, Any, Any]) -> Any:
        if threading.get_ident() == self.loop_thread:
            return coroutine
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()


class AgentCalls:
    """``ctx.agent``: call other assistants."""

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx

    async def _call(self, request: dict[str, Any]) -> dict[str, Any]:
        agent_id = request.get("agent_id") or request.get("assistant_id") or ""
        messages = request.get("messages") or []
        options = dict(request.get("options") or {})
        try:
            reply = await self._ctx.registry.ask(
                agent_id, messages, parent=self._ctx, options=options
            )
        except Exception as error:  # a failed sub-call is a value the hook can inspect
            return {"agent_id": agent_id, "content": None, "error": str(error)}
        return {
            "agent_id": agent_id,
            "content": reply.output,
            "text": reply.text,
            "error": reply.error,
        }

    def call(self, agent_id: str, messages: Any, options: dict[str, Any] | None = None) -> Any:
        """Ask one assistant; returns ``{agent_id, content, text, error}``."""
        request = {"agent_id": agent_id, "messages": _as_messages(messages), "options": options}
        return self._ctx.bridge(self._call(request))

    def all(self, requests: list[dict[str, Any]]) -> Any:
        """Ask several assistants concurrently; every answer, in order."""
        return self._ctx.bridge(_gather([self._call(_request(r)) for r in requests]))

    def any(self, requests: list[dict[str, Any]]) -> Any:
        """The first answer without an error (or the last error)."""
        return self._ctx.bridge(_first(self._call(_request(r)) for r in requests))

    def race(self, requests: list[dict[str, Any]]) -> Any:
        """The first answer to arrive, error or not."""
        return self._ctx.bridge(_first((self._call(_request(r)) for r in requests), ok_only=False))


class LlmCalls:
    """``ctx.llm``: call a connector directly."""

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx

    async def _call(self, request: dict[str, Any]) -> dict[str, Any]:
        from agentcli.models.base import ModelSettings, TextDelta, collect

        connector = request.get("connector") or ""
        options = dict(request.get("options") or {})
        on_chunk: Callable[[str], Any] | None = request.get("on_chunk")
        try:
            model = self._ctx.registry.model(connector, package=self._ctx.package)
            settings = ModelSettings(
                temperature=options.pop("temperature", None),
                max_tokens=options.pop("max_tokens", None),
                extra=options,
            )
            messages = _as_messages(request.get("messages"))
            if on_chunk is None:
                response = await collect(model, messages, [], settings)
                content = response.content
            else:
                parts: list[str] = []
                async for part in model.stream(messages, [], settings):
                    if isinstance(part, TextDelta):
                        parts.append(part.text)
                        on_chunk(part.text)
                content = "".join(parts)
        except Exception as error:
            return {"connector": connector, "content": None, "error": str(error)}
        return {"connector": connector, "content": content, "error": None}

    def stream(
        self,
        connector: str,
        messages: Any,
        options: dict[str, Any] | None = None,
        on_chunk: Callable[[str], Any] | None = None,
    ) -> Any:
        """Call ``connector``; ``on_chunk(text)`` sees the answer as it streams."""
        request = {
            "connector": connector,
            "messages": messages,
            "options": options,
            "on_chunk": on_chunk,
        }
        return self._ctx.bridge(self._call(request))

    def all(self, requests: list[dict[str, Any]]) -> Any:
        """Call several connectors concurrently; every answer, in order."""
        return self._ctx.bridge(_gather([self._call(r) for r in requests]))

    def any(self, requests: list[dict[str, Any]]) -> Any:
        """The first answer without an error."""
        return self._ctx.bridge(_first(self._call(r) for r in requests))

    def race(self, requests: list[dict[str, Any]]) -> Any:
        """The first answer to arrive."""
        return self._ctx.bridge(_first((self._call(r) for r in requests), ok_only=False))


class McpCalls:
    """``ctx.mcp``: the package's tool servers."""

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx

    def list_tools(self, server: str | None = None) -> Any:
        """The tools of one server (or all)."""
        return self._ctx.bridge(self._ctx.conversation.assistant.toolbox.list_tools(server))

    def call_tool(self, server: str, name: str, arguments: dict[str, Any] | None = None) -> Any:
        """Call one tool and return its result."""
        toolbox = self._ctx.conversation.assistant.toolbox
        return self._ctx.bridge(toolbox.call_tool(server, name, arguments, ctx=self._ctx))

    def call_tools(self, server: str, calls: list[dict[str, Any]]) -> Any:
        """Call tools one after another."""
        toolbox = self._ctx.conversation.assistant.toolbox
        return self._ctx.bridge(toolbox.call_tools(server, calls, ctx=self._ctx))

    def call_tools_parallel(self, server: str, calls: list[dict[str, Any]]) -> Any:
        """Call tools concurrently."""
        toolbox = self._ctx.conversation.assistant.toolbox
        return self._ctx.bridge(toolbox.call_tools_parallel(server, calls, ctx=self._ctx))


class Context:
    """The ``ctx`` of one request."""

    def __init__(
        self,
        *,
        conversation: Conversation,
        registry: AssistantRegistry,
        chat_id: str,
        locale: str,
        user_id: str = "",
        team_id: str = "",
        metadata: dict[str, Any] | None = None,
        authorized: dict[str, Any] | None = None,
        store: MemoryStore | None = None,
        on_output: Callable[[OutputMessage], Any] | None = None,
        trace_enabled: bool = True,
    ) -> None:
        self.conversation = conversation
        self.registry = registry
        self.package = conversation.assistant.package
        self.assistant_id = self.package.id
        self.chat_id = chat_id
        self.locale = locale
        self.user_id = user_id
        self.team_id = team_id
        self.metadata: dict[str, Any] = dict(metadata or {})
        self.authorized: dict[str, Any] = dict(authorized or {})
        self.memory = Memory.for_request(store or registry.memory_store, user_id, team_id, chat_id)
        self.trace = TraceRecorder(enabled=trace_enabled)
        self.output: list[OutputMessage] = []
        self._on_output = on_output
        self.bridge = _Bridge(asyncio.get_running_loop())
        self.agent = AgentCalls(self)
        self.llm = LlmCalls(self)
        self.mcp = McpCalls(self)

    # -- output messages ---------------------------------------------------------------

    def _publish(self, message: OutputMessage) -> OutputMessage:
        if self._on_output is not None:
            self._on_output(message)
        return message

    def _find(self, message_id: str) -> OutputMessage:
        for message in self.output:
            if message.id == message_id:
                return message
        raise KeyError(f"no output message {message_id!r}")

    def send(self, message: Any) -> str:
        """Send a complete message (a string or ``{type, props}``); returns its id."""
        kind, props = _message_parts(message)
        sent = OutputMessage(new_id(), kind, props)
        self.output.append(sent)
        self._publish(sent)
        return sent.id

    def send_stream(self, message: Any = "") -> str:
        """Start a streaming message; continue it with ``append`` and finish with ``end``."""
        kind, props = _message_parts(message)
        sent = OutputMessage(new_id(), kind, props, done=False)
        self.output.append(sent)
        self._publish(sent)
        return sent.id

    def append(self, message_id: str, text: str) -> None:
        """Add text to a message's content."""
        message = self._find(message_id)
        message.props["content"] = str(message.props.get("content", "")) + str(text)
        self._publish(message)

    def replace(self, message_id: str, message: Any) -> None:
        """Replace a message's type and props."""
        target = self._find(message_id)
        target.type, target.props = _message_parts(message)
        self._publish(target)

    def merge(self, message_id: str, props: dict[str, Any]) -> None:
        """Merge props into a message."""
        target = self._find(message_id)
        target.props.update(props)
        self._publish(target)

    def set(self, message_id: str, key: str, value: Any) -> None:
        """Set one prop of a message."""
        target = self._find(message_id)
        target.props[key] = value
        self._publish(target)

    def end(self, message_id: str) -> None:
        """Mark a streaming message finished."""
        target = self._find(message_id)
        target.done = True
        self._publish(target)

    def close(self) -> None:
        """End the request: finish the trace and drop request-scoped memory."""
        self.trace.mark_complete()
        self.memory.close()


def _message_parts(message: Any) -> tuple[str, dict[str, Any]]:
    if isinstance(message, dict):
        return str(message.get("type", "text")), dict(message.get("props") or {})
    return "text", {"content": "" if message is None else str(message)}


def _as_messages(messages: Any) -> list[dict[str, Any]]:
    if messages is None:
        return []
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    if isinstance(messages, dict):
        return [messages]
    return list(messages)


def _request(request: dict[str, Any]) -> dict[str, Any]:
    return {**request, "messages": _as_messages(request.get("messages"))}


async def _gather(coroutines: list[Coroutine[Any, Any, Any]]) -> list[Any]:
    return list(await asyncio.gather(*coroutines))


async def _first(coroutines: Any, *, ok_only: bool = True) -> Any:
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

"""The ``ctx`` object handed to hooks, tools and script tests.

It carries the request's identity (chat, assistant, user, team, locale, metadata,
authorized) and the services of the seed in Python form: ``memory`` (user/team/chat in
SQLite, context per request), ``trace``, output messages (``send``, ``send_stream``,
``append``, ``replace``, ``merge``, ``set``, ``end``, blocks), and calls to other assistants
(``agent``), to connectors (``llm``) and to tool servers (``mcp``), ``sandbox`` (a
workspace for files and commands, when the package or the case asks for one; None else)
and ``search`` (web, knowledge-base and database search: ``agentcli.assistant.search``).

Service methods that do I/O work from both worlds: awaited in an ``async`` hook, or called
plainly in a sync hook (which runs in a thread of its own and blocks until the call is done).
Calls to several targets follow the seed: ``all`` (every answer, in order), ``any`` (the
first answer without an error) and ``race`` (the first answer). A failed agent or LLM call
is a value with an ``error`` key, never an exception; ``ctx.mcp.call_tool`` raises
``ToolError`` like the seed's CallTool, while ``ctx.mcp.all/any/race`` return error values.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentcli.assistant.calls import AgentCalls, LlmCalls, McpCalls
from agentcli.assistant.memory import Memory
from agentcli.assistant.trace import TraceRecorder
from agentcli.pascal import PascalAliases

if TYPE_CHECKING:
    from agentcli.assistant.conversation import Conversation
    from agentcli.assistant.request import ToolCall
    from agentcli.assistant.sandbox import Sandbox, SandboxSpec
    from agentcli.assistant.sandbox.handle import SandboxHandle
    from agentcli.assistant.search.handle import SearchHandle
    from agentcli.assistant.session import AssistantRegistry

__all__ = ["Context", "OutputMessage"]


@dataclass(slots=True)
class OutputMessage:
    """A message a hook sent to the output stream (``agent run`` shows it, eval records it)."""

    id: str
    type: str = "text"
    props: dict[str, Any] = field(default_factory=dict)
    done: bool = True
    block_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        data = {"id": self.id, "type": self.type, "props": self.props, "done": self.done}
        if self.block_id is not None:
            data["block_id"] = self.block_id
        return data

    def text(self) -> str:
        """What a terminal shows: the ``content`` prop of a text message, else the props."""
        if self.type == "text" and "content" in self.props:
            return str(self.props["content"])
        return f"[{self.type}] {json.dumps(self.props, ensure_ascii=False, default=str)}"


class _Bridge:
    """Runs a coroutine from either side: returned to await on the loop's thread, or run
    to completion from another thread (sync hooks and tools)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.loop_thread = threading.get_ident()  # built on the loop's thread

    def __call__(self, coroutine: Coroutine[Any, Any, Any]) -> Any:
        if threading.get_ident() == self.loop_thread:
            return coroutine
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()


class Context(PascalAliases):
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
        on_output: Callable[[OutputMessage], Any] | None = None,
        trace_enabled: bool = True,
        sandbox_spec: SandboxSpec | None = None,
        sandbox: Sandbox | None = None,
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
        self.memory = Memory.for_request(registry.memory_store, user_id, team_id, chat_id)
        self.trace = TraceRecorder(enabled=trace_enabled)
        self.output: list[OutputMessage] = []
        self._on_output = on_output
        self._ids = {kind: itertools.count(1) for kind in "MBT"}
        self._lock = threading.Lock()
        self.bridge = _Bridge(asyncio.get_running_loop())
        # A lent workspace (eval's, per case) is the caller's to remove; one made here on
        # first use is removed when the request ends.
        self.sandbox_spec = sandbox.spec if sandbox is not None else sandbox_spec
        self._sandbox = sandbox
        self._owns_sandbox = False
        # Every hit found in this request gets its own citation number (1, 2, ...).
        self.citation_ids = itertools.count(1)
        # The ctx.mcp calls of this request a case's stub answered, in order: the reply
        # lists them with the model's calls (the tool box adds them).
        self.stubbed_calls: list[ToolCall] = []

    # The call helpers are made on access, not kept: kept, each would point back at this
    # ctx, and every request's objects would form cycles only the collector frees.

    @property
    def agent(self) -> AgentCalls:
        """``ctx.agent``: call other assistants."""
        return AgentCalls(self)

    @property
    def llm(self) -> LlmCalls:
        """``ctx.llm``: call a connector directly."""
        return LlmCalls(self)

    @property
    def mcp(self) -> McpCalls:
        """``ctx.mcp``: the package's MCP tools."""
        return McpCalls(self)

    @property
    def sandbox(self) -> SandboxHandle | None:
        """``ctx.sandbox``: the request's workspace (made on first use), or None when neither
        the package nor the case asks for one."""
        from agentcli.assistant.sandbox.handle import SandboxHandle

        workspace = self.sandbox_workspace()
        return None if workspace is None else SandboxHandle(workspace, self.bridge)

    @property
    def search(self) -> SearchHandle:
        """``ctx.search``: web, knowledge-base and database search."""
        from agentcli.assistant.search.handle import SearchHandle

        return SearchHandle(self)

    def sandbox_workspace(self) -> Sandbox | None:
        """The request's sandbox backend (what ``ctx.sandbox`` and the sandbox tools use)."""
        with self._lock:
            if self._sandbox is None and self.sandbox_spec is not None:
                from agentcli.assistant.sandbox import create_sandbox

                self._sandbox = create_sandbox(self.sandbox_spec)
                self._owns_sandbox = True
            return self._sandbox

    def process(self, name: str, *args: Any) -> Any:
        """``Process(name, *args)`` (``agentcli.assistant.process``): the result in a sync
        hook, an awaitable of it in an async one."""
        processes = self.conversation.assistant.processes
        return self.bridge(processes.run(name, list(args), self))

    def __repr__(self) -> str:
        return f"Context(assistant={self.assistant_id!r}, chat={self.chat_id!r})"

    # -- ids -----------------------------------------------------------------------------

    def _next(self, kind: str) -> str:
        with self._lock:
            return f"{kind}{next(self._ids[kind])}"

    def message_id(self) -> str:
        """A new message id (``M1``, ``M2``, ...)."""
        return self._next("M")

    def block_id(self) -> str:
        """A new block id (``B1``, ...) to group messages: ``send(text, block_id)``."""
        return self._next("B")

    def thread_id(self) -> str:
        """A new thread id (``T1``, ...)."""
        return self._next("T")

    # -- output messages ---------------------------------------------------------------

    def _publish(self, message: OutputMessage) -> OutputMessage:
        if self._on_output is not None:
            self._on_output(message)
        return message

    def _find(self, message_id: str) -> OutputMessage:
        for message in self.output:
            if message.id == message_id:
                return message
        raise KeyError(f"no output message {message_id!r} (send it first)")

    def _add(self, message: Any, block_id: str | None, done: bool) -> str:
        kind, props = _message_parts(message)
        sent = OutputMessage(self.message_id(), kind, props, done=done, block_id=block_id)
        self.output.append(sent)
        self._publish(sent)
        return sent.id

    def send(self, message: Any, block_id: str | None = None) -> str:
        """Send a complete message (a string or ``{type, props}``); returns its id."""
        return self._add(message, block_id, done=True)

    def send_stream(self, message: Any = "", block_id: str | None = None) -> str:
        """Start a streaming message; continue it with ``append`` and finish with ``end``."""
        return self._add(message, block_id, done=False)

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

    def merge(self, message_id: str, data: dict[str, Any], path: str = "props") -> None:
        """Merge ``data`` into the object at ``path`` of a message (``props`` by default)."""
        target = self._find(message_id)
        place = _locate(target, path)
        if place is None:
            target.props.update(data)
        else:
            holder, key = place
            current = holder.get(key)
            holder[key] = {**current, **data} if isinstance(current, dict) else dict(data)
        self._publish(target)

    def set(self, message_id: str, value: Any, path: str) -> None:
        """Set the value at ``path`` of a message (``props.status``; ``status`` alone means
        ``props.status``)."""
        target = self._find(message_id)
        place = _locate(target, path)
        if place is None:
            if not isinstance(value, dict):
                raise TypeError(f"props of message {message_id!r} must be a dict")
            target.props = dict(value)
        else:
            holder, key = place
            holder[key] = value
        self._publish(target)

    def end(self, message_id: str) -> None:
        """Mark a streaming message finished."""
        target = self._find(message_id)
        target.done = True
        self._publish(target)

    def end_block(self, block_id: str) -> None:
        """Finish every message of a block."""
        for message in self.output:
            if message.block_id == block_id and not message.done:
                message.done = True
                self._publish(message)

    def close(self) -> None:
        """End the request: finish the trace, drop request-scoped memory and remove the
        workspace made for it."""
        self.trace.mark_complete()
        self.memory.close()
        with self._lock:
            sandbox, owned = self._sandbox, self._owns_sandbox
            self._sandbox, self._owns_sandbox = None, False
        if sandbox is not None and owned:
            sandbox.remove()


def _message_parts(message: Any) -> tuple[str, dict[str, Any]]:
    if isinstance(message, dict):
        return str(message.get("type", "text")), dict(message.get("props") or {})
    return "text", {"content": "" if message is None else str(message)}


def _locate(message: OutputMessage, path: str) -> tuple[dict[str, Any], str] | None:
    """The dict holding the last key of ``path`` inside ``message.props`` (created on the
    way), or None when ``path`` names ``props`` itself."""
    parts = [part for part in path.split(".") if part]
    if parts and parts[0] == "props":
        parts = parts[1:]
    if not parts:
        return None
    holder = message.props
    for part in parts[:-1]:
        child = holder.get(part)
        if not isinstance(child, dict):
            child = holder[part] = {}
        holder = child
    return holder, parts[-1]

"""An assistant package at work: one ``Conversation`` per chat, one ``Assistant`` per package
(its hooks and tool servers loaded once per run), and the ``AssistantRegistry`` that finds
assistants by id, caches models per connector and closes everything at the end.

One request (``Conversation.send``): build ``ctx`` -> Create hook (may delegate) -> prompts,
connector, tools -> the agent's turn -> Next hook (may delegate or replace the output).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentcli.assistant.context import Context, OutputMessage
from agentcli.assistant.hooks import CreateResult, Delegate, Hooks, NextResult
from agentcli.assistant.memory import MemoryStore
from agentcli.assistant.package import AssistantPackage, resolve_assistant
from agentcli.assistant.prompts import context_variables, render_prompts, select_prompts
from agentcli.assistant.tools import ToolBox
from agentcli.errors import ConfigError, HookError
from agentcli.models.base import Model, ModelSettings, Usage
from agentcli.runtime.agent import Agent, TurnResult, as_messages
from agentcli.runtime.messages import new_id, to_llm_messages

__all__ = [
    "MAX_DELEGATE_DEPTH",
    "Assistant",
    "AssistantRegistry",
    "Conversation",
    "Reply",
    "RequestOptions",
    "ToolActivity",
]

MAX_DELEGATE_DEPTH = 8


@dataclass(slots=True)
class RequestOptions:
    """How to run a request; ``connector`` is the caller's override (CLI ``-c``, else the
    case's ``options.connector``)."""

    connector: str | None = None
    locale: str | None = None
    user_id: str = ""
    team_id: str = ""
    chat_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    authorized: dict[str, Any] = field(default_factory=dict)
    skip: dict[str, Any] = field(default_factory=dict)
    mode: str | None = None
    max_steps: int = 20
    on_event: Callable[[Any], Any] | None = None
    on_output: Callable[[OutputMessage], Any] | None = None


@dataclass(slots=True)
class ToolActivity:
    """One tool call of a turn, as reports show it (bare tool name and its server)."""

    id: str
    server: str
    tool: str
    arguments: Any
    result: Any = None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "id": self.id,
            "server": self.server,
            "tool": self.tool,
            "arguments": self.arguments,
            "result": self.result,
            "error": self.error,
        }


@dataclass(slots=True)
class Reply:
    """What one request produced."""

    output: Any
    text: str
    status: str  # done | failed | aborted | max_steps
    tool_calls: list[ToolActivity] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    next: Any = None
    error: str | None = None
    error_kind: str | None = None
    trace: list[dict[str, Any]] = field(default_factory=list)
    sent: list[dict[str, Any]] = field(default_factory=list)
    assistant_id: str = ""
    connector: str = ""
    turn: TurnResult | None = None


class Assistant:
    """A loaded package: its hooks and tool servers, shared by every conversation."""

    def __init__(self, package: AssistantPackage, registry: AssistantRegistry) -> None:
        self.package = package
        self.registry = registry
        self.hooks = Hooks.load(package.id, package.path)
        self.toolbox = ToolBox.for_package(package)

    @property
    def id(self) -> str:
        """The assistant id."""
        return self.package.id

    def conversation(
        self, options: RequestOptions | None = None, *, depth: int = 0
    ) -> Conversation:
        """A new chat with this assistant."""
        return Conversation(self, options or RequestOptions(), depth=depth)

    async def respond(self, messages: Any, options: RequestOptions | None = None) -> Reply:
        """Answer one request in a fresh chat."""
        return await self.conversation(options).send(messages)


class AssistantRegistry:
    """Finds and caches assistants and models for one run; ``aclose`` stops tool servers."""

    def __init__(
        self,
        root: Path | None = None,
        *,
        cwd: Path | None = None,
        memory_store: MemoryStore | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.root = root
        self.cwd = cwd or Path.cwd()
        self.env = env if env is not None else os.environ
        self._memory_store = memory_store
        self._assistants: dict[Path, Assistant] = {}
        self._models: dict[tuple[str, Path | None], Model] = {}

    @property
    def memory_store(self) -> MemoryStore:
        """The SQLite store behind user/team/chat memory (opened on first use)."""
        if self._memory_store is None:
            self._memory_store = MemoryStore()
        return self._memory_store

    def get(self, ref: str | AssistantPackage) -> Assistant:
        """The assistant for an id, a path or a loaded package."""
        package = ref if isinstance(ref, AssistantPackage) else self._resolve(ref)
        key = package.path.resolve()
        assistant = self._assistants.get(key)
        if assistant is None:
            assistant = Assistant(package, self)
            self._assistants[key] = assistant
        return assistant

    def _resolve(self, ref: str) -> AssistantPackage:
        for assistant in self._assistants.values():
            if assistant.id == ref:
                return assistant.package
        return resolve_assistant(ref, root=self.root, cwd=self.cwd)

    def model(self, spec: str, *, package: AssistantPackage | None = None) -> Model:
        """The model for a connector spec, one instance per run (so HTTP clients are reused)."""
        from agentcli.models.connectors import resolve_connector

        package_dir = package.path if package is not None else None
        key = (spec, package_dir)
        model = self._models.get(key)
        if model is None:
            model = resolve_connector(
                spec,
                package_dir=package_dir,
                cwd=self.cwd,
                assistants_root=self.root,
                env=self.env,
            )
            self._models[key] = model
        return model

    async def ask(
        self,
        agent_id: str,
        messages: Any,
        *,
        parent: Context | None = None,
        options: dict[str, Any] | None = None,
        depth: int | None = None,
    ) -> Reply:
        """Run one request against another assistant (``ctx.agent.call``, delegates)."""
        if depth is None:
            depth = parent.conversation.depth + 1 if parent is not None else 0
        if depth > MAX_DELEGATE_DEPTH:
            raise HookError(
                f"delegation to {agent_id!r} exceeds the depth limit of {MAX_DELEGATE_DEPTH}",
                hint="two assistants probably delegate to each other in a loop",
            )
        request = RequestOptions()
        if parent is not None:
            parent_options = parent.conversation.options
            request.locale = parent.locale
            request.user_id, request.team_id = parent.user_id, parent.team_id
            request.authorized = parent.authorized
            request.metadata = dict(parent.metadata)
            request.max_steps = parent_options.max_steps
        options = dict(options or {})
        request.metadata.update(options.pop("metadata", None) or {})
        request.connector = options.pop("connector", None)
        assistant = self.get(agent_id)
        return await assistant.conversation(request, depth=depth).send(messages)

    async def aclose(self) -> None:
        """Stop every tool server started during the run and close the memory store."""
        for assistant in self._assistants.values():
            await assistant.toolbox.aclose()
        if self._memory_store is not None:
            self._memory_store.close()


class Conversation:
    """One chat with an assistant: the agent (and its history) lives across ``send`` calls."""

    def __init__(self, assistant: Assistant, options: RequestOptions, *, depth: int = 0) -> None:
        self.assistant = assistant
        self.options = options
        self.depth = depth
        self.chat_id = options.chat_id or new_id()
        self.agent: Agent | None = None
        self._prompts: list[dict[str, Any]] = []

    @property
    def registry(self) -> AssistantRegistry:
        """The registry of the run."""
        return self.assistant.registry

    @property
    def history(self) -> list[dict[str, Any]]:
        """The conversation so far as OpenAI-style messages."""
        return to_llm_messages(self.agent.messages) if self.agent else []

    def reset(self) -> None:
        """Forget the history (``/reset``)."""
        self.agent = None

    def _connector(self, create: CreateResult | None) -> str:
        package = self.assistant.package
        spec = (
            (create.connector if create else None)
            or self.options.connector
            or package.connector
            or self.registry.env.get("AGENT_CONNECTOR")
        )
        if not spec:
            raise ConfigError(
                f"assistant {package.id!r} has no connector",
                hint='set "connector" in package.yao, pass -c, or set AGENT_CONNECTOR',
            )
        return spec

    def _context(self) -> Context:
        options = self.options
        return Context(
            conversation=self,
            registry=self.registry,
            chat_id=self.chat_id,
            locale=options.locale or "en-us",
            user_id=options.user_id,
            team_id=options.team_id,
            metadata=options.metadata,
            authorized=options.authorized,
            on_output=options.on_output,
            trace_enabled=not options.skip.get("trace"),
        )

    async def send(self, messages: Any) -> Reply:
        """Answer ``messages`` (text, a message, or a list) as the next turn of this chat."""
        new_messages = [_as_dict(m) for m in _as_list(messages)]
        ctx = self._context()
        try:
            return await self._send(ctx, new_messages)
        finally:
            ctx.close()

    async def _send(self, ctx: Context, new_messages: list[dict[str, Any]]) -> Reply:
        package = self.assistant.package
        hooks = self.assistant.hooks
        hook_options = {"connector": self.options.connector, "locale": ctx.locale}
        create = await hooks.run_create(ctx, [*self.history, *new_messages], hook_options)
        if create is not None:
            if create.locale:
                ctx.locale = create.locale
            if create.metadata:
                ctx.metadata.update(create.metadata)
            if create.delegate is not None:
                return await self._delegate(ctx, create.delegate, [*self.history, *new_messages])
            if create.messages is not None:
                self.agent = None  # Create returned the whole conversation to send
                new_messages = [_as_dict(m) for m in create.messages]
        spec = self._connector(create)
        model = self.registry.model(spec, package=package)
        metadata = dict(ctx.metadata)
        if self.options.mode and "__prompt_preset" not in metadata:
            metadata["__prompt_preset"] = self.options.mode
        prompts = select_prompts(
            package,
            hook_preset=create.prompt_preset if create else None,
            metadata=metadata,
            disable_global_prompts=create.disable_global_prompts if create else None,
        )
        variables = context_variables(
            package,
            chat_id=self.chat_id,
            locale=ctx.locale,
            user_id=ctx.user_id,
            team_id=ctx.team_id,
            metadata=ctx.metadata,
        )
        self._prompts = render_prompts(prompts, ctx_vars=variables, env=self.registry.env)
        tools = await self.assistant.toolbox.tools(create.mcp_servers if create else None)
        agent = self._agent(model, tools, create, ctx)
        if self.options.skip.get("history"):
            agent.clear()
        turn = await agent.prompt(as_messages(new_messages))
        return await self._finish(ctx, turn, spec)

    def _agent(
        self, model: Model, tools: list[Any], create: CreateResult | None, ctx: Context
    ) -> Agent:
        options = dict(self.assistant.package.options or {})
        settings = ModelSettings(
            temperature=_pick(create.temperature if create else None, options.get("temperature")),
            max_tokens=_pick(create.max_tokens if create else None, options.get("max_tokens")),
            extra={k: v for k, v in options.items() if k not in ("temperature", "max_tokens")},
        )
        if self.agent is None:
            self.agent = Agent(
                model,
                max_steps=self.options.max_steps,
                prepare_request=self._prepend_prompts,
            )
            if self.options.on_event is not None:
                self.agent.subscribe(self.options.on_event)
        agent = self.agent
        agent.model = model
        agent.tools = {tool.name: tool for tool in tools}
        agent.settings = settings
        agent.services = ctx
        return agent

    def _prepend_prompts(self, request: dict[str, Any]) -> dict[str, Any]:
        return {**request, "messages": [*self._prompts, *request["messages"]]}

    async def _finish(self, ctx: Context, turn: TurnResult, connector: str) -> Reply:
        activities = self._activities(turn)
        payload = {
            "messages": self.history,
            "completion": {
                "content": turn.text,
                "tool_calls": [c.to_dict() for c in turn.tool_calls],
                "usage": turn.usage.to_dict(),
            },
            "tools": [
                {"toolcall_id": a.id, **{k: v for k, v in a.to_dict().items() if k != "id"}}
                for a in activities
            ],
            "error": turn.error,
        }
        after: NextResult | None = await self.assistant.hooks.run_next(
            ctx, payload, {"connector": connector, "locale": ctx.locale}
        )
        if after is not None and after.delegate is not None:
            return await self._delegate(ctx, after.delegate, self.history)
        output: Any = turn.text
        next_data = None
        if after is not None and after.has_data:
            output = next_data = after.data
        return Reply(
            output=output,
            text=turn.text,
            status=turn.reason,
            tool_calls=activities,
            usage=turn.usage,
            next=next_data,
            error=turn.error,
            error_kind=turn.error_kind,
            trace=ctx.trace.to_list(),
            sent=[m.to_dict() for m in ctx.output],
            assistant_id=self.assistant.id,
            connector=connector,
            turn=turn,
        )

    def _activities(self, turn: TurnResult) -> list[ToolActivity]:
        results = {r.call_id: r for r in turn.tool_results}
        tools = self.agent.tools if self.agent else {}
        activities = []
        for call in turn.tool_calls:
            tool = tools.get(call.name)
            result = results.get(call.id)
            failed = result is not None and result.is_error
            activities.append(
                ToolActivity(
                    id=call.id,
                    server=tool.server if tool else "",
                    tool=(tool.bare_name or tool.name) if tool else call.name,
                    arguments=call.arguments,
                    result=None if result is None or failed else result.content,
                    error=result.text() if failed else None,
                )
            )
        return activities

    async def _delegate(
        self, ctx: Context, delegate: Delegate, messages: list[dict[str, Any]]
    ) -> Reply:
        reply = await self.registry.ask(
            delegate.agent_id,
            delegate.messages if delegate.messages is not None else messages,
            parent=ctx,
            options=delegate.options,
            depth=self.depth + 1,
        )
        reply.trace = ctx.trace.to_list() + reply.trace
        reply.sent = [m.to_dict() for m in ctx.output] + reply.sent
        return reply


def _pick(*values: Any) -> Any:
    return next((v for v in values if v is not None), None)


def _as_list(messages: Any) -> list[Any]:
    if isinstance(messages, list):
        return messages
    return [messages]


def _as_dict(message: Any) -> dict[str, Any]:
    if isinstance(message, str):
        return {"role": "user", "content": message}
    if isinstance(message, dict):
        return message
    return {"role": message.role, "content": message.content}

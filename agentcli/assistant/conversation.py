"""One chat with an assistant: ``Conversation.send`` runs a request through the package.

A request: build ``ctx`` -> Create hook (may delegate) -> prompts, connector, tools -> the
agent's turn -> Next hook (may delegate or replace the output) -> ``Reply``.

The chat history is what was said (user messages, answers, tool calls) and lives in the
conversation's storage, so a JSONL storage makes a resumable session. Prompts are put in
front of it on every model call and never stored; ``messages`` returned by Create replace
what the model sees for that request only. A delegated request is remembered as the user's
messages and the delegate's answer.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import TYPE_CHECKING, Any

from agentcli import otel
from agentcli.assistant.context import Context
from agentcli.assistant.hooks import CreateResult, Delegate
from agentcli.assistant.interception import FAULT, STUBBED
from agentcli.assistant.mcp_context import resource_messages
from agentcli.assistant.process import processes_scope
from agentcli.assistant.prompts import context_variables, render_prompts
from agentcli.assistant.request import Reply, RequestOptions, ToolCall
from agentcli.errors import ConfigError
from agentcli.models.base import Model, ModelSettings
from agentcli.runtime.agent import DEFAULT_MAX_STEPS, Agent, TurnResult, as_messages
from agentcli.runtime.messages import Message, new_id, to_llm_messages
from agentcli.runtime.plugins import Step
from agentcli.runtime.storage import Entry, MemoryStorage, Storage

if TYPE_CHECKING:
    from agentcli.assistant.session import Assistant, AssistantRegistry

__all__ = ["Conversation"]

# why a Create field of Yao's has no effect here, for the trace
_IGNORED_BECAUSE = {
    "uses": "uses: of the wrapper tools only search and fetch exist here",
    "theme": "theme/route: there is no UI",
    "route": "theme/route: there is no UI",
}


class Conversation:
    """One chat with an assistant: the history lives across ``send`` calls."""

    def __init__(
        self,
        assistant: Assistant,
        options: RequestOptions,
        *,
        depth: int = 0,
        storage: Storage | None = None,
        chain: tuple[str, ...] = (),
    ) -> None:
        self.assistant = assistant
        self.options = options
        self.depth = depth
        self.chain = chain
        self.chat_id = options.chat_id or new_id()
        self.storage: Storage = storage if storage is not None else MemoryStorage()
        self.agent: Agent | None = None
        self._prompts: list[dict[str, Any]] = []
        self._replacement: tuple[int, list[dict[str, Any]]] | None = None
        self._task: asyncio.Task[Any] | None = None

    @property
    def registry(self) -> AssistantRegistry:
        """The registry of the run."""
        return self.assistant.registry

    @property
    def history(self) -> list[dict[str, Any]]:
        """The conversation so far as OpenAI-style messages."""
        if self.agent is not None:
            return to_llm_messages(self.agent.messages)
        stored = [Message.from_dict(e.data) for e in self.storage.read() if e.type == "message"]
        return to_llm_messages(stored)

    @property
    def connector(self) -> str:
        """The connector a request uses unless its Create hook picks another."""
        return self._connector(None)

    @property
    def is_busy(self) -> bool:
        """True while a request runs."""
        return self._task is not None and not self._task.done()

    def reset(self) -> None:
        """Forget the history (``/reset``)."""
        self.storage.clear()
        self.agent = None

    def abort(self) -> bool:
        """Stop the running request: the model call and tools (the turn ends as aborted), or
        the hook it is in (``send`` then raises ``CancelledError``). False when idle."""
        if self.agent is not None and self.agent.is_busy:
            self.agent.interrupt("interrupted by the user")
            return True
        if self._task is not None and not self._task.done():
            self._task.cancel()
            return True
        return False

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
            sandbox_spec=self.assistant.package.sandbox,
            sandbox=options.sandbox,
        )

    async def send(self, messages: Any) -> Reply:
        """Answer ``messages`` (text, a message, or a list) as the next turn of this chat."""
        new_messages = _as_dicts(messages)
        self._task = asyncio.current_task()
        ctx = self._context()
        package = self.assistant.package
        attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.id": package.id,
            "gen_ai.agent.name": package.name,
        }
        try:
            with (
                processes_scope(self.assistant.processes, ctx),
                otel.span(f"invoke_agent {package.id}", attributes) as traced,
            ):
                reply = await self._send(ctx, new_messages)
                traced.set("agentcli.turn.status", reply.status)
                if reply.error:
                    traced.fail(reply.error, reply.error_kind)
                return reply
        finally:
            ctx.close()
            if self.agent is not None and self.agent.services is ctx:
                # The request is over; kept, the ctx would tie conversation -> agent -> ctx
                # -> conversation into a cycle that only the collector frees.
                self.agent.services = None
            self._task = None
            self._replacement = None

    async def _send(self, ctx: Context, new_messages: list[dict[str, Any]]) -> Reply:
        package = self.assistant.package
        if self.options.skip.get("history"):
            self.reset()  # the input carries the whole conversation
        history = self.history
        hooks = self.assistant.hooks
        create = None
        if hooks.create is not None:  # the hook's arguments are built only for a hook
            hook_options = {
                "connector": self.options.connector,
                "locale": ctx.locale,
                "mode": self.options.mode,
                "metadata": ctx.metadata,
                "skip": dict(self.options.skip),
            }
            create = await hooks.run_create(ctx, [*history, *new_messages], hook_options)
        if create is not None:
            ignored = create.ignored()
            if ignored:
                # Yao's wrapper tools (vision, search, ...), UI theme and route have no
                # counterpart here; say so in the trace rather than pretend they took effect.
                why = "; ".join(dict.fromkeys(_IGNORED_BECAUSE[name] for name in ignored))
                ctx.trace.warn(f"Create returned {', '.join(ignored)}, ignored ({why})")
            if create.locale:
                ctx.locale = create.locale
            if create.metadata:
                ctx.metadata.update(create.metadata)
            if create.delegate is not None:
                return await self._delegate(ctx, create.delegate, history, new_messages)
            if create.messages is not None:
                replaced = len(history) + len(to_llm_messages(as_messages(new_messages)))
                self._replacement = (replaced, _as_dicts(create.messages))
        spec = self._connector(create)
        model = self.registry.model(spec, package=package)
        self._prompts = self._render_prompts(ctx, create)
        if package.search_config is not None:
            from agentcli.assistant.search.inject import auto_search

            seen = create.messages if create and create.messages is not None else None
            found = await auto_search(
                ctx, seen or [*history, *new_messages], create, self.options.skip
            )
            if found is not None:  # after the prompts, so the model sees them last
                self._prompts = [*self._prompts, found]
        servers = create.mcp_servers if create else None
        toolbox = self.assistant.toolbox
        sandbox_tools = ctx.sandbox_spec is not None and ctx.sandbox_spec.tools
        tools = await toolbox.tools(servers, sandbox=sandbox_tools)
        for withheld in toolbox.withheld(servers):
            ctx.trace.warn(
                f"tool {withheld} needs MCP task execution (taskSupport: required); "
                "not offered to the model"
            )
        if toolbox.selects_resources(servers):
            resources = await toolbox.context_resources(servers, ctx=ctx)
            self._prompts = [*self._prompts, *resource_messages(resources, ctx)]
        agent = self._agent(model, tools, create, ctx)
        before = len(ctx.stubbed_calls)  # the hooks' stubbed ctx.mcp calls before the turn's
        turn = await agent.prompt(as_messages(new_messages))
        return await self._finish(ctx, turn, spec, before)

    def _render_prompts(self, ctx: Context, create: CreateResult | None) -> list[dict[str, Any]]:
        from agentcli.assistant.locales import localize_package, normalize_locale

        package = self.assistant.package
        metadata = dict(ctx.metadata)
        if self.options.mode and "__prompt_preset" not in metadata:
            metadata["__prompt_preset"] = self.options.mode
        prompts, warnings = self.assistant.prompts(
            hook_preset=create.prompt_preset if create else None,
            metadata=metadata,
            disable_global_prompts=create.disable_global_prompts if create else None,
        )
        for warning in warnings:
            ctx.trace.warn(warning)
        if not prompts:
            return []
        locales = self.assistant.locales
        if locales.messages and any("{{" in message["content"] for message in prompts):
            # Yao's locale placeholders: {{ key }} filled from locales/<locale>.yml
            prompts = [
                {**m, "content": locales.render(m["content"], ctx.locale, key="prompts")}
                for m in prompts
            ]
        localized = localize_package(package, ctx.locale)
        variables = context_variables(
            package,
            chat_id=self.chat_id,
            locale=normalize_locale(ctx.locale),
            user_id=ctx.user_id,
            team_id=ctx.team_id,
            metadata=ctx.metadata,
            name=localized.name,
            description=localized.description,
        )
        return render_prompts(prompts, ctx_vars=variables, env=self.registry.env)

    def _agent(
        self, model: Model, tools: list[Any], create: CreateResult | None, ctx: Context
    ) -> Agent:
        options = dict(self.assistant.package.options or {})
        settings = ModelSettings(
            temperature=_pick(create.temperature if create else None, options.get("temperature")),
            max_tokens=_pick(
                create.max_tokens if create else None,
                create.max_completion_tokens if create else None,
                options.get("max_tokens"),
            ),
            extra={k: v for k, v in options.items() if k not in ("temperature", "max_tokens")},
        )
        if create is not None and create.audio is not None:  # sent to the model as given
            settings.extra["audio"] = create.audio
        if self.registry.seed is not None:  # --seed, for providers that take one
            settings.extra.setdefault("seed", self.registry.seed)
        package = self.assistant.package
        if self.agent is None:
            self.agent = Agent(
                model,
                storage=self.storage,
                plugins=[PackagePlugin(self)],
                tool_execution=package.tool_execution,
            )
            if self.options.on_event is not None:
                self.agent.subscribe(self.options.on_event)
        agent = self.agent
        # Per request: a Create hook may set it for this turn only.
        agent.max_steps = (
            (create.max_steps if create else None)
            or self.options.max_steps
            or package.max_steps
            or DEFAULT_MAX_STEPS
        )
        agent.model = model
        agent.tools = {tool.name: tool for tool in tools}
        agent.settings = settings
        agent.services = ctx
        return agent

    async def _finish(
        self, ctx: Context, turn: TurnResult, connector: str, before: int = 0
    ) -> Reply:
        activities = self._activities(turn)
        next_data = None
        hooks = self.assistant.hooks
        # An aborted turn was stopped on purpose: no post-processing.
        if turn.reason != "aborted" and hooks.next is not None:
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
            options = {"connector": connector, "locale": ctx.locale, "metadata": ctx.metadata}
            after = await hooks.run_next(ctx, payload, options)
            if after is not None and after.delegate is not None:
                return await self._delegate(ctx, after.delegate, self.history, [])
            if after is not None and after.has_data:
                next_data = after.data
            if after is not None and after.metadata:
                ctx.trace.add(after.metadata, {"label": "Next metadata", "type": "hook"}).complete()
        ctx.trace.mark_complete()
        return Reply(
            output=turn.text if next_data is None else next_data,
            text=turn.text,
            status=turn.reason,
            # in the order they were made: a hook's stubbed ctx.mcp calls before the turn
            # (Create), the model's, then those made during it (its tools') and after (Next)
            tool_calls=[*ctx.stubbed_calls[:before], *activities, *ctx.stubbed_calls[before:]],
            usage=turn.usage,
            next=next_data,
            error=turn.error,
            error_kind=turn.error_kind,
            trace=ctx.trace.to_list(),
            sent=[m.to_dict() for m in ctx.output],
            assistant_id=self.assistant.id,
            connector=_label(connector),
            turn=turn,
        )

    def _activities(self, turn: TurnResult) -> list[ToolCall]:
        results = {r.call_id: r for r in turn.tool_results}
        tools = self.agent.tools if self.agent else {}
        activities = []
        for call in turn.tool_calls:
            tool = tools.get(call.name)
            result = results.get(call.id)
            failed = result if result is not None and result.is_error else None
            error = failed.text() if failed is not None else None
            details = result.details if result is not None else {}
            activities.append(
                ToolCall(
                    id=call.id,
                    server=tool.server if tool else "",
                    tool=(tool.bare_name or tool.name) if tool else call.name,
                    arguments=call.arguments,
                    result=None if result is None or error is not None else result.content,
                    error=error,
                    error_type=failed.details.get("error_type") if failed is not None else None,
                    stubbed=bool(details.get(STUBBED)),
                    fault=details.get(FAULT),
                )
            )
        return activities

    async def _delegate(
        self,
        ctx: Context,
        delegate: Delegate,
        history: list[dict[str, Any]],
        new_messages: list[dict[str, Any]],
    ) -> Reply:
        messages = delegate.messages if delegate.messages is not None else history + new_messages
        reply = await self.registry.ask(
            delegate.agent_id,
            messages,
            parent=ctx,
            options=delegate.options,
            depth=self.depth + 1,
            stream=True,
        )
        # This chat remembers the exchange, so its next turn knows what was answered.
        for message in as_messages(new_messages):
            self.storage.append(Entry(type="message", data=message.to_dict()))
        if reply.text:
            answer = Message(role="assistant", content=reply.text)
            self.storage.append(Entry(type="message", data=answer.to_dict()))
        self.agent = None  # rebuilt from the storage by the next turn
        ctx.trace.mark_complete()
        reply.trace = ctx.trace.to_list() + reply.trace
        reply.tool_calls = [*ctx.stubbed_calls, *reply.tool_calls]
        reply.sent = [m.to_dict() for m in ctx.output] + reply.sent
        return reply


class PackagePlugin:
    """How a package shapes every model call of its conversation, as a runtime plugin: the
    rendered prompts go first, and the Create hook's messages stand in for the ones they
    replace. (Create and Next themselves run around the turn, because either may delegate
    the whole request to another assistant, which no step-level hook can do.)"""

    name = "package"
    enforce = "pre"

    def __init__(self, conversation: Conversation) -> None:
        # Weak: the conversation owns the agent that owns this plugin.
        self._conversation = weakref.ref(conversation)

    @property
    def conversation(self) -> Conversation:
        """The conversation whose model calls this plugin shapes."""
        conversation = self._conversation()
        if conversation is None:
            raise RuntimeError("the package plugin outlived its conversation")
        return conversation

    def prepare_step(self, step: Step) -> Step:
        """Prompts first; Create's replacement messages instead of what they replace."""
        messages = step.messages
        replacement = self.conversation._replacement
        if replacement is not None:
            count, replaced_by = replacement
            messages = [*replaced_by, *messages[count:]]
        step.messages = [*self.conversation._prompts, *messages]
        return step


def _label(spec: str) -> str:
    from agentcli.models.connectors import connector_label

    return connector_label(spec)


def _pick(*values: Any) -> Any:
    return next((v for v in values if v is not None), None)


def _as_dicts(messages: Any) -> list[dict[str, Any]]:
    """Text, messages or dicts as OpenAI-style dicts: dicts as given (hooks see what was
    sent), the rest through the runtime's own conversion (tool calls and names kept)."""
    dicts: list[dict[str, Any]] = []
    for item in messages if isinstance(messages, list) else [messages]:
        if isinstance(item, dict):
            dicts.append(item)
        else:
            dicts.extend(to_llm_messages(as_messages(item)))
    return dicts

"""An assistant package at work: one ``Assistant`` per package (its hooks and tool servers
loaded once per run), the ``AssistantRegistry`` that finds assistants by id, caches models
per connector, runs requests against other assistants (delegates, ``ctx.agent``) and closes
everything at the end, and one ``Conversation`` per chat (``conversation.py``).

Typical use::

    registry = AssistantRegistry(root, cwd=cwd)
    try:
        chat = registry.get("expense").conversation(RequestOptions(user_id="u1"))
        reply = await chat.send("submit $25 for lunch")
    finally:
        await registry.aclose()
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.assistant.context import Context
from agentcli.assistant.conversation import Conversation
from agentcli.assistant.hooks import Hooks
from agentcli.assistant.locales import Locales, load_locales
from agentcli.assistant.memory import MemoryStore
from agentcli.assistant.package import AssistantPackage, resolve_assistant
from agentcli.assistant.process import Processes
from agentcli.assistant.prompts import select_prompts, truthy
from agentcli.assistant.request import Reply, RequestOptions, ToolCall
from agentcli.assistant.state import StateDir
from agentcli.assistant.tools import ToolBox
from agentcli.errors import HookError
from agentcli.models.base import Model
from agentcli.models.limiter import AdaptiveLimiter, Limiter
from agentcli.runtime.storage import Storage

if TYPE_CHECKING:
    from agentcli.assistant.cassette import CassetteMode
    from agentcli.assistant.data.schema import ModelSpec
    from agentcli.assistant.data.store import DataStore
    from agentcli.assistant.response_cache import ResponseCache

__all__ = [
    "MAX_DELEGATE_DEPTH",
    "Assistant",
    "AssistantRegistry",
    "Conversation",
    "Reply",
    "RequestOptions",
    "ToolCall",
]

MAX_DELEGATE_DEPTH = 8


class Assistant:
    """A loaded package: its hooks and tool servers, shared by every conversation."""

    def __init__(self, package: AssistantPackage, registry: AssistantRegistry) -> None:
        self.package = package
        self.registry = registry
        self.hooks = Hooks.load(package.id, package.path)
        self.toolbox = ToolBox.for_package(package, env=registry.env)
        self.toolbox.cassettes = registry.cassettes is not None
        self.processes = Processes(package, registry)
        self.toolbox.processes = self.processes
        self.data = self._load_models()
        self._prompts: dict[tuple[Any, ...], tuple[list[dict[str, str]], list[str]]] = {}
        self._locales: Locales | None = None

    @property
    def locales(self) -> Locales:
        """The package's locale files, read once for the run."""
        if self._locales is None:
            self._locales = load_locales(self.package)
        return self._locales

    def _load_models(self) -> list[ModelSpec] | None:
        """The package's data models, their tables brought up to date (None without any:
        then no database is opened and SQLAlchemy is not imported)."""
        from agentcli.assistant.data.schema import load_models

        specs = load_models(self.package.path, self.package.id)
        if not specs:
            return None
        self.registry.data.register(specs)
        return specs

    def prompts(
        self,
        *,
        hook_preset: str | None,
        metadata: Mapping[str, Any],
        disable_global_prompts: bool | None,
    ) -> tuple[list[dict[str, str]], list[str]]:
        """``select_prompts`` and its warnings (a missing preset), read once per selection
        for the run (as the hooks are): a run of 1,000 cases would otherwise look for the
        same files 1,000 times. Read-only."""
        flag = metadata.get("__disable_global_prompts")
        key = (
            hook_preset,
            str(metadata.get("__prompt_preset") or ""),
            None if "__disable_global_prompts" not in metadata else truthy(flag),
            disable_global_prompts,
        )
        if key not in self._prompts:
            warnings: list[str] = []
            selected = select_prompts(
                self.package,
                hook_preset=hook_preset,
                metadata=metadata,
                disable_global_prompts=disable_global_prompts,
                warnings=warnings,
            )
            self._prompts[key] = (selected, warnings)
        return self._prompts[key]

    @property
    def id(self) -> str:
        """The assistant id."""
        return self.package.id

    def conversation(
        self,
        options: RequestOptions | None = None,
        *,
        depth: int = 0,
        storage: Storage | None = None,
        chain: tuple[str, ...] = (),
    ) -> Conversation:
        """A new chat with this assistant (its history in ``storage``, kept in memory by
        default); ``depth``/``chain`` are the delegations that led here."""
        return Conversation(
            self, options or RequestOptions(), depth=depth, storage=storage, chain=chain
        )

    async def respond(self, messages: Any, options: RequestOptions | None = None) -> Reply:
        """Answer one request in a fresh chat."""
        return await self.conversation(options).send(messages)


class AssistantRegistry:
    """Finds and caches assistants and models for one run; ``aclose`` stops tool servers.
    Memory lives in ``state`` (the user's persistent folder unless the run gives one)."""

    def __init__(
        self,
        root: Path | None = None,
        *,
        cwd: Path | None = None,
        state: StateDir | None = None,
        memory_store: MemoryStore | None = None,
        env: dict[str, str] | None = None,
        max_concurrency: int | None = None,
        cassettes: CassetteMode | None = None,
    ) -> None:
        self.root = root
        self._state = state
        # With a cassette mode, every model and tool of the run looks for the calling task's
        # cassette (agentcli.assistant.cassette) and records into it or replays from it.
        self.cassettes = cassettes
        # With a response cache, model calls are answered from it when asked again, except
        # those of the packages in ``uncached`` (the agent under test of a --runs run).
        self.cache: ResponseCache | None = None
        self.uncached: frozenset[str] = frozenset()
        # --seed: passed as ``seed`` with every model call of the run (providers that take
        # one sample reproducibly; litellm drops it for the others).
        self.seed: int | None = None
        # --connector-all: the -c connector for delegated and ctx.agent requests too (a
        # Yao app's sub-agents name connectors this machine may not have)
        self.connector_all: str | None = None
        # --judge-connector: the connector of LLM judges whose assertion names none
        self.judge_connector: str | None = None
        self.cwd = cwd or Path.cwd()
        self.env = env if env is not None else os.environ
        self.max_concurrency = max_concurrency
        self._memory_store = memory_store
        self._assistants: dict[Path, Assistant] = {}
        self._models: dict[tuple[str, Path | None], Model] = {}
        self._limiters: dict[str, Limiter] = {}
        # The limit of a connector's calls, made once per connector: one in this process by
        # default; ``--executor ray`` makes it the cluster's shared budget.
        self.new_limiter: Callable[[str, int], Limiter] = _process_limiter
        self._data: DataStore | None = None

    @property
    def data(self) -> DataStore:
        """The database of the data models (SQLite in the state folder, or
        AGENTCLI_DATABASE_URL), opened when the first package with models loads."""
        if self._data is None:
            from agentcli.assistant.data.store import DataStore

            self._data = DataStore.for_state(self.state, self.env)
        return self._data

    @property
    def data_store(self) -> DataStore | None:
        """The data models' store if a package with models was loaded, else None."""
        return self._data

    @property
    def state(self) -> StateDir:
        """The state folder of the run: the one given, else the user's (persistent) one."""
        return self._state or StateDir.persistent()

    @property
    def memory_store(self) -> MemoryStore:
        """The SQLite store behind user/team/chat memory, in the state folder (opened on
        first use)."""
        if self._memory_store is None:
            self._memory_store = MemoryStore(self.state.memory_path)
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
                assistants_root=self.root or (package.root if package else None),
                env=self.env,
                # The model answers from the cassettes and is never called: a replay needs
                # no key (nor anything else that only reaches the provider), and none is
                # made up; a call that reaches the model anyway is refused.
                replay_only=self.cassettes in ("replay", "replay-live-tools"),
            )
            if self.max_concurrency and hasattr(model, "limiter"):
                # One adaptive limit per connector, shared by every package that uses it:
                # a 429 slows down all calls to that provider, --parallel is the ceiling.
                limiter = self._limiters.get(spec)
                if limiter is None:
                    limiter = self._limiters[spec] = self.new_limiter(spec, self.max_concurrency)
                model.limiter = limiter
            if self.cache is not None and (package is None or package.id not in self.uncached):
                from agentcli.assistant.response_cache import CachingModel

                model = CachingModel(model, spec, self.cache)
            if self.cassettes is not None:
                from agentcli.assistant.cassette import CassetteModel

                model = CassetteModel(model, spec)
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
        on_event: Callable[[Any], Any] | None = None,
        stream: bool = False,
        started: Callable[[Conversation], Any] | None = None,
    ) -> Reply:
        """Run one request against another assistant (``ctx.agent.call``, delegates).

        The request inherits the parent's identity, locale and metadata; ``options`` may set
        ``connector``, ``mode``, ``metadata`` (merged) and ``skip``. ``stream`` passes the
        parent's event and output listeners on (a delegate's answer is the answer)."""
        chain: tuple[str, ...] = ()
        if parent is not None:
            chain = (*parent.conversation.chain, parent.assistant_id)
            if depth is None:
                depth = parent.conversation.depth + 1
        depth = depth or 0
        if depth > MAX_DELEGATE_DEPTH:
            path = " -> ".join((*chain, agent_id))
            raise HookError(
                f"calling {agent_id!r} exceeds the depth limit of {MAX_DELEGATE_DEPTH} ({path})",
                hint="assistants probably delegate to (or call) each other in a loop",
            )
        request = RequestOptions()
        if parent is not None:
            parent_options = parent.conversation.options
            request.locale = parent.locale
            request.user_id, request.team_id = parent.user_id, parent.team_id
            request.authorized = dict(parent.authorized)
            request.metadata = dict(parent.metadata)
            request.max_steps = parent_options.max_steps
            if stream:
                request.on_event = parent_options.on_event
                request.on_output = parent_options.on_output
        options = dict(options or {})
        request.metadata.update(options.get("metadata") or {})
        request.connector = options.get("connector") or self.connector_all or None
        request.mode = options.get("mode") or None
        request.skip = dict(options.get("skip") or {})
        if on_event is not None:
            request.on_event = on_event
        assistant = self.get(agent_id)
        conversation = assistant.conversation(request, depth=depth, chain=chain)
        if started is not None:  # a caller that may stop it (on_chunk returning non-zero)
            started(conversation)
        return await conversation.send(messages)

    async def aclose(self) -> None:
        """Stop every tool server started during the run, close pooled model connections
        and the memory store."""
        for assistant in self._assistants.values():
            await assistant.toolbox.aclose()
        for model in self._models.values():
            close = getattr(model, "aclose", None)
            if close is not None:
                await close()
        if self._memory_store is not None:
            self._memory_store.close()
        if self._data is not None:
            self._data.close()
        if self.cache is not None:
            self.cache.close()


def _process_limiter(spec: str, ceiling: int) -> Limiter:
    """The adaptive limit of one connector's calls in this process."""
    return AdaptiveLimiter(ceiling)

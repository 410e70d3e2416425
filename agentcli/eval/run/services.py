"""What the eval runner lends to assertions and hooks: the LLM judge (``agent`` assertions
and judged checkpoints), ``script`` references, and the Before/After/BeforeAll/AfterAll
hooks, all resolved in the target package's ``src/``."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentcli.assistant.hooks import call_user_function
from agentcli.assistant.identity import ContextFile
from agentcli.assistant.memory import Memory, MemoryStore
from agentcli.assistant.package import AssistantPackage
from agentcli.assistant.request import Reply
from agentcli.assistant.session import Assistant, AssistantRegistry, RequestOptions
from agentcli.assistant.tools import check_src_function, load_src_function
from agentcli.errors import AgentCliError, HookError
from agentcli.eval.checks.matching import extract_json
from agentcli.eval.run.spend import add_helper_usage

__all__ = ["EvalContext", "HookRunner", "judge_with_agent", "parse_verdict"]


@dataclass(slots=True)
class EvalContext(ContextFile):
    """The plain ``ctx`` of eval hooks: identity, locale and metadata (the ``--ctx`` file's
    fields, with the run's locale when it gives none), and ``memory`` in the run's store."""

    locale: str = "en-us"
    memory_store: MemoryStore | None = field(default=None, repr=False, compare=False)
    _memory: Memory | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def memory(self) -> Memory:
        """``ctx.memory``: the user/team/chat namespaces of this identity in the run's store,
        the one the cases use, so BeforeAll and Before can seed what the cases read."""
        if self._memory is None:
            if self.memory_store is None:
                raise HookError(
                    "ctx.memory is not available here: this ctx is not bound to a run's store"
                )
            self._memory = Memory.for_request(
                self.memory_store, self.user_id, self.team_id, self.chat_id
            )
        return self._memory

    def to_dict(self) -> dict[str, Any]:
        """JSON form (what JS-era hooks saw as a plain object)."""
        return {
            "locale": self.locale,
            "user_id": self.user_id,
            "team_id": self.team_id,
            "chat_id": self.chat_id,
            "metadata": self.metadata,
            "authorized": self.authorized,
        }

    def get(self, key: str, default: Any = None) -> Any:
        """Dict-style access for hooks written against a plain object."""
        return self.to_dict().get(key, default)

    def __getitem__(self, key: str) -> Any:
        return self.to_dict()[key]


class HookRunner:
    """Resolves ``<file>.<Func>`` references in the package's ``src/`` and calls them."""

    def __init__(self, package: AssistantPackage) -> None:
        self.package = package
        self._src = package.path / "src"

    def resolve(self, ref: str) -> Callable[..., Any]:
        """The function behind ``ref`` (``env_test.Before``; a ``scripts:`` prefix, Yao's
        ``scripts.`` and a ``src/`` lead are tolerated)."""
        return load_src_function(self._src, self._cleaned(ref), path=self.package.file)

    def _cleaned(self, ref: str) -> str:
        """``ref`` as a ``file.Func`` of ``src/``: Yao's ``scripts.test.Validate`` is
        ``src/test.py:Validate`` (unless the package has a ``src/scripts/`` folder)."""
        cleaned = ref.removeprefix("scripts:").removeprefix("src/").removeprefix("src.")
        if cleaned.startswith("scripts.") and not (self._src / "scripts").is_dir():
            cleaned = cleaned.removeprefix("scripts.")
        return cleaned

    def check(self, ref: str) -> None:
        """Raise ``PackageError`` when ``ref`` names no file or function, without importing."""
        check_src_function(self._src, self._cleaned(ref), path=self.package.file)

    async def call(self, ref: str, *args: Any) -> Any:
        """Call the hook; whatever it raises becomes a ``HookError`` naming it."""
        function = self.resolve(ref)
        try:
            value = await call_user_function(function, *args)
        except AgentCliError:
            raise
        except Exception as error:
            raise HookError(f"{ref} failed: {type(error).__name__}: {error}") from error
        if isinstance(value, dict) and set(value) == {"data"}:
            return value["data"]  # Yao's hooks return {data: ...}
        return value


def parse_verdict(text: Any) -> dict[str, Any]:
    """A validator's answer as ``{passed: bool, reason: str, ...}``; raises ValueError when
    it holds no such object (fenced JSON, bare JSON and JSON inside prose all work)."""
    data = text if isinstance(text, dict) else extract_json(str(text or ""))
    if not isinstance(data, dict):
        raise ValueError("validator answered no JSON object")
    passed = data.get("passed")
    if isinstance(passed, str) and passed.lower() in ("true", "false"):
        passed = passed.lower() == "true"
    if not isinstance(passed, bool):
        raise ValueError("validator response missing a boolean 'passed' field")
    return {**data, "passed": passed, "reason": str(data.get("reason") or "")}


async def ask_helper(
    assistant: Assistant,
    mode: str,
    request: dict[str, Any],
    *,
    chat_id: str,
    connector: str | None = None,
) -> Reply:
    """Send ``request`` as JSON to a helper assistant (validator, simulator, generator) in a
    fresh chat marked ``test_mode: <mode>``, without history or trace."""
    conversation = assistant.conversation(
        RequestOptions(
            connector=connector,
            chat_id=chat_id,
            metadata={"test_mode": mode},
            skip={"history": True, "trace": True},
        )
    )
    reply = await conversation.send(json.dumps(request, ensure_ascii=False, default=str))
    add_helper_usage(mode, reply.usage)
    return reply


async def judge_with_agent(
    registry: AssistantRegistry,
    use: str,
    criteria: Any,
    output: Any,
    case_input: Any,
    options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Ask the validator assistant named by ``use`` (``agents:<id>``) for a verdict."""
    if not use.startswith("agents:"):
        raise ValueError('agent assertion needs use: "agents:<validator id>"')
    options = dict(options or {})
    request = {"output": output, "input": case_input, "criteria": criteria}
    request.update(options.get("metadata") or {})
    validator = registry.get(use.removeprefix("agents:"))
    connector = options.get("connector") or registry.judge_connector
    reply = await ask_helper(
        validator, "validator", request, chat_id="validator", connector=connector
    )
    if reply.error:
        raise ValueError(f"validator agent error: {reply.error}")
    verdict = parse_verdict(reply.text or reply.output)
    verdict["criteria"] = criteria
    return verdict


def case_file_label(path: Path | None) -> str:
    """A case file as shown in reports: relative to the current folder when possible."""
    if path is None:
        return ""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)

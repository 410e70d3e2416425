"""Generated cases (SPEC 5.6): ``agents:<generator id>?count=10&focus=edge-cases`` asks a
generator assistant, ``scripts:<file>.<Func>`` calls a Python function in the target
package's ``src/``; both receive ``{target_agent{id, description, tools}, count, focus,
extra}`` and answer a JSON array of cases (or ``{cases: [...]}``).

Query values are typed (integers, floats, ``true``/``false``, else strings; the first of a
repeated key wins). Every answer is validated exactly like a case file, so a generated case
keeps every field (simulator and checkpoints too) and a bad one stops the run with
``<input>:<n>: message``. Top-level keys the schema does not know (an LLM likes to add a
``rationale``) are dropped with a warning rather than failing the whole batch.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

from agentcli.assistant.hooks import call_user_function
from agentcli.errors import AgentCliError, CaseFileError, ConfigError
from agentcli.eval.cases.files import SCHEMA_PATH
from agentcli.eval.cases.model import Case
from agentcli.eval.cases.parse import parse_case
from agentcli.eval.checks.matching import extract_json
from agentcli.eval.run.services import HookRunner, ask_helper
from agentcli.jsonsafe import json_type_words

if TYPE_CHECKING:
    from agentcli.assistant.session import Assistant, AssistantRegistry

__all__ = [
    "DEFAULT_COUNT",
    "GeneratorRef",
    "cases_from_answer",
    "generate_cases",
    "parse_generator_ref",
    "target_info",
    "typed_value",
]

DEFAULT_COUNT = 5
_INT = re.compile(r"[+-]?\d+")
_FLOAT = re.compile(r"[+-]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?")


@dataclass(slots=True)
class GeneratorRef:
    """A parsed ``agents:`` / ``scripts:`` input."""

    kind: str  # "agents" | "scripts"
    name: str  # the generator assistant id, or "<file>.<Func>"
    count: int = DEFAULT_COUNT
    focus: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """The input as written, without the query."""
        return f"{self.kind}:{self.name}"


def typed_value(text: str) -> Any:
    """A query value as an int, a float, a boolean, or the string itself."""
    if _INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text):
        return float(text)
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text


def parse_generator_ref(raw: str) -> GeneratorRef:
    """``agents:<id>?count=3&focus=x&k=v`` or ``scripts:<file>.<Func>?...``."""
    kind, _, rest = raw.partition(":")
    name, _, query = rest.partition("?")
    name = name.strip()
    if kind not in ("agents", "scripts") or not name:
        raise ConfigError(
            f"invalid generator input {raw!r}",
            hint='use "agents:<generator id>?count=10" or "scripts:<file>.<Func>"',
        )
    values: dict[str, Any] = {}
    for key, value in parse_qsl(query, keep_blank_values=True):
        values.setdefault(key, value)  # the first of a repeated key wins
    ref = GeneratorRef(kind=kind, name=name)
    if "count" in values:
        count = typed_value(values.pop("count"))
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ConfigError(f"{ref.label}: count must be a positive integer, got {count!r}")
        ref.count = count
    if "focus" in values:
        ref.focus = values.pop("focus") or None
    ref.extra = {key: typed_value(value) for key, value in values.items()}
    return ref


async def target_info(assistant: Assistant) -> dict[str, Any]:
    """``{id, description, tools[{name, server, description, input_schema}]}`` of the target."""
    package = assistant.package
    try:
        tools = await assistant.toolbox.tools()
    except AgentCliError:
        tools = []  # a tool server that cannot start must not stop the generator
    return {
        "id": package.id,
        "description": package.description or "",
        "tools": [
            {
                "name": t.bare_name or t.name,
                "server": t.server,
                "description": t.description,
                "input_schema": t.parameters,
            }
            for t in tools
        ],
    }


async def generate_cases(
    raw: str,
    *,
    assistant: Assistant,
    registry: AssistantRegistry,
    project_root: Path,
    timeout: float,
    warn: Callable[[str], None] = lambda message: None,
) -> list[Case]:
    """Ask the generator named by ``raw`` for cases against ``assistant`` and validate them."""
    ref = parse_generator_ref(raw)
    request = {
        "target_agent": await target_info(assistant),
        "count": ref.count,
        "focus": ref.focus,
        "extra": ref.extra,
    }
    try:
        async with asyncio.timeout(timeout):
            if ref.kind == "agents":
                answer = await _ask_agent(ref, registry, request)
            else:
                answer = await _call_script(ref, assistant, request)
    except TimeoutError:
        raise ConfigError(f"{ref.label}: no answer within {timeout:g}s") from None
    return cases_from_answer(answer, source=ref.label, project_root=project_root, warn=warn)


async def _ask_agent(
    ref: GeneratorRef, registry: AssistantRegistry, request: dict[str, Any]
) -> Any:
    reply = await ask_helper(registry.get(ref.name), "generator", request, chat_id="generator")
    if reply.status in ("failed", "aborted") or reply.error:
        raise ConfigError(f"{ref.label}: generator agent error: {reply.error or reply.status}")
    return reply.next if isinstance(reply.next, list | dict) else reply.text


async def _call_script(ref: GeneratorRef, assistant: Assistant, request: dict[str, Any]) -> Any:
    hooks = HookRunner(assistant.package)
    function = hooks.resolve(ref.name)
    try:
        return await call_user_function(function, request)
    except AgentCliError:
        raise
    except Exception as error:
        raise ConfigError(
            f"{ref.label}: generator script raised {type(error).__name__}: {error}"
        ) from error


def cases_from_answer(
    answer: Any,
    *,
    source: str,
    project_root: Path,
    warn: Callable[[str], None] = lambda message: None,
) -> list[Case]:
    """Cases from a generator's answer (a list, ``{cases}``, ``{test_cases}``, one case, or
    text holding one of those); every problem raised together as a ``CaseFileError``."""
    items = _items(answer, source)
    known = _case_fields()
    problems: list[str] = []
    cases: list[Case] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(items, 1):
        if not isinstance(item, dict):
            problems.append(
                f"{source}:{index}: a case must be an object, got {json_type_words(item, array='a list')}"
            )
            continue
        unknown = [key for key in item if key not in known]
        if unknown:
            warn(f"{source}:{index}: ignored unknown field(s) {', '.join(map(str, unknown))}")
            item = {key: value for key, value in item.items() if key in known}
        case_id = item.get("id")
        if isinstance(case_id, str) and case_id in seen:
            problems.append(
                f"{source}:{index}: duplicate id {json.dumps(case_id, ensure_ascii=False)}"
                f" (first generated as case {seen[case_id]})"
            )
            continue
        if isinstance(case_id, str):
            seen[case_id] = index
        try:
            cases.append(
                parse_case(item, source_file=source, line=index, project_root=project_root)
            )
        except CaseFileError as error:
            problems.extend(error.problems)
    if problems:
        raise CaseFileError(problems, hint="the generator wrote invalid cases; see above")
    return cases


def _items(answer: Any, source: str) -> list[Any]:
    """The list of case objects in a generator's answer."""
    data = answer
    if isinstance(answer, str):
        try:
            data = extract_json(answer)
        except ValueError:
            snippet = " ".join(answer.split())[:200]
            raise ConfigError(
                f"{source}: the generator answered no JSON: {snippet!r}",
                hint='it must answer a JSON array of cases, or {"cases": [...]}',
            ) from None
    if isinstance(data, dict):
        for key in ("cases", "test_cases"):
            if isinstance(data.get(key), list):
                data = data[key]
                break
        else:
            if "id" in data:
                data = [data]
    if not isinstance(data, list):
        raise ConfigError(
            f"{source}: the generator answered {json_type_words(data, array='a list')}, not a list of cases",
            hint='it must answer a JSON array of cases, or {"cases": [...]}',
        )
    if not data:
        raise ConfigError(f"{source}: the generator answered no cases")
    return data


@cache
def _case_fields() -> frozenset[str]:
    """The top-level fields the case schema allows."""
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return frozenset(schema.get("properties", {}))

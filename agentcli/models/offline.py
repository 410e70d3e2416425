"""Offline models — ``echo`` and Python function models — and the helpers they share.

The ``scripted`` rule model lives in ``scripted.py`` (re-exported here). Every offline model
streams its reply in word groups, then its tool calls, then one ``ResponseDone``; a tool
call may use a bare tool name, which is resolved to the ``<server>__<tool>`` name offered.
"""

from __future__ import annotations

import asyncio
import difflib
import inspect
import json
import re
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any

from agentcli.errors import ConfigError, ModelError, ProviderError
from agentcli.models.base import (
    ModelResponse,
    ModelSettings,
    ResponseDone,
    StreamPart,
    TextDelta,
    ToolCallDelta,
    ToolCallRequest,
    Usage,
)
from agentcli.models.pricing import FREE
from agentcli.pysource import load_source_module
from agentcli.threads import in_own_thread

__all__ = [
    "EchoModel",
    "FunctionModel",
    "ToolCallSpec",
    "load_function",
    "message_text",
    "same_tool",
    "stream_reply",
    "suggest",
    "tool_names",
]

_WORDS_PER_CHUNK = 3
_LONG_TEXT, _LONG_CHUNK = 64_000, 4_096
_YIELD_EVERY = 256  # deltas between trips through the event loop (a timeout can cut in)
_TOKEN = re.compile(r"\s*\S+\s*|\s+")
_MODULE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")

ToolCallSpec = tuple[str, dict[str, Any], str | None]  # (tool name, arguments, id or None)


def message_text(message: Mapping[str, Any]) -> str:
    """The text of a message: its content string, or the text parts of a list content."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text") or ""
            for part in content
            if isinstance(part, Mapping) and part.get("type", "text") == "text"
        )
    return ""


def suggest(word: str, choices: tuple[str, ...] | list[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest choice, or an empty string."""
    close = difflib.get_close_matches(word, choices, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _chunks(text: str) -> list[str]:
    """Deltas of a few words, as a provider streams them; a long text in slices of
    ``_LONG_CHUNK`` characters (20 MB in 3-word deltas would be 3 million of them)."""
    if len(text) > _LONG_TEXT:
        return [text[i : i + _LONG_CHUNK] for i in range(0, len(text), _LONG_CHUNK)]
    tokens = _TOKEN.findall(text)
    return [
        "".join(tokens[i : i + _WORDS_PER_CHUNK]) for i in range(0, len(tokens), _WORDS_PER_CHUNK)
    ]


def tool_names(tools: list[dict[str, Any]]) -> list[str]:
    """The names of OpenAI-style function tools."""
    names = []
    for tool in tools:
        spec = tool.get("function", tool) if isinstance(tool, Mapping) else {}
        if isinstance(spec, Mapping) and isinstance(spec.get("name"), str):
            names.append(spec["name"])
    return names


def same_tool(full: str, name: str) -> bool:
    """Whether tool ``full`` (maybe ``<server>__<tool>``) is ``name`` or ends with ``__name``."""
    return full == name or full.endswith(f"__{name}")


def _resolve_tool(name: str, offered: list[str]) -> str:
    if name in offered:
        return name
    return next((full for full in offered if same_tool(full, name)), name)


def _prior_calls(messages: list[dict[str, Any]]) -> int:
    return sum(len(m.get("tool_calls") or []) for m in messages if m.get("role") == "assistant")


async def stream_reply(
    name: str,
    provider: str,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    text: str,
    calls: list[ToolCallSpec],
    *,
    delay: float = 0.0,
    chunk_delay: float = 0.0,
) -> AsyncIterator[StreamPart]:
    """Stream ``text`` in word groups, then the tool calls, then the final response."""
    if delay:
        await asyncio.sleep(delay)
    offered = tool_names(tools)
    first = _prior_calls(messages) + 1
    requests = [
        ToolCallRequest(
            id=call_id or f"call_{first + i}", name=_resolve_tool(tool, offered), arguments=args
        )
        for i, (tool, args, call_id) in enumerate(calls)
    ]
    arguments = [json.dumps(r.arguments, ensure_ascii=False, default=str) for r in requests]
    pieces: list[StreamPart] = [TextDelta(chunk) for chunk in _chunks(text)]
    pieces += [
        ToolCallDelta(index=i, id=r.id, name=r.name, arguments=arguments[i])
        for i, r in enumerate(requests)
    ]
    for i, piece in enumerate(pieces):
        if chunk_delay and i:
            await asyncio.sleep(chunk_delay)
        elif i and not i % _YIELD_EVERY:
            await asyncio.sleep(0)
        yield piece
    usage = Usage(
        input_tokens=sum(len(message_text(m).split()) for m in messages),
        output_tokens=len(text.split()) + sum(len(a.split()) for a in arguments),
        cost=0.0,  # offline models are free: a cost limit or assertion holds for them
        provider=provider,
        model=name,
    )
    yield ResponseDone(
        ModelResponse(
            content=text,
            tool_calls=requests,
            finish_reason="tool_calls" if requests else "stop",
            usage=usage,
            provider=provider,
            model=name,
        )
    )


class EchoModel:
    """Replies with the last user message's text."""

    provider = "offline"
    price = FREE
    name = "echo"

    async def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], settings: ModelSettings
    ) -> AsyncIterator[StreamPart]:
        """Stream the last user message back."""
        user: dict[str, Any] = next((m for m in reversed(messages) if m.get("role") == "user"), {})
        async for part in stream_reply(
            self.name, self.provider, messages, tools, message_text(user), []
        ):
            yield part


def load_function(src_dir: Path, module: str, function: str) -> Callable[..., Any]:
    """Load ``function`` from ``<src_dir>/<module as path>.py`` under a name unique to that file."""
    if not _MODULE.fullmatch(module):
        raise ConfigError(
            f"python model: {module!r} is not a dotted module name (like models.fake)"
        )
    base = src_dir / Path(*module.split("."))
    path = base.with_suffix(".py") if base.with_suffix(".py").is_file() else base / "__init__.py"
    if not path.is_file():
        raise ConfigError(
            f"python model: module file {base.with_suffix('.py')} not found",
            hint=f"create it with a function {function}(messages, tools, settings)",
        )
    loaded = load_source_module(path, module)
    target: object = getattr(loaded, function, None)
    if not callable(target):
        raise ConfigError(f"python model: {path} has no function {function!r}")
    return target


class FunctionModel:
    """A model backed by ``function(messages, tools, settings)`` (sync or async)."""

    provider = "python"
    price = FREE

    def __init__(self, function: Callable[..., Any], *, name: str) -> None:
        self.function = function
        self.name = name

    async def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], settings: ModelSettings
    ) -> AsyncIterator[StreamPart]:
        """Call the function and stream what it returned."""
        try:
            if inspect.iscoroutinefunction(self.function):
                value = await self.function(messages, tools, settings.to_dict())
            else:
                # sync user code runs in a thread of its own so it cannot stall the event loop
                value = await in_own_thread(self.function, messages, tools, settings.to_dict())
                if inspect.isawaitable(value):
                    value = await value
        except ModelError:
            raise
        except Exception as exc:
            raise ProviderError(
                f"python model {self.name} raised {type(exc).__name__}: {exc}", retryable=False
            ) from exc
        text, calls = self._parse(value)
        async for part in stream_reply(self.name, self.provider, messages, tools, text, calls):
            yield part

    def _parse(self, value: Any) -> tuple[str, list[ToolCallSpec]]:
        if isinstance(value, str):
            return value, []
        shape = 'text or {"content": str, "tool_calls": [{"name": str, "arguments": dict}]}'
        if not isinstance(value, Mapping):
            raise self._bad(f"returned {type(value).__name__}; expected {shape}")
        unknown = sorted(set(value) - {"content", "tool_calls"})
        if unknown:
            raise self._bad(f"returned unknown keys {unknown}; expected {shape}")
        content = value.get("content") or ""
        if not isinstance(content, str):
            raise self._bad(f"returned content of type {type(content).__name__}; expected a string")
        raw_calls = value.get("tool_calls") or []
        if not isinstance(raw_calls, list):
            raise self._bad("returned tool_calls that is not a list")
        calls: list[ToolCallSpec] = []
        for i, call in enumerate(raw_calls):
            if (
                not isinstance(call, Mapping)
                or not isinstance(call.get("name"), str)
                or not call["name"]
            ):
                raise self._bad(f"tool_calls[{i}] needs a string `name`")
            arguments = call.get("arguments") or {}
            call_id = call.get("id")
            if not isinstance(arguments, Mapping):
                raise self._bad(
                    f"tool_calls[{i}].arguments must be a dict, not {type(arguments).__name__}"
                )
            if call_id is not None and not isinstance(call_id, str):
                raise self._bad(f"tool_calls[{i}].id must be a string")
            calls.append((call["name"], dict(arguments), call_id))
        return content, calls

    def _bad(self, message: str) -> ProviderError:
        return ProviderError(f"python model {self.name} {message}", retryable=False)


def __getattr__(name: str) -> Any:
    """Re-export ``ScriptedModel`` lazily: ``scripted.py`` imports this module."""
    if name == "ScriptedModel":
        from agentcli.models.scripted import ScriptedModel

        return ScriptedModel
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

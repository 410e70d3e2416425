"""What the openai SDK and litellm models share: the request and the chunk assembly.

Both clients stream OpenAI-shaped chunks (``choices[0].delta`` with ``content``,
``reasoning_content`` and index-keyed ``tool_calls`` fragments, then ``finish_reason`` and
a last chunk with ``usage``), as SDK objects or as dicts; ``StreamAssembler`` turns them
into our stream parts and the final ``ModelResponse``.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from agentcli.errors import ConfigError, ProviderError, ResponseTooLarge
from agentcli.ids import new_id
from agentcli.models.base import (
    ModelResponse,
    ModelSettings,
    StreamPart,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallRequest,
    Usage,
)
from agentcli.models.pricing import Price, litellm_price
from agentcli.models.retry import seconds

__all__ = ["StreamAssembler", "call_timeout", "chat_request", "limited", "lines", "token_cost"]

_LINE_BREAK = re.compile(rb"\r\n|\r|\n")

_FINISH_REASONS = {
    "stop": "stop",
    "end_turn": "stop",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "tool_use": "tool_calls",
    "length": "length",
    "max_tokens": "length",
    "content_filter": "content_filter",
}


def chat_request(
    model: str,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    settings: ModelSettings,
    extra: dict[str, Any],
    default_timeout: float,
) -> tuple[dict[str, Any], float]:
    """Streaming chat-completion options and the timeout; settings override ``extra``."""
    options = {**extra, **settings.to_dict()}
    timeout = call_timeout(options.pop("timeout", None), default_timeout)
    request: dict[str, Any] = {
        "model": model,
        "messages": messages,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if tools:
        request["tools"] = tools
    else:
        # Providers reject a tool_choice without tools.
        options.pop("tool_choice", None)
        options.pop("parallel_tool_calls", None)
    request.update(options)
    return request, timeout


async def limited(chunks: AsyncIterator[bytes], limit: int, label: str) -> AsyncIterator[bytes]:
    """The pieces of a body, ending in ``ResponseTooLarge`` once they pass ``limit`` bytes."""
    total = 0
    async for piece in chunks:
        total += len(piece)
        if total > limit:
            raise ResponseTooLarge(label, limit)
        yield piece


async def lines(
    chunks: AsyncIterator[bytes], *, limit: int | None = None, label: str = ""
) -> AsyncIterator[str]:
    """The lines of a body without their breaks (``\\r\\n``, ``\\n`` or ``\\r``), in
    linear time: only a piece that holds a break is split, so a line spread over many
    pieces is joined once (re-scanning all held bytes for each piece was quadratic). A
    line longer than ``limit`` ends in ``ResponseTooLarge``: it would be held whole."""
    held: list[bytes] = []  # the pieces of the line not yet ended
    size = 0
    async for piece in chunks:
        if b"\n" not in piece and b"\r" not in piece:
            held.append(piece)
            size += len(piece)
            if limit is not None and size > limit:
                raise ResponseTooLarge(label, limit)
            continue
        held.append(piece)
        text = b"".join(held)
        # A trailing \r may be the first half of \r\n: keep it for the next piece.
        cr = text.endswith(b"\r")
        *complete, rest = _LINE_BREAK.split(text[:-1] if cr else text)
        rest += b"\r" if cr else b""
        held, size = ([rest], len(rest)) if rest else ([], 0)
        for line in complete:
            yield line.decode("utf-8", "replace")
    if held:
        yield b"".join(held).rstrip(b"\r").decode("utf-8", "replace")


def call_timeout(value: Any, default: float) -> float:
    """A call's ``timeout`` option (package or call options): a finite number of seconds
    > 0, else a ``ConfigError`` (NaN or infinity would make the call's waits unbounded)."""
    if value is None:
        return default
    if isinstance(value, str) or not seconds(value):
        raise ConfigError(
            f"the timeout option must be a finite number of seconds > 0, got {value!r}",
            hint="set options.timeout to a number such as 60, or leave it out",
        )
    return float(value)


def token_cost(
    model: str, input_tokens: int, output_tokens: int, price: Price | None = None
) -> float | None:
    """The cost of a response: by the connector's ``price``, else by litellm's cost map;
    None when no tokens were reported or neither knows the model (unknown, never wrong)."""
    if not (input_tokens or output_tokens):
        return None
    price = price or litellm_price(model)
    return None if price is None else price.cost(input_tokens, output_tokens)


def _get(obj: Any, name: str) -> Any:
    """A field of an SDK object or a dict (None when absent)."""
    if obj is None:
        return None
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


@dataclass(slots=True)
class _PendingCall:
    id: str | None = None
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class StreamAssembler:
    """Feed chunks in order; collect the parts to yield; ``finish()`` builds the response."""

    def __init__(
        self,
        provider: str,
        model: str,
        *,
        cost_model: str | None = None,
        price: Price | None = None,
        limit: int | None = None,
    ) -> None:
        self.provider = provider
        self.model = model
        self._limit = limit  # max_response_bytes: text, reasoning and tool-call arguments
        self._size = 0
        self._cost_model = cost_model or model
        self._price = price
        self._text: list[str] = []
        self._thinking: list[str] = []
        self._calls: dict[int, _PendingCall] = {}
        self._slots: dict[int, int] = {}
        self._finish: str | None = None
        self._input_tokens = 0
        self._output_tokens = 0

    def feed(self, chunk: Any) -> list[StreamPart]:
        """The stream parts carried by one chunk."""
        usage = _get(chunk, "usage")
        if usage is not None:
            self._input_tokens = int(_get(usage, "prompt_tokens") or 0)
            self._output_tokens = int(_get(usage, "completion_tokens") or 0)
        parts: list[StreamPart] = []
        for choice in _get(chunk, "choices") or []:
            if _get(choice, "index") not in (None, 0):
                continue
            delta = _get(choice, "delta")
            thinking = _get(delta, "reasoning_content") or _get(delta, "reasoning")
            if isinstance(thinking, str) and thinking:
                self._thinking.append(thinking)
                parts.append(ThinkingDelta(thinking))
            text = _get(delta, "content")
            if isinstance(text, str) and text:
                self._text.append(text)
                parts.append(TextDelta(text))
            for fragment in _get(delta, "tool_calls") or []:
                parts.append(self._tool_fragment(fragment))
            reason = _get(choice, "finish_reason")
            if reason:
                self._finish = str(reason)
        if self._limit is not None and parts:
            self._count(parts)
        return parts

    def _count(self, parts: list[StreamPart]) -> None:
        """Add the parts' text to the response's size; past the limit the call ends."""
        for part in parts:
            text = part.arguments if isinstance(part, ToolCallDelta) else part.text  # type: ignore[union-attr]
            self._size += len(text) if text.isascii() else len(text.encode("utf-8", "replace"))
        if self._limit is not None and self._size > self._limit:
            raise ResponseTooLarge(f"{self.provider} model {self.model!r}", self._limit)

    def _tool_fragment(self, fragment: Any) -> ToolCallDelta:
        """Record one tool-call fragment and describe it as a delta."""
        index = _get(fragment, "index")
        key = int(index) if index is not None else len(self._slots)
        call_id = _get(fragment, "id")
        slot = self._slots.get(key)
        # Some providers reuse index 0 for parallel calls and tell them apart by id.
        if slot is None or (call_id and self._calls[slot].id and self._calls[slot].id != call_id):
            slot = len(self._calls)
            self._slots[key] = slot
            self._calls[slot] = _PendingCall()
        call = self._calls[slot]
        function = _get(fragment, "function")
        name = _get(function, "name")
        arguments = _get(function, "arguments") or ""
        if call_id:
            call.id = call_id
        if name:
            call.name = name
        if arguments:
            call.arguments.append(arguments)
        return ToolCallDelta(index=slot, id=call_id or None, name=name or None, arguments=arguments)

    def finish(self) -> ModelResponse:
        """The assembled response; a stream that never finished is a ``ProviderError``."""
        if self._finish is None:
            raise ProviderError(
                f"{self.provider} model {self.model!r}: the stream ended before the response "
                "was complete (no finish reason)",
                retryable=True,
            )
        calls = [_tool_request(c) for _, c in sorted(self._calls.items())]
        finish = _FINISH_REASONS.get(self._finish, "stop")
        if calls and finish == "stop":
            # Some providers say "stop" even when the response is tool calls.
            finish = "tool_calls"
        usage = Usage(
            input_tokens=self._input_tokens,
            output_tokens=self._output_tokens,
            cost=token_cost(self._cost_model, self._input_tokens, self._output_tokens, self._price),
            provider=self.provider,
            model=self.model,
        )
        return ModelResponse(
            content="".join(self._text),
            tool_calls=calls,
            thinking="".join(self._thinking),
            finish_reason=finish,
            usage=usage,
            provider=self.provider,
            model=self.model,
        )


def _tool_request(call: _PendingCall) -> ToolCallRequest:
    """Parse a finished call's argument text; invalid JSON sets ``arguments_error``."""
    text = "".join(call.arguments)
    request = ToolCallRequest(id=call.id or f"call_{new_id()[:12]}", name=call.name)
    if not text.strip():
        return request
    try:
        arguments = json.loads(text)
    except ValueError as exc:
        request.arguments_error = f"the arguments are not valid JSON ({exc}): {text[:200]}"
        return request
    if not isinstance(arguments, dict):
        request.arguments_error = f"the arguments are not a JSON object: {text[:200]}"
        return request
    request.arguments = arguments
    return request

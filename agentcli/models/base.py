"""The model contract: stream a response for OpenAI-style messages, tools and settings.

Every model (offline, openai SDK, litellm) implements ``Model.stream`` and yields
``TextDelta`` / ``ThinkingDelta`` / ``ToolCallDelta`` parts followed by exactly one
``ResponseDone`` carrying the assembled ``ModelResponse``. Failures raise
``agentcli.errors.ModelError`` subclasses.

Messages are plain dicts in the OpenAI chat format (``{"role", "content", "tool_calls",
"tool_call_id", "name"}``) and tools are OpenAI function tools
(``{"type": "function", "function": {"name", "description", "parameters"}}``): the
runtime converts its own message objects at the boundary, so this layer imports nothing
from above.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, get_args, runtime_checkable

__all__ = [
    "TOOL_CHOICE_MODES",
    "Model",
    "ModelResponse",
    "ModelSettings",
    "ResponseDone",
    "StreamPart",
    "TextDelta",
    "THINKING_LEVELS",
    "ThinkingDelta",
    "ThinkingLevel",
    "ToolCallDelta",
    "ToolCallRequest",
    "ToolChoice",
    "ToolChoiceMode",
    "Usage",
    "collect",
]


@dataclass(slots=True)
class Usage:
    """Token counts and cost of one or more model responses."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None
    provider: str = ""
    model: str = ""
    total: int | None = None  # a total reported apart from the counts (a report read back)

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens, unless a total was reported apart from them."""
        return self.input_tokens + self.output_tokens if self.total is None else self.total

    def __add__(self, other: Usage) -> Usage:
        cost: float | None
        if self.cost is None and other.cost is None:
            cost = None
        else:
            cost = (self.cost or 0.0) + (other.cost or 0.0)
        both = self.total is None and other.total is None
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cost=cost,
            provider=self.provider or other.provider,
            model=self.model or other.model,
            total=None if both else self.total_tokens + other.total_tokens,
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON form, with ``total_tokens``."""
        return {  # by hand: dataclasses.asdict deep-copies, ~40 µs a call on every result
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost": self.cost,
            "provider": self.provider,
            "model": self.model,
            "total_tokens": self.total_tokens,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Usage:
        """Inverse of ``to_dict`` (unknown keys ignored)."""
        return cls(
            input_tokens=int(data.get("input_tokens") or 0),
            output_tokens=int(data.get("output_tokens") or 0),
            cost=data.get("cost"),
            provider=data.get("provider") or "",
            model=data.get("model") or "",
        )


@dataclass(slots=True)
class ToolCallRequest:
    """A tool call the model asked for; ``arguments`` is the parsed JSON object.

    ``arguments_error`` is set when the model's argument text was not a JSON object
    (the runtime turns that into an error result instead of calling the tool).
    """

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    arguments_error: str | None = None


@dataclass(slots=True)
class ModelResponse:
    """One complete assistant response."""

    content: str = ""
    tool_calls: list[ToolCallRequest] = field(default_factory=list)
    thinking: str = ""
    finish_reason: str = "stop"  # stop | tool_calls | length | content_filter | error
    usage: Usage = field(default_factory=Usage)
    provider: str = ""
    model: str = ""


@dataclass(slots=True, frozen=True)
class TextDelta:
    """A chunk of assistant text."""

    text: str
    type: str = "text_delta"


@dataclass(slots=True, frozen=True)
class ThinkingDelta:
    """A chunk of reasoning text (when the provider exposes it)."""

    text: str
    type: str = "thinking_delta"


@dataclass(slots=True, frozen=True)
class ToolCallDelta:
    """A fragment of a streamed tool call; ``index`` identifies the call within the response."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""
    type: str = "tool_call_delta"


@dataclass(slots=True, frozen=True)
class ResponseDone:
    """The last part of every stream."""

    response: ModelResponse
    type: str = "done"


StreamPart = TextDelta | ThinkingDelta | ToolCallDelta | ResponseDone


ToolChoiceMode = Literal["auto", "none", "required"]
TOOL_CHOICE_MODES: tuple[ToolChoiceMode, ...] = get_args(ToolChoiceMode)
# a mode, a bare tool name, the OpenAI ``{"type": "function", "function": {"name": ...}}``
# form, or None (the provider's default); the runtime enforces it (agentcli.runtime.choice)
ToolChoice = ToolChoiceMode | str | dict[str, Any] | None


# How hard a reasoning model thinks (seed 004); each model maps it to its provider's
# parameters (``models/reasoning.py``).
ThinkingLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]
THINKING_LEVELS: tuple[ThinkingLevel, ...] = get_args(ThinkingLevel)


@dataclass(slots=True)
class ModelSettings:
    """Per-call settings; ``extra`` is passed to the client untouched.

    ``thinking_level`` / ``thinking_budget``, ``session_id`` and ``api_key`` are not sent
    as they are: each model maps them to its provider (reasoning parameters, a prompt-cache
    key, the request's credentials)."""

    temperature: float | None = None
    max_tokens: int | None = None
    timeout: float | None = None
    tool_choice: ToolChoice = None
    extra: dict[str, Any] = field(default_factory=dict)
    thinking_level: ThinkingLevel | None = None
    thinking_budget: int | None = None  # tokens, for providers that take a budget
    session_id: str | None = None
    api_key: str | None = field(default=None, repr=False)  # from the agent's get_api_key

    def to_dict(self) -> dict[str, Any]:
        """The settings that are set, as call options."""
        data: dict[str, Any] = {}
        for key in ("temperature", "max_tokens", "timeout", "tool_choice"):
            value = getattr(self, key)
            if value is not None:
                data[key] = value
        data.update(self.extra)
        return data


@runtime_checkable
class Model(Protocol):
    """Anything that can stream a response."""

    provider: str
    name: str

    def stream(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        settings: ModelSettings,
    ) -> AsyncIterator[StreamPart]:
        """Yield deltas, then one ``ResponseDone``."""
        ...


async def collect(
    model: Model,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None = None,
    settings: ModelSettings | None = None,
    on_text: Callable[[str], Any] | None = None,
) -> ModelResponse:
    """Run a stream to the end and return the final response (``on_text`` sees each piece
    of text as it arrives)."""
    final: ModelResponse | None = None
    async for part in model.stream(messages, tools or [], settings or ModelSettings()):
        if isinstance(part, TextDelta) and on_text is not None:
            on_text(part.text)
        elif isinstance(part, ResponseDone):
            final = part.response
    if final is None:
        from agentcli.errors import ProviderError

        raise ProviderError(f"model {model.name!r} ended its stream without a response")
    return final

"""Offline models for runtime tests: a FunctionModel driven by a list of replies, and an
async ``ScriptModel`` whose replies may wait on the test."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest

from agentcli.models.base import (
    ModelResponse,
    ModelSettings,
    ResponseDone,
    TextDelta,
    ToolCallDelta,
    ToolCallRequest,
    Usage,
)
from agentcli.models.offline import FunctionModel


def reply_sequence(*replies: Any) -> Callable[..., Any]:
    """A model function that answers with ``replies`` in order (the last one repeats);
    callables among them are called with the messages."""
    state = {"index": 0}
    seen: list[list[dict[str, Any]]] = []

    def model(messages: list[dict[str, Any]], tools: list[dict[str, Any]], settings: Any) -> Any:
        seen.append(messages)
        index = min(state["index"], len(replies) - 1)
        state["index"] += 1
        reply = replies[index]
        return reply(messages) if callable(reply) else reply

    model.seen = seen  # type: ignore[attr-defined]
    return model


@pytest.fixture
def scripted() -> Callable[..., FunctionModel]:
    """Build a FunctionModel from a sequence of replies."""

    def build(*replies: Any) -> FunctionModel:
        function = reply_sequence(*replies)
        model = FunctionModel(function, name="test")
        return model

    return build


def call(name: str, **arguments: Any) -> dict[str, Any]:
    """A tool-call reply for one tool."""
    return {"content": "", "tool_calls": [{"name": name, "arguments": arguments}]}


def calls(*pairs: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    """A tool-call reply for several tools at once."""
    return {"content": "", "tool_calls": [{"name": n, "arguments": a} for n, a in pairs]}


class ScriptModel:
    """An async offline model: each call answers with the next reply (the last repeats).

    A reply is text, a ``{"content", "tool_calls"}`` dict, a ``ModelResponse``, an exception
    (raised), or a function of the messages (sync or async) returning one of those. Every
    call's messages, tools and settings are kept in ``calls``.
    """

    provider = "test"

    def __init__(self, *replies: Any, name: str = "script") -> None:
        self.replies = list(replies) or [""]
        self.name = name
        self.calls: list[tuple[list[dict[str, Any]], list[dict[str, Any]], ModelSettings]] = []

    @property
    def seen(self) -> list[list[dict[str, Any]]]:
        """The messages of every call."""
        return [messages for messages, _, _ in self.calls]

    async def stream(self, messages, tools, settings):
        index = min(len(self.calls), len(self.replies) - 1)
        self.calls.append((messages, tools, settings))
        reply = self.replies[index]
        if callable(reply):
            reply = reply(messages)
            if inspect.isawaitable(reply):
                reply = await reply
        if isinstance(reply, BaseException):
            raise reply
        response = reply if isinstance(reply, ModelResponse) else _response(reply, len(self.calls))
        response.provider = response.provider or self.provider
        response.model = response.model or self.name
        if response.content:
            yield TextDelta(response.content)
        for i, request in enumerate(response.tool_calls):
            yield ToolCallDelta(index=i, id=request.id, name=request.name)
        yield ResponseDone(response)


def _response(reply: Any, number: int) -> ModelResponse:
    if isinstance(reply, str):
        return ModelResponse(content=reply)
    requests = [
        ToolCallRequest(
            item.get("id") or f"call_{number}_{i}", item["name"], dict(item.get("arguments") or {})
        )
        for i, item in enumerate(reply.get("tool_calls") or [])
    ]
    return ModelResponse(
        content=reply.get("content") or "",
        tool_calls=requests,
        finish_reason="tool_calls" if requests else "stop",
        usage=Usage(input_tokens=1, output_tokens=1),
    )


def user_texts(messages: list[dict[str, Any]]) -> list[str]:
    """The contents of the user messages among OpenAI-style messages."""
    return [m["content"] for m in messages if m["role"] == "user"]

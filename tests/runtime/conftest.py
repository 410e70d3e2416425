"""Offline models for runtime tests: a FunctionModel driven by a list of replies."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

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

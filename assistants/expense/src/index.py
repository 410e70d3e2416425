"""Create and Next hooks of the expense assistant.

Create remembers when the request started (request memory), counts the user's requests
(user memory, persisted), records a trace node, and switches urgent requests to the
terse ``task`` preset. Next records how long the request took, traces failing tools, and
with metadata ``{"format": "json"}`` answers a structured object instead of text.
"""

from __future__ import annotations

import time
from typing import Any


def _last_user_text(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            return message["content"]
    return ""


def Create(ctx: Any, messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Before the model call."""
    query = _last_user_text(messages)
    ctx.memory.context.set("start", time.time())
    requests = ctx.memory.user.incr("requests")
    node = ctx.trace.add({"query": query}, {"label": "Create", "type": "hook"})
    urgent = "urgent" in query.lower()
    node.info(f"request {int(requests)} of user {ctx.user_id or 'anonymous'}")
    node.complete({"urgent": urgent})
    if urgent:
        return {"prompt_preset": "task", "temperature": 0}
    return None


def Next(ctx: Any, payload: dict[str, Any]) -> dict[str, Any] | None:
    """After the model call."""
    start = ctx.memory.context.get("start")
    duration_ms = int((time.time() - start) * 1000) if start else None
    tools = payload.get("tools") or []
    node = ctx.trace.add({"duration_ms": duration_ms}, {"label": "Next", "type": "hook"})
    for tool in tools:
        if tool.get("error"):
            node.error(f"tool {tool['tool']} failed: {tool['error']}")
    node.complete({"tools": [tool["tool"] for tool in tools]})
    if payload.get("error"):
        return {"data": {"status": "error", "message": payload["error"]}}
    if ctx.metadata.get("format") == "json":
        completion = payload.get("completion") or {}
        return {
            "data": {
                "status": "success",
                "response": completion.get("content", ""),
                "tools": [{"name": t["tool"], "result": t["result"]} for t in tools],
                "duration_ms": duration_ms,
            }
        }
    return None

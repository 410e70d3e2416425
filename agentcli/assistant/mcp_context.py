"""MCP resources in the model's context: what ``mcp.servers[].resources`` selects.

Each resource the patterns select becomes one system message after the prompts, headed
by its URI so the model (and whoever reads the request) can tell where the text came from::

    MCP resource data://users/7 (User 7, application/json) from server data:
    {"id": 7, "name": "Ada"}

They are read again on every request (a resource may change between turns) and never
stored in the chat history. Binary contents cannot travel in a system message: they are
left out, with a trace note.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_RESOURCE_CHARS", "resource_messages"]

# a resource is context, not a payload: past this it is cut (and the cut is said)
MAX_RESOURCE_CHARS = 100_000


def resource_messages(resources: list[dict[str, Any]], ctx: Any) -> list[dict[str, Any]]:
    """One system message per text resource; ``ctx.trace`` notes what was added or left out."""
    messages: list[dict[str, Any]] = []
    added: list[str] = []
    for item in resources:
        uri = str(item.get("uri") or "")
        if "text" not in item:
            ctx.trace.warn(
                f"MCP resource {uri} is binary ({item.get('mime_type') or 'no type'}); "
                "not added to the model's context"
            )
            continue
        text = str(item["text"])
        if len(text) > MAX_RESOURCE_CHARS:
            text = text[:MAX_RESOURCE_CHARS] + f"\n[cut at {MAX_RESOURCE_CHARS} characters]"
        about = ", ".join(str(v) for v in (item.get("name"), item.get("mime_type")) if v)
        heading = (
            f"MCP resource {uri}{f' ({about})' if about else ''} from server {item['server']}:"
        )
        messages.append({"role": "system", "content": f"{heading}\n{text}"})
        added.append(uri)
    if added:
        ctx.trace.add(
            {"uris": added}, {"label": "MCP resources in context", "type": "mcp"}
        ).complete()
    return messages

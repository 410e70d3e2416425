"""Resources and prompts of ``process`` tool servers, in the shapes MCP servers give them.

A process server's ``resources`` and ``prompts`` map names to functions of the package (as
its ``tools`` do). What a client sees of them comes from Yao's mapping files when there are
some (``mcps/mapping/<id>/resources/<name>.res.yao``: ``uri``, ``name``, ``description``,
``mimeType``; ``prompts/<name>.pmt.yao``: ``description``, ``arguments``), else from the
name: a resource without a mapping file is ``<server id>://<name>``. A resource URI may hold
``{placeholders}`` (``data://users/{id}``): reading ``data://users/7`` calls the function
with ``{"id": "7"}``.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any

from agentcli.assistant.mcps import ToolServerSpec
from agentcli.errors import ToolError
from agentcli.jsonsafe import json_safe

__all__ = [
    "match_uri",
    "process_prompt",
    "process_resource",
    "prompt_messages",
    "resource_content",
]

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def process_resource(spec: ToolServerSpec, name: str) -> dict[str, Any]:
    """Resource ``name`` of a process server as listed: ``{uri, name, description, mime_type}``."""
    meta = spec.resource_meta.get(name, {})
    return {
        "uri": str(meta.get("uri") or f"{spec.id}://{name}"),
        "name": str(meta.get("name") or name),
        "description": str(meta.get("description") or ""),
        "mime_type": str(meta.get("mimeType") or meta.get("mime_type") or ""),
    }


def match_uri(template: str, uri: str) -> dict[str, str] | None:
    """The placeholder values when ``uri`` is an instance of ``template`` (``{}`` when it
    is the template itself), else None."""
    if template == uri:
        return {}
    if "{" not in template:
        return None
    pattern = "".join(
        f"(?P<{part}>[^/]+)" if index % 2 else re.escape(part)
        for index, part in enumerate(_PLACEHOLDER.split(template))
    )
    found = re.fullmatch(pattern, uri)
    return dict(found.groupdict()) if found else None


def resource_content(uri: str, listed: dict[str, Any], value: Any) -> dict[str, Any]:
    """What a resource function returned as read contents: text as it is, bytes as a
    base64 ``blob``, anything else as JSON text."""
    mime_type = listed.get("mime_type") or ""
    if isinstance(value, bytes | bytearray):
        blob = base64.b64encode(bytes(value)).decode("ascii")
        return {"uri": uri, "mime_type": mime_type or "application/octet-stream", "blob": blob}
    if isinstance(value, str):
        return {"uri": uri, "mime_type": mime_type or "text/plain", "text": value}
    text = json.dumps(json_safe(value), ensure_ascii=False)
    return {"uri": uri, "mime_type": mime_type or "application/json", "text": text}


def process_prompt(spec: ToolServerSpec, name: str) -> dict[str, Any]:
    """Prompt ``name`` of a process server as listed: ``{name, description, arguments}``."""
    meta = spec.prompt_meta.get(name, {})
    arguments = []
    for item in meta.get("arguments") or []:
        if isinstance(item, dict) and item.get("name"):
            arguments.append(
                {
                    "name": str(item["name"]),
                    "description": str(item.get("description") or ""),
                    "required": bool(item.get("required")),
                }
            )
    return {
        "name": str(meta.get("name") or name),
        "description": str(meta.get("description") or ""),
        "arguments": arguments,
    }


def prompt_messages(listed: dict[str, Any], value: Any) -> dict[str, Any]:
    """What a prompt function returned as ``{description, messages}``: a string is one
    user message, a list holds messages (``{role, content}``), a dict may carry both."""
    description = listed.get("description") or ""
    if isinstance(value, dict) and "messages" in value:
        description = str(value.get("description") or description)
        value = value["messages"]
    if isinstance(value, str):
        value = [{"role": "user", "content": value}]
    if not isinstance(value, list) or not all(
        isinstance(m, dict) and isinstance(m.get("role"), str) for m in value
    ):
        raise ToolError(
            f"prompt {listed.get('name')!r} must return text or a list of {{role, content}}"
            f" messages, got {type(value).__name__}"
        )
    messages = [{"role": m["role"], "content": m.get("content", "")} for m in value]
    return {"description": description, "messages": messages}

"""Messages: what the model sees, with the runtime's own metadata.

A ``Message`` is one entry of the conversation (system, user, assistant, tool, or a
``custom`` message that only plugins understand). ``to_llm_messages`` converts the
standard ones to the OpenAI chat format that every model speaks.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from agentcli.choices import one_of
from agentcli.ids import new_id
from agentcli.models.base import Usage
from agentcli.runtime.tools import ToolCall, ToolResult, result_text

__all__ = [
    "ROLES",
    "Message",
    "MessageInput",
    "Role",
    "as_messages",
    "as_role",
    "assistant_message",
    "custom_message",
    "from_openai",
    "image_parts",
    "media_parts",
    "message_text",
    "new_id",
    "system_message",
    "to_llm_messages",
    "tool_message",
    "user_message",
]


# the OpenAI chat roles, and ``custom`` for the runtime-only messages plugins understand
Role = Literal["system", "developer", "user", "assistant", "tool", "function", "custom"]
ROLES: tuple[Role, ...] = get_args(Role)


def as_role(value: object) -> Role:
    """``value`` as a message role; a ``ValueError`` naming the roles for anything else."""
    role = one_of(value, ROLES)
    if role is None:
        raise ValueError(f"unknown message role {value!r} (expected one of {', '.join(ROLES)})")
    return role


@dataclass(slots=True)
class Message:
    """One conversation message."""

    role: Role
    content: Any = ""  # str, or a list of OpenAI-style content parts
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    is_error: bool = False
    thinking: str = ""
    usage: Usage | None = None
    finish_reason: str | None = None
    error: str | None = None
    provider: str = ""
    model: str = ""
    custom_type: str | None = None
    data: Any = None
    # a system message's named replacements of the system prompt (seed 004): the latest
    # text of each name is in every later request's head system message (None removes it)
    sections: dict[str, str | None] | None = None
    id: str = field(default_factory=new_id)
    timestamp: float = field(default_factory=time.time)

    def text(self) -> str:
        """The message's text (text parts of multimodal content joined)."""
        return message_text(self.content)

    def to_dict(self) -> dict[str, Any]:
        """JSON form (only the fields that are set)."""
        data: dict[str, Any] = {"id": self.id, "role": self.role, "content": self.content}
        if self.tool_calls:
            data["tool_calls"] = [call.to_dict() for call in self.tool_calls]
        for key in ("tool_call_id", "name", "finish_reason", "error", "custom_type"):
            value = getattr(self, key)
            if value is not None:
                data[key] = value
        if self.is_error:
            data["is_error"] = True
        if self.thinking:
            data["thinking"] = self.thinking
        if self.usage is not None:
            data["usage"] = self.usage.to_dict()
        if self.provider:
            data["provider"] = self.provider
        if self.model:
            data["model"] = self.model
        if self.data is not None:
            data["data"] = self.data
        if self.sections is not None:
            data["sections"] = self.sections
        data["timestamp"] = self.timestamp
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Message:
        """Inverse of ``to_dict``."""
        usage = data.get("usage")
        return cls(
            role=as_role(data["role"]),
            content=data.get("content", ""),
            tool_calls=[
                ToolCall(id=c["id"], name=c["name"], arguments=c.get("arguments") or {})
                for c in data.get("tool_calls") or []
            ],
            tool_call_id=data.get("tool_call_id"),
            name=data.get("name"),
            is_error=bool(data.get("is_error", False)),
            thinking=data.get("thinking", ""),
            usage=Usage.from_dict(usage) if usage else None,
            finish_reason=data.get("finish_reason"),
            error=data.get("error"),
            provider=data.get("provider", ""),
            model=data.get("model", ""),
            custom_type=data.get("custom_type"),
            data=data.get("data"),
            sections=data.get("sections"),
            id=data.get("id") or new_id(),
            timestamp=data.get("timestamp") or time.time(),
        )


def message_text(content: Any) -> str:
    """Text of a message content: a string, or the text parts of a part list."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text":
                texts.append(str(part.get("text", "")))
            elif isinstance(part, str):
                texts.append(part)
        return "\n".join(texts)
    return result_text(content)


def user_message(content: Any, **kwargs: Any) -> Message:
    """A user message."""
    return Message(role="user", content=content, **kwargs)


def system_message(
    content: str = "", *, sections: dict[str, str | None] | None = None, **kwargs: Any
) -> Message:
    """A system message: ``content`` is sent where it stands; ``sections`` replace named
    parts of the system prompt from then on."""
    return Message(role="system", content=content, sections=sections, **kwargs)


def image_parts(text: str, images: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI content parts for ``text`` and ``images``: each image as seed 004 gives it
    (``{"type": "image", "data": <base64>, "mime_type" | "mimeType": ...}``) or already as
    an ``image_url`` part."""
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    for image in images:
        if image.get("type") == "image_url":
            parts.append(dict(image))
            continue
        mime = image.get("mime_type") or image.get("mimeType") or "image/png"
        data = image.get("data")
        if not isinstance(data, str) or not data:
            raise ValueError("an image needs its base64 `data` (and a `mime_type`)")
        parts.append({"type": "image_url", "image_url": {"url": f"data:{mime};base64,{data}"}})
    return parts


def assistant_message(content: str = "", **kwargs: Any) -> Message:
    """An assistant message."""
    return Message(role="assistant", content=content, **kwargs)


def tool_message(result: ToolResult) -> Message:
    """The message that carries a tool result back to the model."""
    return Message(
        role="tool",
        content=result.for_model,  # a tool's to_model_output projection, when it has one
        tool_call_id=result.call_id,
        name=result.name,
        is_error=result.is_error,
    )


def custom_message(custom_type: str, data: Any) -> Message:
    """A runtime-only message; plugins project it into model messages (or it is dropped)."""
    return Message(role="custom", custom_type=custom_type, data=data)


def _is_failed_response(message: Message) -> bool:
    """An assistant response that failed or was aborted before saying anything."""
    return (
        message.role == "assistant"
        and message.finish_reason in ("error", "aborted")
        and not message.content
        and not message.tool_calls
    )


def from_openai(data: dict[str, Any]) -> Message:
    """A Message from an OpenAI chat-format dict (tool-call arguments may be JSON text)."""
    calls = []
    for index, item in enumerate(data.get("tool_calls") or []):
        function = item.get("function") or item
        arguments = function.get("arguments") or {}
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments or "{}")
            except ValueError:
                arguments = {"_raw": arguments}
        calls.append(
            ToolCall(
                str(item.get("id") or f"call_{index}"), str(function.get("name", "")), arguments
            )
        )
    return Message(
        role=as_role(data.get("role") or "user"),
        content=data.get("content") if data.get("content") is not None else "",
        tool_calls=calls,
        tool_call_id=data.get("tool_call_id"),
        name=data.get("name"),
    )


# text, a Message, an OpenAI-style dict, or a list of any of them
MessageInput = str | Message | dict[str, Any] | Sequence["MessageInput"]


def as_messages(message: MessageInput) -> list[Message]:
    """Normalise what callers pass (text, a Message, an OpenAI dict, a list) to Messages."""
    if isinstance(message, Message):
        return [message]
    if isinstance(message, str):
        return [Message(role="user", content=message)]
    if isinstance(message, dict):
        return [from_openai(message)]
    return [m for item in message for m in as_messages(item)]


def to_llm_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """OpenAI chat-format dicts for the standard messages; custom messages are dropped."""
    out: list[dict[str, Any]] = []
    # media of tool results, sent as one user message after the batch's tool messages
    # (a tool message carries text only, and nothing may come between a call's results)
    attachments: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "custom" or _is_failed_response(message):
            continue
        if message.sections is not None and not message.content:
            continue  # its sections are in the head system message
        if message.role == "tool":
            out.append(_tool_llm_message(message, attachments))
            continue
        if attachments:
            out.append({"role": "user", "content": attachments})
            attachments = []
        item: dict[str, Any] = {"role": message.role, "content": message.content}
        if message.role == "assistant" and message.tool_calls:
            item["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": result_text(call.arguments)},
                }
                for call in message.tool_calls
            ]
        if message.name and message.role == "user":
            item["name"] = message.name
        out.append(item)
    if attachments:
        out.append({"role": "user", "content": attachments})
    return out


_MEDIA_PARTS = ("image_url", "input_audio")


def media_parts(content: Any) -> bool:
    """Whether a tool result is OpenAI content parts with an image or audio among them
    (what an MCP tool's image/audio blocks become), rather than a JSON value."""
    return (
        isinstance(content, list)
        and bool(content)
        and all(isinstance(p, dict) and p.get("type") in ("text", *_MEDIA_PARTS) for p in content)
        and any(p["type"] in _MEDIA_PARTS for p in content)
    )


def _tool_llm_message(message: Message, attachments: list[dict[str, Any]]) -> dict[str, Any]:
    """The OpenAI tool message of a result; its media parts go to ``attachments``, headed
    by which call they came from, and the tool message says they follow."""
    content = message.content
    if media_parts(content):
        media = [part for part in content if part["type"] in _MEDIA_PARTS]
        texts = [str(part.get("text", "")) for part in content if part["type"] == "text"]
        note = f"[{len(media)} attachment(s) of this result follow in the next user message]"
        label = f"Attachments of tool result {message.name} ({message.tool_call_id}):"
        attachments.extend([{"type": "text", "text": label}, *media])
        text = "\n".join([*texts, note])
    else:
        text = result_text(content)
    return {
        "role": "tool",
        "tool_call_id": message.tool_call_id,
        "name": message.name,
        "content": text,
    }

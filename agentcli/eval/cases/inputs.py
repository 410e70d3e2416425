"""Case inputs as OpenAI-style messages: strings, messages, lists and multimodal parts.

``normalize_input`` runs when a case file is loaded: it checks the shape and resolves every
``file://`` source (relative to the case file's folder, confined to the project root) into a
``FileRef`` placeholder. ``build_messages`` runs when the case is sent: only then are the
files read and base64-encoded, so a 100k-case file does not hold every image in memory.
"""

from __future__ import annotations

import base64
import difflib
import json
import mimetypes
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentcli.errors import CaseFileError

__all__ = ["FileRef", "build_messages", "messages_text", "normalize_input"]

ROLES = ("system", "developer", "user", "assistant", "tool")
_MESSAGE_KEYS = ("role", "content", "name", "tool_call_id", "tool_calls", "refusal")
_PART_TYPES = ("text", "image", "image_url", "audio", "input_audio", "file")
_IMAGE_MIME = {
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".png": "image/png",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".bmp": "image/bmp",
}
_URL_PREFIXES = ("http://", "https://", "data:")
# A file:// part is read and sent inline (base64) with the request: providers take images
# and files of up to about 20 MB, and a larger one would only cost memory.
MAX_FILE_PART_BYTES = 20 * 1024 * 1024


@dataclass(slots=True, frozen=True)
class FileRef:
    """A local file named by a content part, resolved at load and encoded at send time."""

    kind: str  # "image" | "audio" | "file"
    path: Path
    name: str | None = None
    detail: str = "auto"

    def to_part(self) -> dict[str, Any]:
        """The OpenAI content part for this file (reads and base64-encodes it)."""
        try:
            data = base64.b64encode(self.path.read_bytes()).decode("ascii")
        except OSError as exc:
            raise CaseFileError(f"{self.path}: cannot read {self.kind}: {exc.strerror}") from exc
        suffix = self.path.suffix.lower()
        if self.kind == "image":
            mime = _IMAGE_MIME.get(suffix) or _guess_mime(self.path)
            url = f"data:{mime};base64,{data}"
            return {"type": "image_url", "image_url": {"url": url, "detail": self.detail}}
        if self.kind == "audio":
            return {"type": "input_audio", "input_audio": {"data": data, "format": suffix[1:]}}
        file_data = f"data:{_guess_mime(self.path)};base64,{data}"
        return {
            "type": "file",
            "file": {"filename": self.name or self.path.name, "file_data": file_data},
        }


def _guess_mime(path: Path) -> str:
    """MIME type by extension, ``application/octet-stream`` when unknown."""
    return mimetypes.guess_type(path.name)[0] or "application/octet-stream"


def normalize_input(input: Any, *, base_dir: Path, project_root: Path) -> list[dict[str, Any]]:
    """Messages for a case input; raises ``CaseFileError`` listing every problem (by field path)."""
    if input is None:
        return []
    if isinstance(input, str):
        return [{"role": "user", "content": input}]
    problems: list[str] = []
    resolver = _Resolver(base_dir, project_root, problems)
    if isinstance(input, dict):
        messages = [resolver.message(input, "input")]
    elif isinstance(input, list) and input:
        messages = [resolver.message(m, f"input[{i}]") for i, m in enumerate(input)]
    else:
        problems.append("input: must be a string, a message object or a non-empty list of messages")
        messages = []
    if problems:
        raise CaseFileError(problems)
    return messages


def build_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages ready for a model: every ``FileRef`` part replaced by its encoded content."""
    built = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list) and any(isinstance(p, FileRef) for p in content):
            message = {**message, "content": [_encoded(p) for p in content]}
        built.append(message)
    return built


def _encoded(part: Any) -> Any:
    """A content part with a ``FileRef`` encoded."""
    return part.to_part() if isinstance(part, FileRef) else part


def messages_text(messages: list[dict[str, Any]]) -> str:
    """A one-line view of an input: the last user message's text, else ``[N messages]``."""
    for message in reversed(messages):
        if message.get("role") == "user":
            return _content_text(message.get("content"))
    return f"[{len(messages)} messages]" if messages else ""


def _content_text(content: Any) -> str:
    """Text of a message content: the string, or its text parts joined by newlines."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [p["text"] for p in content if isinstance(p, dict) and p.get("type") == "text"]
        return "\n".join(texts) if texts else f"[{len(content)} content parts]"
    return ""


class _Resolver:
    """Walks one input, collecting problems instead of stopping at the first."""

    def __init__(self, base_dir: Path, root: Path, problems: list[str]) -> None:
        self.base_dir = base_dir
        self.root = root
        self.problems = problems

    def fail(self, where: str, message: str) -> None:
        """Record a problem at a field path."""
        self.problems.append(f"{where}: {message}")

    def message(self, message: Any, where: str) -> dict[str, Any]:
        """One message dict (role defaults to user; content parts normalised)."""
        if not isinstance(message, dict):
            self.fail(where, 'a message must be an object with "role" and "content"')
            return {}
        for key in message:
            if key not in _MESSAGE_KEYS:
                close = difflib.get_close_matches(str(key), _MESSAGE_KEYS, n=1)
                hint = f' (did you mean "{close[0]}"?)' if close else ""
                self.fail(where, f'unknown message field "{key}"{hint}')
        role = message.get("role", "user")
        if role not in ROLES:
            self.fail(f"{where}.role", f"must be one of {', '.join(ROLES)}, got {json.dumps(role)}")
        out: dict[str, Any] = {"role": role}
        if "content" in message:
            out["content"] = self.content(message["content"], f"{where}.content")
        elif not message.get("tool_calls"):
            self.fail(where, 'missing "content"')
        for key in ("name", "tool_call_id", "refusal"):
            if key in message:
                out[key] = message[key]
        if "tool_calls" in message:
            out["tool_calls"] = self.tool_calls(message["tool_calls"], f"{where}.tool_calls")
        return out

    def tool_calls(self, calls: Any, where: str) -> list[dict[str, Any]]:
        """Assistant tool calls in OpenAI form (object arguments become JSON strings)."""
        if not isinstance(calls, list):
            self.fail(where, "must be a list")
            return []
        out = []
        for i, call in enumerate(calls):
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict) or not isinstance(function.get("name"), str):
                self.fail(f"{where}[{i}]", 'needs "function": {"name", "arguments"}')
                continue
            arguments = function.get("arguments", "{}")
            if not isinstance(arguments, str):
                arguments = json.dumps(arguments, ensure_ascii=False)
            out.append(
                {
                    "id": str(call.get("id") or f"call_{i}"),
                    "type": call.get("type", "function"),
                    "function": {"name": function["name"], "arguments": arguments},
                }
            )
        return out

    def content(self, content: Any, where: str) -> Any:
        """A string, or a list of parts (a single part object counts as a list of one)."""
        if content is None or isinstance(content, str):
            return content
        if isinstance(content, dict):
            return [self.part(content, where)]
        if isinstance(content, list):
            return [self.part(p, f"{where}[{i}]") for i, p in enumerate(content)]
        self.fail(where, "must be a string or a list of content parts")
        return content

    def part(self, part: Any, where: str) -> Any:
        """One content part: text, image, audio or file (local files become ``FileRef``)."""
        if isinstance(part, str):
            return {"type": "text", "text": part}
        kind = part.get("type") if isinstance(part, dict) else None
        if kind not in _PART_TYPES:
            shown = json.dumps(kind) if kind is not None else "missing"
            self.fail(where, f"content part type {shown}: use text, image, audio or file")
            return part
        if kind == "text":
            if not isinstance(part.get("text"), str):
                self.fail(where, 'a text part needs "text"')
            return {"type": "text", "text": part.get("text")}
        if kind in ("image", "image_url"):
            return self.image(part, where)
        if kind in ("audio", "input_audio"):
            return self.audio(part, where)
        return self.file(part, where)

    def image(self, part: dict[str, Any], where: str) -> Any:
        """An image from ``source`` (file:// or URL), ``url``, or an OpenAI ``image_url``."""
        detail = part.get("detail", "auto")
        nested = part.get("image_url")
        source = (
            part.get("source")
            or part.get("url")
            or (nested.get("url") if isinstance(nested, dict) else nested)
        )
        if isinstance(nested, dict):
            detail = nested.get("detail", detail)
        if isinstance(source, str) and source.startswith("file://"):
            path = self.local_file(source, where)
            return FileRef("image", path, detail=detail) if path else part
        if isinstance(source, str) and source.startswith(_URL_PREFIXES):
            return {"type": "image_url", "image_url": {"url": source, "detail": detail}}
        self.fail(where, 'an image part needs "source": "file://..." or an http(s)/data URL')
        return part

    def audio(self, part: dict[str, Any], where: str) -> Any:
        """Audio from ``source: file://...``, ``data`` + ``format``, or an ``input_audio`` object."""
        source = part.get("source")
        if isinstance(source, str) and source.startswith("file://"):
            path = self.local_file(source, where)
            return FileRef("audio", path) if path else part
        nested = part.get("input_audio")
        if isinstance(nested, dict) and "data" in nested and "format" in nested:
            return {"type": "input_audio", "input_audio": nested}
        if "data" in part and "format" in part:
            data = {"data": part["data"], "format": part["format"]}
            return {"type": "input_audio", "input_audio": data}
        self.fail(where, 'an audio part needs "source": "file://..." or "data" and "format"')
        return part

    def file(self, part: dict[str, Any], where: str) -> Any:
        """A document from ``source: file://...`` (optional ``name``) or an OpenAI ``file`` object."""
        source = part.get("source")
        if isinstance(source, str) and source.startswith("file://"):
            path = self.local_file(source, where)
            return FileRef("file", path, name=part.get("name")) if path else part
        if isinstance(part.get("file"), dict):
            return {"type": "file", "file": part["file"]}
        self.fail(where, 'a file part needs "source": "file://..."')
        return part

    def local_file(self, source: str, where: str) -> Path | None:
        """The resolved path of a ``file://`` source, confined to the project root."""
        raw = source[len("file://") :]
        shown = _shown_source(source)
        if "\0" in raw:
            self.fail(where, f"{shown}: a file name cannot hold a NUL byte")
            return None
        try:
            path = Path(raw).expanduser()
            if not path.is_absolute():
                path = self.base_dir / path
            # resolve() follows symlinks, so a link pointing outside the project is caught too.
            resolved, root = path.resolve(), self.root.resolve()
            if not resolved.is_relative_to(root):
                self.fail(where, f"{shown} is outside the project root {root}")
                return None
            if not resolved.is_file():
                missing = "is a directory" if resolved.is_dir() else "file not found"
                self.fail(where, f"{shown}: {missing} ({resolved})")
                return None
            size = resolved.stat().st_size
            if size > MAX_FILE_PART_BYTES:
                self.fail(
                    where,
                    f"{shown} is {size:,} bytes, over the {MAX_FILE_PART_BYTES:,}-byte limit "
                    "of a file:// part (it is sent inline with the request)",
                )
                return None
        except UnicodeError:  # a lone surrogate: no file system can name it
            self.fail(where, f"{shown}: a file name cannot hold a lone surrogate")
            return None
        except (OSError, RuntimeError) as exc:  # a name too long, no home directory for ~
            reason = getattr(exc, "strerror", None) or str(exc)
            self.fail(where, f"{shown}: cannot use this file: {reason}")
            return None
        return resolved


def _shown_source(source: str, limit: int = 120) -> str:
    """A ``file://`` source as messages quote it: shortened, with control characters escaped."""
    text = json.dumps(source, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 4] + '..."'

"""How an OpenAI-compatible model's requests reach the server: the ``ChatTransport`` protocol.

A transport takes one streaming chat-completions request and yields its chunks (dicts or
SDK objects, as ``StreamAssembler`` reads them). Three implement it:

- ``aiohttp`` (the default, ``models/aiohttp_transport.py``): a pooled aiohttp session,
  reading the server-sent events itself (``HttpChatTransport`` below);
- ``sdk`` (``models/sdk_transport.py``): the official ``openai`` SDK;
- ``MockTransport`` (``models/mock_transport.py``): an in-memory handler, for unit tests of
  the code above the transport.

Every failure leaves a transport as it came (aiohttp's, httpx's, the SDK's or ours);
``errors_map.map_error`` turns it into a ``ModelError``. Nothing heavy is imported here.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from agentcli.models.errors_map import HttpStatusError, not_a_stream
from agentcli.models.streaming import limited, lines

__all__ = [
    "TRANSPORTS",
    "ChatTransport",
    "Endpoint",
    "HttpChatTransport",
    "HttpResponse",
    "TransportFactory",
    "TransportName",
    "json_body",
    "read_body",
    "response_chunks",
    "unstreamed_chunks",
]

TransportName = Literal["aiohttp", "sdk"]
TRANSPORTS: tuple[TransportName, ...] = ("aiohttp", "sdk")
# Seconds an idle connection is trusted: under the 5 s that uvicorn (vLLM) and many
# gateways keep one open, so the server does not close it as a request goes out.
KEEPALIVE_EXPIRY = 4.0


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where and how one model's requests go: everything a transport is built from."""

    base_url: str  # the API root, ending in "/"
    api_key: str = field(repr=False)
    timeout: float
    label: str  # "openai model 'm'", for messages
    query: dict[str, str] = field(default_factory=dict)  # e.g. Azure's api-version
    pool_size: int = 0  # connections kept and used at once; 0: no limit
    max_response_bytes: int = 64 * 1024 * 1024
    verify: bool = True
    proxy: str | None = None  # from the environment (``proxies.proxy_for``)

    def headers(self) -> dict[str, str]:
        """The headers of every request; a value with a line break is refused, named and
        never quoted (it may be a key)."""
        fields = {
            "Authorization": f"Bearer {self.api_key}",
            "Accept": "application/json",
            "Content-Type": "application/json",
            "User-Agent": "agentcli",
        }
        for name, value in fields.items():
            if "\r" in value or "\n" in value:
                raise ValueError(f"the {name} header contains a line break")
        return fields


class ChatTransport(Protocol):
    """Streams the chunks of chat-completions requests to one endpoint."""

    proxy: str | None  # the proxy requests go through, named in connection-error hints

    def chunks(self, request: dict[str, Any], timeout: float) -> AsyncIterator[Any]:
        """The chunks of one streaming request (its own ``timeout`` on every wait)."""
        ...

    async def aclose(self) -> None:
        """Close the pooled connections."""
        ...


TransportFactory = Callable[[Endpoint], ChatTransport]
"""Builds a transport for a model's endpoint (once per event loop)."""


class HttpResponse(Protocol):
    """The status and headers of a response whose body is read as it arrives."""

    @property
    def status_code(self) -> int: ...

    @property
    def headers(self) -> Mapping[str, str]: ...  # names matched without case

    def aiter_bytes(self) -> AsyncIterator[bytes]: ...


def json_body(payload: Any) -> bytes:
    """Compact UTF-8 JSON, as the SDK sends it."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


class HttpChatTransport(ABC):
    """A transport that POSTs the request itself and reads the server-sent events: what
    the aiohttp and mock transports share. Subclasses supply ``post``."""

    proxy: str | None = None

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint

    @abstractmethod
    def post(self, body: bytes, timeout: float) -> AbstractAsyncContextManager[HttpResponse]:
        """POST ``body`` to ``chat/completions``; the body is read inside the ``async with``."""

    @abstractmethod
    async def aclose(self) -> None:
        """Close what the transport pools."""

    async def chunks(self, request: dict[str, Any], timeout: float) -> AsyncIterator[Any]:
        """The streamed chunks of one request."""
        endpoint = self.endpoint
        async with self.post(json_body(request), timeout) as response:
            async for chunk in response_chunks(
                response, endpoint.label, endpoint.max_response_bytes
            ):
                yield chunk


async def response_chunks(response: HttpResponse, label: str, limit: int) -> AsyncIterator[Any]:
    """The chunks of a chat-completions response, read off its server-sent events. A body
    that is not a stream (an error, one JSON completion) and each line of a stream are
    held whole, so each is kept within ``limit`` (``max_response_bytes``); the streamed
    text is counted by the assembler."""
    status, headers = response.status_code, response.headers
    if status >= 400:
        raise HttpStatusError.from_body(status, await read_body(response, limit, label), headers)
    kind = headers.get("content-type", "").split(";")[0].strip().lower()
    if status != 200 or kind not in ("text/event-stream", ""):
        # Not a stream: a server that ignores "stream" answers one JSON completion
        # (served as it is); anything else means the api_base points elsewhere.
        body = await read_body(response, limit, label)
        for chunk in unstreamed_chunks(status, kind, body, headers, label):
            yield chunk
        return
    # Read to the end of the body even after [DONE]: leaving early would close the
    # connection instead of returning it to the pool.
    async for line in lines(response.aiter_bytes(), limit=limit, label=label):
        chunk = _sse_chunk(line, headers)
        if chunk is not None:
            yield chunk


async def read_body(response: HttpResponse, limit: int, label: str) -> bytes:
    """A whole body, ending in ``ResponseTooLarge`` past ``limit`` bytes."""
    return b"".join([piece async for piece in limited(response.aiter_bytes(), limit, label)])


def _sse_chunk(line: str, headers: Mapping[str, str]) -> Any:
    """The chunk on a server-sent ``data:`` line (None for other lines and ``[DONE]``); an
    ``{"error": ...}`` event is raised as the HTTP error it stands for."""
    if not line.startswith("data:"):
        return None
    data = line[5:].strip()
    if not data or data == "[DONE]":
        return None
    chunk = json.loads(data)
    if isinstance(chunk, dict) and isinstance(chunk.get("error"), dict):
        raise HttpStatusError.from_payload(500, chunk, headers)
    return chunk


def unstreamed_chunks(
    status: int, kind: str, body: bytes, headers: Mapping[str, str], label: str
) -> list[dict[str, Any]]:
    """The chunks of an answer that did not come as ``text/event-stream``: server-sent
    events under another content type, or a whole chat completion as one chunk. Anything
    else is an error that says what came back."""
    if status == 200 and body.lstrip().startswith(b"data:"):
        chunks = (
            _sse_chunk(line, headers) for line in body.decode("utf-8", "replace").splitlines()
        )
        return [chunk for chunk in chunks if chunk is not None]
    if status == 200 and kind.endswith("json"):
        whole = _completion_chunk(body, headers)
        if whole is not None:
            return [whole]
    raise not_a_stream(label, status, kind, headers.get("location"))


def _completion_chunk(body: bytes, headers: Mapping[str, str]) -> dict[str, Any] | None:
    """A whole (unstreamed) chat completion as one streamed chunk; None when the body is
    no completion. An ``{"error": ...}`` body is raised as the error it stands for."""
    try:
        payload = json.loads(body)
    except ValueError:
        return None
    if not isinstance(payload, dict):
        return None
    if isinstance(payload.get("error"), dict):
        raise HttpStatusError.from_payload(500, payload, headers)
    choices = payload.get("choices")
    if not (isinstance(choices, list) and choices and isinstance(choices[0], dict)):
        return None
    first = choices[0]
    found = first.get("message")
    message: dict[str, Any] = found if isinstance(found, dict) else {}
    tool_calls = [
        {**call, "index": index}
        for index, call in enumerate(message.get("tool_calls") or [])
        if isinstance(call, dict)
    ]
    delta = {**message, "tool_calls": tool_calls} if tool_calls else dict(message)
    finish = first.get("finish_reason") or "stop"
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {"choices": [choice], "usage": payload.get("usage")}

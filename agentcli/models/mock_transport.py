"""An in-memory ``ChatTransport`` for unit tests of the code above the transport.

Modelled on httpx's ``MockTransport``: a handler gets each request and returns the
response (or raises, as a broken connection would). The response's body is read through
the same server-sent-events code as the aiohttp transport's, so a test covers everything
but the socket::

    def handler(request: MockRequest) -> MockResponse:
        return MockResponse.sse([{"choices": [{"delta": {"content": "hi"}, "finish_reason": "stop"}]}])

    model = OpenAICompatModel("m", api_base="http://mock/v1", transport=MockTransport(handler))
"""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from agentcli.models.transport import Endpoint, HttpChatTransport

__all__ = ["MockRequest", "MockResponse", "MockTransport"]


@dataclass(frozen=True, slots=True)
class MockRequest:
    """One request as it would go out: URL, headers, the JSON body and the call's timeout."""

    method: str
    url: str
    headers: dict[str, str]
    json: Any
    timeout: float


class _Headers(dict[str, str]):
    """Header names matched without case, as a server's headers are."""

    def __init__(self, headers: Mapping[str, str]) -> None:
        super().__init__({name.lower(): value for name, value in headers.items()})

    def get(self, name: str, default: Any = None) -> Any:
        return super().get(name.lower(), default)


@dataclass(slots=True)
class MockResponse:
    """A response: status, headers and the body in the pieces it arrives in."""

    status_code: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes | Iterable[bytes] = ()

    def __post_init__(self) -> None:
        self.headers = _Headers(self.headers)
        self.body = [self.body] if isinstance(self.body, bytes) else list(self.body)

    @classmethod
    def sse(cls, chunks: Iterable[Any], *, done: bool = True) -> MockResponse:
        """A ``text/event-stream`` answer, one ``data:`` event per chunk."""
        events = [f"data: {json.dumps(chunk)}\n\n".encode() for chunk in chunks]
        return cls(
            200,
            {"Content-Type": "text/event-stream"},
            [*events, *[b"data: [DONE]\n\n"][: int(done)]],
        )

    @classmethod
    def json(cls, payload: Any, status_code: int = 200) -> MockResponse:
        """A JSON answer (an error body, or a whole completion)."""
        return cls(status_code, {"Content-Type": "application/json"}, json.dumps(payload).encode())

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The body's pieces."""
        for piece in [self.body] if isinstance(self.body, bytes) else self.body:
            yield piece


Handler = Callable[[MockRequest], "MockResponse | Awaitable[MockResponse]"]


class MockTransport(HttpChatTransport):
    """Answers every request with ``handler(request)``; ``requests`` keeps them in order."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.requests: list[MockRequest] = []
        self.closed = False

    def __call__(self, endpoint: Endpoint) -> MockTransport:
        """As a ``TransportFactory``: take the model's endpoint (URL, key, limits)."""
        self.endpoint = endpoint
        return self

    @asynccontextmanager
    async def post(self, body: bytes, timeout: float) -> AsyncIterator[MockResponse]:
        """Hand the request to the handler; its answer is the response."""
        endpoint = self.endpoint
        query = "&".join(f"{name}={value}" for name, value in endpoint.query.items())
        request = MockRequest(
            "POST",
            endpoint.base_url + "chat/completions" + (f"?{query}" if query else ""),
            endpoint.headers(),
            json.loads(body),
            timeout,
        )
        self.requests.append(request)
        answer = self.handler(request)
        yield await answer if inspect.isawaitable(answer) else answer

    async def aclose(self) -> None:
        """Mark the transport closed (a test may check the model closed it)."""
        self.closed = True

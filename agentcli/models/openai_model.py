"""A model for OpenAI and every OpenAI-compatible server (``openai/*``, any ``api_base``).

Three transports speak the same chat-completions protocol and share assembly, retries,
error mapping and usage accounting:

- ``http`` (the default): a streaming POST over our pooled HTTP/1.1 client
  (``models/http11.py``), parsing the server-sent events itself. A call costs ~0.2 ms of
  CPU and nothing heavy is imported, which keeps a latency-bound eval near its ideal time.
  When a proxy is configured for the server, it goes through ``httpx`` instead.
- ``httpx``: the same over pooled ``httpx2`` clients (~0.6 ms of CPU a call).
- ``sdk``: the official ``openai`` SDK (``transport: sdk`` on a connector), for servers
  that need what the SDK adds; it costs 0.4 s to import and ~1.4 ms of CPU a call.

One client per model instance (and event loop) is reused so connections stay alive; the
SDK's own retries are off because ``retry_stream`` does them. Nothing is imported until the
first call, so building the model costs nothing.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
import math
import os
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from agentcli.errors import AuthenticationError, ProviderError
from agentcli.models.base import ModelSettings, ResponseDone, StreamPart
from agentcli.models.errors_map import HttpStatusError, map_error
from agentcli.models.http11 import Http11Client, proxy_applies
from agentcli.models.network import DEFAULT_MAX_RESPONSE_BYTES, NetworkModel
from agentcli.models.retry import OnRetry, RetryPolicy
from agentcli.models.streaming import StreamAssembler, chat_request, limited, lines
from agentcli.secrets import redact_text

__all__ = ["DEFAULT_TIMEOUT", "OpenAICompatModel"]

DEFAULT_TIMEOUT = 120.0
OPENAI_API_BASE = "https://api.openai.com/v1"
TRANSPORTS = ("http", "httpx", "sdk")
# A key is required by the SDK even when a local server ignores it.
_DUMMY_KEY = "none"


class OpenAICompatModel(NetworkModel):
    """Streams chat completions from an OpenAI-compatible server (see the module doc)."""

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        provider: str = "openai",
        timeout: float = DEFAULT_TIMEOUT,
        retry: RetryPolicy | None = None,
        extra: dict[str, Any] | None = None,
        on_retry: OnRetry | None = None,
        transport: str = "http",
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        if transport not in TRANSPORTS:
            from agentcli.errors import ConfigError

            raise ConfigError(
                f"unknown transport {transport!r} for {model}", hint="use http, httpx or sdk"
            )
        self.transport = transport
        self.name = model.removeprefix("openai/")
        self.provider = provider
        self.api_base = api_base
        self.api_key = api_key if api_key or not api_base else _DUMMY_KEY
        self._configure(
            timeout=timeout,
            retry=retry,
            extra=extra,
            on_retry=on_retry,
            max_response_bytes=max_response_bytes,
        )
        self._client: Any = None
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self.via_proxy = False  # whether the current client goes through a proxy
        self._known_params: frozenset[str] = frozenset()

    def __repr__(self) -> str:
        return f"OpenAICompatModel({self.provider}/{self.name}, api_base={self.api_base!r})"

    async def aclose(self) -> None:
        """Close the pooled HTTP connections."""
        client, self._client, self._client_loop = self._client, None, None
        if client is not None:
            await (client.close() if self.transport == "sdk" else client.aclose())

    def _key(self) -> str:
        key = self.api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            raise AuthenticationError(
                f"{self.provider} model {self.name!r}: no API key",
                hint="set OPENAI_API_KEY or give the connector an api_key",
            )
        return key

    def _client_for_loop(self) -> Any:
        """The shared client, rebuilt when called from a new event loop (its pool is bound to one)."""
        loop = asyncio.get_running_loop()
        if self._client is not None and self._client_loop is loop:
            return self._client
        key = self._key()
        # The path ends in "/" so "chat/completions" joins under it; a query (Azure-style
        # ?api-version=...) goes on every request, as each client spells it.
        parts = urlsplit(self.api_base or OPENAI_API_BASE)
        base_url = urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/") + "/", "", ""))
        query = dict(parse_qsl(parts.query, keep_blank_values=True))
        self.via_proxy = False
        if self.transport != "sdk":
            # As many pooled connections as calls may run at once: reopening them between
            # waves of a parallel run costs more than the requests themselves.
            size = self.limiter.ceiling if self.limiter else 16
            self.via_proxy = proxy_applies(base_url)
            if self.transport == "http" and not self.via_proxy:
                self._client = Http11Client(
                    base_url + (f"?{parts.query}" if parts.query else ""),
                    headers={"Authorization": f"Bearer {key}"},
                    timeout=self.timeout,
                    max_idle=size,
                )
            else:
                self._client = _HttpPool(size, base_url, key, self.timeout, query)
            self._client_loop = loop
            return self._client
        from openai import AsyncOpenAI, DefaultAsyncHttpxClient

        # Our own pool instead of the SDK's wrapper, whose __del__ schedules a close on
        # whatever loop runs then: noise when this client's loop is already gone.
        self._client = AsyncOpenAI(
            api_key=key,
            base_url=base_url,
            default_query=query or None,
            max_retries=0,
            timeout=self.timeout,
            http_client=DefaultAsyncHttpxClient(),
        )
        self._client_loop = loop
        create = self._client.chat.completions.create
        self._known_params = frozenset(inspect.signature(create).parameters)
        return self._client

    def _endpoint(self) -> str:
        """``host:port`` of the server, for connection errors."""
        parts = urlsplit(self.api_base or OPENAI_API_BASE)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        return f"{parts.hostname}:{port}"

    async def _attempt(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        settings: ModelSettings,
    ) -> AsyncGenerator[StreamPart, None]:
        """One request, streamed; every failure leaves as a ``ModelError``."""
        request, timeout = chat_request(
            self.name, messages, tools, settings, self.extra, self.timeout
        )
        try:
            client = self._client_for_loop()
            assembler = StreamAssembler(
                self.provider,
                self.name,
                cost_model=f"{self.provider}/{self.name}",
                limit=self.max_response_bytes,
            )
            chunks = self._sdk_chunks if self.transport == "sdk" else self._http_chunks
            async for chunk in chunks(client, request, timeout):
                for part in assembler.feed(chunk):
                    yield part
            yield ResponseDone(assembler.finish())
        except Exception as exc:
            raise map_error(
                exc,
                provider=self.provider,
                model=self.name,
                secrets=[self.api_key, os.environ.get("OPENAI_API_KEY")],
                timeout=timeout,
                endpoint=self._endpoint(),
                via_proxy=self.via_proxy,
            ) from exc

    async def _http_chunks(
        self, client: Http11Client | _HttpPool, request: dict[str, Any], timeout: float
    ) -> AsyncIterator[dict[str, Any]]:
        """The streamed chunks of one request, read off the server-sent events. A body
        that is not a stream (an error, one JSON completion) and each line of a stream are
        held whole, so each is kept within ``max_response_bytes``; the streamed text is
        counted by the assembler."""
        label = f"{self.provider} model {self.name!r}"
        limit = self.max_response_bytes
        async with client.stream(
            "POST", "chat/completions", json=request, timeout=timeout
        ) as response:
            if response.status_code >= 400:
                raise HttpStatusError.from_body(
                    response.status_code, await _read(response, limit, label), response.headers
                )
            kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
            if response.status_code != 200 or kind not in ("text/event-stream", ""):
                # Not a stream: a server that ignores "stream" answers one JSON completion
                # (served as it is); anything else means the api_base points elsewhere.
                for chunk in _unstreamed_chunks(
                    response.status_code,
                    kind,
                    await _read(response, limit, label),
                    response.headers,
                    label,
                ):
                    yield chunk
                return
            # Read to the end of the body even after [DONE]: leaving early would close the
            # connection instead of returning it to the pool.
            async for line in lines(response.aiter_bytes(), limit=limit, label=label):
                chunk = _sse_chunk(line, response.headers)
                if chunk is not None:
                    yield chunk

    async def _sdk_chunks(
        self, client: Any, request: dict[str, Any], timeout: float
    ) -> AsyncIterator[Any]:
        """The streamed chunks of one request through the openai SDK."""
        # Options the SDK does not name go in the body as they are (provider extensions).
        unknown = {k: request.pop(k) for k in list(request) if k not in self._known_params}
        if unknown:
            request["extra_body"] = {**unknown, **request.get("extra_body", {})}
        stream = await client.chat.completions.create(**request, timeout=timeout)
        async with stream:
            async for chunk in stream:
                yield chunk


async def _read(response: Any, limit: int, label: str) -> bytes:
    """A whole body, ending in ``ResponseTooLarge`` past ``limit`` bytes."""
    return b"".join([piece async for piece in limited(response.aiter_bytes(), limit, label)])


def _sse_chunk(line: str, headers: Any) -> Any:
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


def _unstreamed_chunks(
    status: int, kind: str, body: bytes, headers: Any, label: str
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
        try:
            payload = json.loads(body)
        except ValueError:
            payload = None
        choices = payload.get("choices") if isinstance(payload, dict) else None
        if isinstance(payload, dict) and isinstance(payload.get("error"), dict):
            raise HttpStatusError.from_payload(500, payload, headers)
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            first = choices[0]
            message = first.get("message") if isinstance(first.get("message"), dict) else {}
            tool_calls = [
                {**call, "index": index}
                for index, call in enumerate(message.get("tool_calls") or [])
                if isinstance(call, dict)
            ]
            delta = {**message, "tool_calls": tool_calls} if tool_calls else dict(message)
            finish = first.get("finish_reason") or "stop"
            choice = {"index": 0, "delta": delta, "finish_reason": finish}
            return [{"choices": [choice], "usage": payload.get("usage")}]
    location = headers.get("location")
    what = f"HTTP {status}" + (f" {kind}" if kind else "") + (f" to {location}" if location else "")
    raise ProviderError(
        redact_text(f"{label}: the server answered {what}, not a chat-completions stream"),
        retryable=False,
        hint="check the api_base: it should be the API root, usually ending in /v1",
    )


class _HttpPool:
    """Several small ``httpx2`` clients used in turn. httpcore checks every connection of a
    pool on each request, so one pool of 50 connections costs ~0.5 ms of CPU a call where
    five pools of 10 cost a fifth of that."""

    PER_CLIENT = 10

    def __init__(
        self, size: int, base_url: str, key: str, timeout: float, query: dict[str, str]
    ) -> None:
        import httpx2 as httpx

        count = max(1, math.ceil(size / self.PER_CLIENT))
        per_client = math.ceil(size / count)
        limits = httpx.Limits(max_connections=per_client, max_keepalive_connections=per_client)
        # One TLS context for all: loading the CA bundle costs ~20 ms a client.
        tls = httpx.create_ssl_context()
        self.clients = [
            httpx.AsyncClient(
                base_url=base_url,
                headers={"Authorization": f"Bearer {key}"},
                params=query,
                limits=limits,
                timeout=timeout,
                verify=tls,
            )
            for _ in range(count)
        ]
        self._turn = itertools.cycle(self.clients)

    def stream(self, method: str, path: str, *, json: Any, timeout: float) -> Any:
        """``httpx.AsyncClient.stream`` on the clients in turn."""
        return next(self._turn).stream(method, path, json=json, timeout=timeout)

    async def aclose(self) -> None:
        """Close every client's connections."""
        for client in self.clients:
            await client.aclose()

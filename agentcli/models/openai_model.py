"""A model for OpenAI and every OpenAI-compatible server (``openai/*``, any ``api_base``).

Requests go through a ``ChatTransport`` (``models/transport.py``): ``aiohttp`` (the
default), ``sdk`` (the official ``openai`` SDK, ``transport: sdk`` on a connector), or one
built by a function given instead of a name (``MockTransport`` in unit tests). All share the assembly, retries,
error mapping and usage accounting here.

One transport per model instance and event loop is reused so connections stay alive; it
keeps as many connections as the run's ``--parallel`` (the limiter's ceiling). Nothing is
imported until the first call, so building the model costs nothing.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncGenerator
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from agentcli.errors import AuthenticationError, ConfigError
from agentcli.models.base import ModelSettings, ResponseDone, StreamPart
from agentcli.models.errors_map import map_error
from agentcli.models.network import DEFAULT_MAX_RESPONSE_BYTES, NetworkModel
from agentcli.models.pricing import Price
from agentcli.models.proxies import proxy_for
from agentcli.models.reasoning import openai_params
from agentcli.models.retry import OnRetry, RetryPolicy
from agentcli.models.streaming import StreamAssembler, chat_request
from agentcli.models.transport import TRANSPORTS, ChatTransport, Endpoint, TransportFactory

__all__ = ["DEFAULT_TIMEOUT", "TRANSPORTS", "OpenAICompatModel"]

DEFAULT_TIMEOUT = 120.0
OPENAI_API_BASE = "https://api.openai.com/v1"
# A key is required by the SDK even when a local server ignores it.
_DUMMY_KEY = "none"
# Connections without a limiter (a model used outside a run): as many as calls at once.
_UNLIMITED = 0


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
        transport: str | TransportFactory = "aiohttp",
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        verify: bool = True,
        price: Price | None = None,
    ) -> None:
        if isinstance(transport, str) and transport not in TRANSPORTS:
            raise ConfigError(
                f"unknown transport {transport!r} for {model}",
                hint=f"use one of {', '.join(TRANSPORTS)}",
            )
        self.transport = transport
        self.name = model.removeprefix("openai/")
        self.provider = provider
        self.api_base = api_base
        self.api_key = api_key if api_key or not api_base else _DUMMY_KEY
        self.verify = verify
        self._configure(
            timeout=timeout,
            retry=retry,
            extra=extra,
            on_retry=on_retry,
            max_response_bytes=max_response_bytes,
            price=price,
        )
        self._client: ChatTransport | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self._client_key: str | None = None  # the per-request key the transport was built with
        self._closing: set[asyncio.Task[None]] = set()  # pools of replaced keys, closing
        if transport == "aiohttp":
            # Loaded with the model (resolved before a run starts), not by the first call:
            # importing aiohttp takes ~0.25 s, which would stall every case running at once.
            import aiohttp  # noqa: F401

    def __repr__(self) -> str:
        return f"OpenAICompatModel({self.provider}/{self.name}, api_base={self.api_base!r})"

    @property
    def via_proxy(self) -> bool:
        """Whether the current transport goes through a proxy."""
        return self._client is not None and bool(self._client.proxy)

    async def aclose(self) -> None:
        """Close the pooled HTTP connections."""
        client, self._client, self._client_loop = self._client, None, None
        if client is not None:
            await client.aclose()
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)

    def _key(self) -> str:
        key = self.api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            raise AuthenticationError(
                f"{self.provider} model {self.name!r}: no API key",
                hint="set OPENAI_API_KEY or give the connector an api_key",
            )
        return key

    def endpoint(self, api_key: str | None = None) -> Endpoint:
        """Where this model's requests go, read from its settings and the environment
        (``api_key``: a key fetched for this request, over the model's own)."""
        # The path ends in "/" so "chat/completions" joins under it; a query (Azure-style
        # ?api-version=...) goes on every request.
        parts = urlsplit(self.api_base or OPENAI_API_BASE)
        base_url = urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/") + "/", "", ""))
        return Endpoint(
            base_url=base_url,
            api_key=api_key or self._key(),
            timeout=self.timeout,
            label=f"{self.provider} model {self.name!r}",
            query=dict(parse_qsl(parts.query, keep_blank_values=True)),
            # As many pooled connections as calls may run at once: reopening them between
            # waves of a parallel run costs more than the requests themselves.
            pool_size=self.limiter.ceiling if self.limiter else _UNLIMITED,
            max_response_bytes=self.max_response_bytes,
            verify=self.verify,
            proxy=proxy_for(base_url),
        )

    def _client_for_loop(self, api_key: str | None = None) -> ChatTransport:
        """The shared transport, rebuilt when called from a new event loop (its pool is
        bound to one) or with another per-request key (an expiring token was renewed)."""
        loop = asyncio.get_running_loop()
        if self._client is not None and self._client_loop is loop and api_key == self._client_key:
            return self._client
        if self._client is not None and self._client_loop is loop:
            # a renewed key on the same loop: the old pool closes in the background
            closing = loop.create_task(self._client.aclose())
            self._closing.add(closing)
            closing.add_done_callback(self._closing.discard)
        elif self._client is not None:
            abandon = getattr(self._client, "abandon", None)
            if abandon is not None:
                abandon()  # its loop is gone: nothing left to await there
        self._client = self._build_transport(api_key)
        self._client_loop = loop
        self._client_key = api_key
        return self._client

    def _build_transport(self, api_key: str | None = None) -> ChatTransport:
        """A transport of the configured kind for this model's endpoint."""
        transport = self.transport
        endpoint = self.endpoint(api_key)
        if not isinstance(transport, str):
            return transport(endpoint)
        if transport == "sdk":
            from agentcli.models.sdk_transport import SdkTransport

            return SdkTransport(endpoint)
        from agentcli.models.aiohttp_transport import AiohttpTransport

        return AiohttpTransport(endpoint)

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
        request.update(openai_params(settings))
        try:
            client = self._client_for_loop(settings.api_key)
            assembler = StreamAssembler(
                self.provider,
                self.name,
                cost_model=self.cost_model,
                price=self.price,
                limit=self.max_response_bytes,
            )
            async for chunk in client.chunks(request, timeout):
                for part in assembler.feed(chunk):
                    yield part
            yield ResponseDone(assembler.finish())
        except Exception as exc:
            raise map_error(
                exc,
                provider=self.provider,
                model=self.name,
                secrets=[self.api_key, settings.api_key, os.environ.get("OPENAI_API_KEY")],
                timeout=timeout,
                endpoint=self._endpoint(),
                via_proxy=self.via_proxy,
            ) from exc

"""``transport: sdk``: chat completions through the official ``openai`` SDK, for servers
that need what the SDK adds. It costs ~0.4 s to import and ~1.4 ms of CPU a call.

The SDK's own retries are off (``retry_stream`` does them) and redirects are not followed
(a redirect says the api_base is wrong). Its httpx client gets the pool size and the TLS
context every transport uses; it reads the proxy settings itself (a SOCKS proxy needs
``socksio``). An answer that is not an event stream is read as the aiohttp transport
reads it: its events through the same reader, so both keep the same limits and say the
same about an answer that is no stream.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator
from typing import Any

from agentcli.models.tls import tls_context
from agentcli.models.transport import KEEPALIVE_EXPIRY, Endpoint, response_chunks

__all__ = ["SdkTransport"]


class SdkTransport:
    """``ChatTransport`` over one ``openai.AsyncOpenAI`` client."""

    def __init__(self, endpoint: Endpoint) -> None:
        import httpx2
        from openai import AsyncOpenAI, DefaultAsyncHttpxClient

        self.endpoint = endpoint
        self.proxy = endpoint.proxy
        endpoint.headers()  # refuses a key with a line break, as the aiohttp transport does
        size = endpoint.pool_size or None  # None: no limit
        limits = httpx2.Limits(
            max_connections=size, max_keepalive_connections=size, keepalive_expiry=KEEPALIVE_EXPIRY
        )
        # Our own httpx client instead of the SDK's wrapper, whose __del__ schedules a close
        # on whatever loop runs then: noise when this client's loop is already gone.
        https = endpoint.base_url.startswith("https:")
        http_client = DefaultAsyncHttpxClient(
            limits=limits,
            follow_redirects=False,
            verify=tls_context(verify=endpoint.verify) if https else True,
        )
        self.client = AsyncOpenAI(
            api_key=endpoint.api_key,
            base_url=endpoint.base_url,
            default_query=endpoint.query or None,
            max_retries=0,
            timeout=endpoint.timeout,
            http_client=http_client,
        )
        create = self.client.chat.completions.create
        self._known_params = frozenset(inspect.signature(create).parameters)

    async def chunks(self, request: dict[str, Any], timeout: float) -> AsyncIterator[Any]:
        """The streamed chunks of one request, sent by the SDK."""
        # Options the SDK does not name go in the body as they are (provider extensions).
        request = dict(request)
        unknown = {k: request.pop(k) for k in list(request) if k not in self._known_params}
        if unknown:
            request["extra_body"] = {**unknown, **request.get("extra_body", {})}
        create = self.client.chat.completions.with_streaming_response.create
        endpoint = self.endpoint
        async with create(**request, timeout=timeout) as response:
            # The events are read as the aiohttp transport reads them (not by the SDK's
            # parser): the same limits and messages, and no object built per chunk.
            body = response_chunks(
                response.http_response, endpoint.label, endpoint.max_response_bytes
            )
            async for chunk in body:
                yield chunk

    async def aclose(self) -> None:
        """Close the SDK's connections."""
        await self.client.close()

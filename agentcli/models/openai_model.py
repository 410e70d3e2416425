"""A model served by the official ``openai`` SDK: OpenAI and every OpenAI-compatible server.

One ``AsyncOpenAI`` client per model instance (and event loop) is reused across calls so
connections are kept alive; the SDK's own retries are off because ``retry_stream`` does
them. The SDK is imported on first use, so building the model costs nothing.
"""

from __future__ import annotations

import asyncio
import inspect
import os
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from agentcli.errors import AuthenticationError
from agentcli.models.base import ModelSettings, ResponseDone, StreamPart
from agentcli.models.errors_map import map_error
from agentcli.models.limiter import AdaptiveLimiter
from agentcli.models.retry import OnRetry, RetryPolicy, retry_stream
from agentcli.models.streaming import StreamAssembler, chat_request

__all__ = ["DEFAULT_TIMEOUT", "OpenAICompatModel"]

DEFAULT_TIMEOUT = 120.0
# A key is required by the SDK even when a local server ignores it.
_DUMMY_KEY = "none"


class OpenAICompatModel:
    """Streams chat completions through ``openai.AsyncOpenAI``."""

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
    ) -> None:
        self.name = model.removeprefix("openai/")
        self.provider = provider
        self.api_base = api_base
        self.api_key = api_key if api_key or not api_base else _DUMMY_KEY
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self.extra = dict(extra or {})
        self.on_retry = on_retry
        self.limiter: AdaptiveLimiter | None = None  # set per run by the assistant registry
        self._client: Any = None
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self._known_params: frozenset[str] = frozenset()

    def __repr__(self) -> str:
        return f"OpenAICompatModel({self.provider}/{self.name}, api_base={self.api_base!r})"

    def stream(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        settings: ModelSettings,
    ) -> AsyncIterator[StreamPart]:
        """Yield deltas, then one ``ResponseDone``; failures raise ``ModelError``s."""
        return retry_stream(
            lambda: self._attempt(messages, tools, settings),
            self.retry,
            on_retry=self.on_retry,
            limiter=self.limiter,
        )

    async def aclose(self) -> None:
        """Close the pooled HTTP connections."""
        client, self._client, self._client_loop = self._client, None, None
        if client is not None:
            await client.close()

    def _client_for_loop(self) -> Any:
        """The shared client, rebuilt when called from a new event loop (its pool is bound to one)."""
        loop = asyncio.get_running_loop()
        if self._client is not None and self._client_loop is loop:
            return self._client
        key = self.api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            raise AuthenticationError(
                f"{self.provider} model {self.name!r}: no API key",
                hint="set OPENAI_API_KEY or give the connector an api_key",
            )
        from openai import AsyncOpenAI, DefaultAsyncHttpxClient

        # Our own pool instead of the SDK's wrapper, whose __del__ schedules a close on
        # whatever loop runs then: noise when this client's loop is already gone.
        self._client = AsyncOpenAI(
            api_key=key,
            base_url=self.api_base,
            max_retries=0,
            timeout=self.timeout,
            http_client=DefaultAsyncHttpxClient(),
        )
        self._client_loop = loop
        create = self._client.chat.completions.create
        self._known_params = frozenset(inspect.signature(create).parameters)
        return self._client

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
            # Options the SDK does not name go in the body as they are (provider extensions).
            unknown = {k: request.pop(k) for k in list(request) if k not in self._known_params}
            if unknown:
                request["extra_body"] = {**unknown, **request.get("extra_body", {})}
            assembler = StreamAssembler(
                self.provider, self.name, cost_model=f"{self.provider}/{self.name}"
            )
            stream = await client.chat.completions.create(**request, timeout=timeout)
            async with stream:
                async for chunk in stream:
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
            ) from exc

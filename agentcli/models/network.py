"""What the network models share: call options, the retry policy, the adaptive concurrency
limit, and ``stream`` as retries around one streamed attempt."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from agentcli.models.base import ModelSettings, StreamPart
from agentcli.models.limiter import Limiter
from agentcli.models.pricing import Price, litellm_price
from agentcli.models.retry import OnRetry, RetryPolicy, retry_stream

__all__ = ["DEFAULT_MAX_RESPONSE_BYTES", "NetworkModel"]

DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024
"""The most bytes of text one response may stream (``max_response_bytes`` of a connector)."""


class NetworkModel:
    """Base of the models that call a provider over the network."""

    provider: str
    name: str
    price: Price | None = None  # the connector's own price (connectors.yml)

    @property
    def cost_model(self) -> str:
        """The model's key in litellm's cost map (``provider/name``)."""
        return f"{self.provider}/{self.name}"

    def known_price(self) -> Price | None:
        """The connector's price, else litellm's for the model; None when neither is known."""
        return self.price or litellm_price(self.cost_model)

    def _configure(
        self,
        *,
        timeout: float,
        retry: RetryPolicy | None,
        extra: dict[str, Any] | None,
        on_retry: OnRetry | None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        price: Price | None = None,
    ) -> None:
        self.timeout = timeout
        self.price = price
        self.max_response_bytes = max_response_bytes
        self.retry = retry or RetryPolicy()
        self.extra = dict(extra or {})
        self.on_retry = on_retry
        self.limiter: Limiter | None = None  # set per run by the assistant registry

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

    def _attempt(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        settings: ModelSettings,
    ) -> AsyncGenerator[StreamPart, None]:
        """One request, streamed; every failure leaves as a ``ModelError``."""
        raise NotImplementedError

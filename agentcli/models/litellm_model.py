"""A model served by litellm: every provider the openai SDK does not cover.

litellm is imported on the first call (it costs 2-3 s), quietly: the bundled cost map
instead of a download, no banners, no debug logging, unsupported params dropped. Its own
retries are off because ``retry_stream`` does them.
"""

from __future__ import annotations

import functools
import logging
import os
import warnings
from collections.abc import AsyncGenerator
from typing import Any

from agentcli.models.base import ModelSettings, ResponseDone, StreamPart
from agentcli.models.errors_map import map_error
from agentcli.models.network import DEFAULT_MAX_RESPONSE_BYTES, NetworkModel
from agentcli.models.pricing import Price
from agentcli.models.reasoning import litellm_params
from agentcli.models.retry import OnRetry, RetryPolicy
from agentcli.models.streaming import StreamAssembler, chat_request

__all__ = ["DEFAULT_TIMEOUT", "LiteLLMModel", "import_litellm"]

DEFAULT_TIMEOUT = 120.0
_LITELLM_WARNING = r"Item .* on TypedDict class .* `ReadOnly` qualifier"


@functools.cache
def import_litellm() -> Any:
    """Import litellm once, configured to stay offline and quiet."""
    # Without this litellm downloads its cost map at import time.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    # litellm re-exports set_verbose from litellm._logging (no __all__) and reads it back as
    # litellm.set_verbose, so it is the package attribute that must be set, not the source's.
    litellm.set_verbose = False  # type: ignore[attr-defined]
    litellm.drop_params = True
    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
        logging.getLogger(name).setLevel(logging.WARNING)
    # litellm's own TypedDicts make pydantic warn on first use; nothing a user can act on.
    warnings.filterwarnings("ignore", message=_LITELLM_WARNING, category=UserWarning)
    return litellm


class LiteLLMModel(NetworkModel):
    """Streams chat completions through ``litellm.acompletion``."""

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        provider: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        retry: RetryPolicy | None = None,
        extra: dict[str, Any] | None = None,
        on_retry: OnRetry | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        price: Price | None = None,
    ) -> None:
        self.model = model
        prefix, slash, rest = model.partition("/")
        self.provider = provider or (prefix if slash else "litellm")
        self.name = rest if slash else model
        self.api_base = api_base
        # litellm's OpenAI provider needs some key even when a local server ignores it.
        needs_dummy = api_base and not api_key and self.provider == "openai"
        self.api_key = "none" if needs_dummy else api_key
        self._configure(
            timeout=timeout,
            retry=retry,
            extra=extra,
            on_retry=on_retry,
            max_response_bytes=max_response_bytes,
            price=price,
        )

    @property
    def cost_model(self) -> str:
        """litellm's own model string: its key in the cost map."""
        return self.model

    def __repr__(self) -> str:
        return f"LiteLLMModel({self.model}, api_base={self.api_base!r})"

    async def _attempt(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        settings: ModelSettings,
    ) -> AsyncGenerator[StreamPart, None]:
        """One request, streamed; every failure leaves as a ``ModelError``."""
        request, timeout = chat_request(
            self.model, messages, tools, settings, self.extra, self.timeout
        )
        request.update(litellm_params(self.provider, settings))
        request.update(timeout=timeout, num_retries=0, max_retries=0)
        if self.api_base:
            request["api_base"] = self.api_base
        key = settings.api_key or self.api_key  # a key fetched for this request wins
        if key:
            request["api_key"] = key
        try:
            litellm = import_litellm()
            assembler = StreamAssembler(
                self.provider,
                self.name,
                cost_model=self.cost_model,
                price=self.price,
                limit=self.max_response_bytes,
            )
            stream = await litellm.acompletion(**request)
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
                secrets=[self.api_key, settings.api_key],
                timeout=timeout,
            ) from exc

"""A connector resolved for a replay without what it needs to reach its provider.

Under ``--replay`` (and ``--replay live-tools``) the model answers from the cassettes and is
never called, so a connector whose key (or address, or call option) names an unset
``$ENV.NAME`` is still built, without that value; nothing stands in for it. Should a call
reach the model anyway (a request outside any cassette), it is refused with what is
missing, never sent with a made-up key.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from agentcli.errors import ReplayMiss
from agentcli.models.base import Model, ModelSettings, StreamPart

__all__ = ["ReplayOnlyModel"]


class ReplayOnlyModel:
    """``inner`` (its provider, name and price, for the reports) that refuses to be
    called: ``missing`` says what was not set, as the error shows it."""

    def __init__(self, inner: Model, missing: str) -> None:
        self.inner = inner
        self.missing = missing
        self.provider = inner.provider
        self.name = inner.name

    def __getattr__(self, name: str) -> Any:  # price, known_price, aclose: the inner model's
        return getattr(self.inner, name)

    async def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], settings: ModelSettings
    ) -> AsyncIterator[StreamPart]:
        """Never a call: a ``ReplayMiss`` naming what the live call would need."""
        for part in _NOTHING:  # an async generator, as Model.stream is, that yields nothing
            yield part
        raise ReplayMiss(
            f"{self.missing}: a replay answers this connector from its cassettes only, and "
            "this call has no recording to answer it",
            hint="record the case with --record (the variable set), or set the variable",
        )


_NOTHING: tuple[StreamPart, ...] = ()

"""``ctx.search``: the request's searches as hooks and tool functions use them.

Each method works from both worlds, as every ``ctx`` service does: awaited in an async
hook, or called plainly in a sync one. ``web``/``kb``/``db(query, options)`` return a
``SearchResult``; ``all``/``any``/``race`` take requests ``{type, query, ...options}``
(every result in order / the first without an error / the first to finish). Yao's names
(``Web``, ``KB``, ``DB``, ``All``, ``Any``, ``Race``, ``Fetch``) are aliases.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from agentcli.assistant.search.result import SearchResult
from agentcli.assistant.search.service import Searcher
from agentcli.pascal import PascalAliases

if TYPE_CHECKING:
    from agentcli.assistant.context import Context

__all__ = ["SearchHandle"]

Bridge = Callable[[Coroutine[Any, Any, Any]], Any]


class SearchHandle(PascalAliases):
    """One request's ``ctx.search``."""

    def __init__(self, ctx: Context) -> None:
        self._searcher = Searcher(ctx)
        self._bridge: Bridge = ctx.bridge

    def __repr__(self) -> str:
        return f"SearchHandle(assistant={self._searcher.package.id!r})"

    def web(self, query: str, options: Mapping[str, Any] | None = None) -> Any:
        """Web search (``limit``, ``sites``, ``time_range``: day, week, month, year)."""
        return self._bridge(self._searcher.search("web", query, options))

    def kb(self, query: str, options: Mapping[str, Any] | None = None) -> Any:
        """Knowledge-base search (``collections``, ``threshold``, ``limit``)."""
        return self._bridge(self._searcher.search("kb", query, options))

    def db(self, query: str, options: Mapping[str, Any] | None = None) -> Any:
        """Data-model search (``models``, ``wheres``, ``limit``)."""
        return self._bridge(self._searcher.search("db", query, options))

    def fetch(self, url: str) -> Any:
        """A page's text (``uses.fetch``: over HTTP, or an MCP server's ``fetch`` tool)."""
        return self._bridge(self._searcher.fetch(url))

    def _one(self, request: Mapping[str, Any]) -> Coroutine[Any, Any, SearchResult]:
        options = {k: v for k, v in request.items() if k not in ("type", "query")}
        kind = str(request.get("type") or "")
        return self._searcher.search(kind, str(request.get("query") or ""), options)

    def all(self, requests: list[Mapping[str, Any]]) -> Any:
        """Every search concurrently; every result, in request order."""
        return self._bridge(_gather(self._one(r) for r in requests))

    def any(self, requests: list[Mapping[str, Any]]) -> Any:
        """The first result without an error (else the last one)."""
        return self._bridge(_first((self._one(r) for r in requests), ok_only=True))

    def race(self, requests: list[Mapping[str, Any]]) -> Any:
        """The first result to arrive, error or not."""
        return self._bridge(_first((self._one(r) for r in requests), ok_only=False))

    # Yao spells these as acronyms, which the snake_case lookup would not find.
    KB = kb
    DB = db


async def _gather(searches: Iterable[Coroutine[Any, Any, SearchResult]]) -> list[SearchResult]:
    return list(await asyncio.gather(*searches))


async def _first(
    searches: Iterable[Coroutine[Any, Any, SearchResult]], *, ok_only: bool
) -> SearchResult | None:
    tasks = [asyncio.ensure_future(search) for search in searches]
    last: SearchResult | None = None
    try:
        for next_done in asyncio.as_completed(tasks):
            result = await next_done
            last = result
            if not ok_only or result.error is None:
                return result
        return last
    finally:
        for task in tasks:
            task.cancel()

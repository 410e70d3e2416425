"""The searches of one request, as coroutines: ``web``, ``kb``, ``db`` and ``fetch``, each
traced (a ``search`` node with the query and what was found) and numbered for citing
(``citation_id`` 1, 2, ... across the request, so two searches never share a number).

A search that fails is a ``SearchResult`` with ``error`` (the message and its hint), as in
Yao, so a hook decides; ``raise_config`` makes configuration mistakes (a missing key, an
unknown collection) raise instead — the automatic search wants those to stop the run.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from agentcli.assistant.search.result import SearchItem, SearchResult, SearchSource, SearchType
from agentcli.assistant.search.spec import SearchConfig
from agentcli.errors import AgentCliError, ConfigError, SearchError

if TYPE_CHECKING:
    from agentcli.assistant.context import Context

__all__ = ["KINDS", "Searcher"]

KINDS: tuple[SearchType, ...] = ("web", "kb", "db")
_FETCH_SECONDS = 15.0
_FETCH_BYTES = 2 * 1024 * 1024


def _limit(options: Mapping[str, Any], default: int) -> int:
    value = options.get("limit", options.get("max_results"))
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SearchError(f"limit must be a positive integer, got {value!r}")
    return value


class Searcher:
    """The searches of the request ``ctx``."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.package = ctx.package
        self.config: SearchConfig = ctx.package.search_config or SearchConfig()

    async def search(
        self,
        kind: str,
        query: str,
        options: Mapping[str, Any] | None = None,
        *,
        source: SearchSource = "hook",
        raise_config: bool = False,
    ) -> SearchResult:
        """One search of ``kind`` (web, kb or db)."""
        options = dict(options or {})
        started = time.monotonic()
        shown: SearchType = kind if kind in KINDS else "web"
        result = SearchResult(type=shown, query=str(query), source=source)
        node = self.ctx.trace.add(
            {"type": kind, "query": query, "options": _traceable(options)},
            {"label": f"Search {kind}", "type": "search"},
        )
        try:
            if kind not in KINDS:
                raise SearchError(f"unknown search type {kind!r} (use web, kb or db)")
            if not isinstance(query, str) or not query.strip():
                raise SearchError("the search query is empty")
            items, total = await getattr(self, f"_{kind}")(query, options)
        except AgentCliError as error:
            result.duration_ms = int((time.monotonic() - started) * 1000)
            hint = f" (hint: {error.hint})" if error.hint else ""
            result.error = f"{error.message}{hint}"
            node.fail(result.error)
            if raise_config and isinstance(error, ConfigError):
                raise
            return result
        for item in items:
            item.citation_id = str(next(self.ctx.citation_ids))
        result.items, result.total = items, total
        result.duration_ms = int((time.monotonic() - started) * 1000)
        node.complete(
            {
                "count": len(items),
                "total": total,
                "items": [
                    {"citation_id": i.citation_id, "title": i.title, "url": i.url, "score": i.score}
                    for i in items
                ],
            }
        )
        return result

    # -- the three kinds ---------------------------------------------------------------------

    async def _web(self, query: str, options: dict[str, Any]) -> tuple[list[SearchItem], int]:
        from agentcli.assistant.search.web import WebQuery, search_web

        spec = self.config.web
        if spec is None:
            raise ConfigError(
                f"assistant {self.package.id!r} has no web search",
                hint='set "search": {"web": {"provider": "tavily"}} (or brave, searxng) '
                "in package.yao",
            )
        sites = options.get("sites") or ()
        web_query = WebQuery(
            query=query,
            limit=_limit(options, spec.max_results),
            sites=tuple(str(site) for site in sites),
            time_range=options.get("time_range") or options.get("timeRange"),
        )
        env = self.ctx.registry.env

        async def live() -> list[dict[str, Any]]:
            return [item.to_dict() for item in await search_web(spec, web_query, env)]

        # Through the case's cassette, as a tool call of server "search": --record keeps
        # the hits, --replay answers from them (no key, no network).
        from agentcli.assistant import cassette

        request = {
            "provider": spec.provider,
            "query": web_query.query,
            "limit": web_query.limit,
            "sites": list(web_query.sites),
            "time_range": web_query.time_range,
        }
        found = await cassette.call_tool("search", "web", request, live, raising=True)
        items = [
            SearchItem(
                title=str(hit.get("title") or ""),
                url=str(hit.get("url") or ""),
                content=str(hit.get("content") or ""),
                score=float(hit.get("score") or 0.0),
            )
            for hit in found
            if isinstance(hit, dict)
        ]
        return items, len(items)

    async def _kb(self, query: str, options: dict[str, Any]) -> tuple[list[SearchItem], int]:
        from agentcli.assistant.search.kb import fuse, open_index

        spec = self.config.kb
        collections = tuple(options.get("collections") or spec.collections)
        if not collections:
            raise ConfigError(
                f"assistant {self.package.id!r} has no knowledge base",
                hint='set "kb": {"collections": ["docs"]} in package.yao, with the documents '
                "in kb/docs/",
            )
        folders = {}
        for name in collections:
            folder = self.package.path / "kb" / str(name)
            if not folder.is_dir():
                raise ConfigError(
                    f"kb collection {name!r}: no folder {folder}",
                    hint=f"put the collection's .md, .txt and .json files in kb/{name}/",
                )
            folders[str(name)] = folder
        threshold = float(options.get("threshold", spec.threshold) or 0.0)
        limit = _limit(options, spec.max_results)
        wanted = max(limit * 3, 30)
        embedder = self._embedder() if spec.embedding else None
        path = self.ctx.registry.state.path / "kb" / f"{self.package.id}.sqlite3"
        index = await asyncio.to_thread(open_index, path, vectors=embedder is not None)
        await asyncio.to_thread(index.refresh, folders)
        names = list(folders)
        keyword = await asyncio.to_thread(index.keyword, query, names, wanted)
        keyword = [hit for hit in keyword if hit.score >= threshold]
        if embedder is not None:
            pending = await asyncio.to_thread(index.prepare_vectors, embedder.key)
            if pending:
                vectors = await embedder.embed([text for _id, text in pending])
                pairs = [(chunk_id, v) for (chunk_id, _t), v in zip(pending, vectors, strict=True)]
                await asyncio.to_thread(index.store_vectors, pairs)
            [vector] = await embedder.embed([query])
            near = await asyncio.to_thread(index.nearest, vector, names, wanted)
            near = [hit for hit in near if hit.score >= threshold]
            hits = fuse([keyword, near], wanted)
        else:
            hits = keyword
        items = [
            SearchItem(
                title=hit.title,
                url=f"kb://{hit.collection}/{hit.path}",
                content=hit.content,
                score=hit.score,
                document_id=f"{hit.collection}/{hit.path}",
                collection=hit.collection,
            )
            for hit in hits[:limit]
        ]
        return items, len(hits)

    def _embedder(self) -> Any:
        from agentcli.assistant.search.embeddings import resolve_embedder

        registry = self.ctx.registry
        spec = self.config.kb.embedding
        assert spec is not None
        return resolve_embedder(
            spec,
            package_dir=self.package.path,
            cwd=registry.cwd,
            assistants_root=registry.root or self.package.root,
            env=registry.env,
        )

    async def _db(self, query: str, options: dict[str, Any]) -> tuple[list[SearchItem], int]:
        from agentcli.assistant.search.db import search_db

        models = [str(m) for m in options.get("models") or self.config.db_models]
        if not models:
            raise ConfigError(
                f"assistant {self.package.id!r} names no data models to search",
                hint='set "db": {"models": ["ticket"]} in package.yao (models/ticket.mod.yao)',
            )
        store = self.ctx.registry.data_store
        if store is None:
            raise ConfigError(
                f"assistant {self.package.id!r} has no data models (models/*.mod.yao)",
                hint="db search reads the package's data models",
            )
        limit = _limit(options, self.config.db_max_results)
        return await asyncio.to_thread(
            search_db, store, self.package.id, models, query, options.get("wheres"), limit
        )

    # -- fetch ------------------------------------------------------------------------------

    async def fetch(self, url: str) -> dict[str, Any]:
        """A page's text: through the MCP server ``uses.fetch`` names (its ``fetch``
        tool), else over HTTP; ``{url, content}`` or ``{url, error}``."""
        node = self.ctx.trace.add({"url": url}, {"label": "Fetch", "type": "fetch"})
        how = self.config.uses_fetch
        try:
            if how == "disabled":
                raise SearchError(f"assistant {self.package.id!r} has uses.fetch disabled")
            server = self.config.fetch_server
            if server is not None:
                toolbox = self.ctx.conversation.assistant.toolbox
                content = await toolbox.call_tool(server, "fetch", {"url": url}, ctx=self.ctx)
            else:
                content = await _http_text(url)
        except AgentCliError as error:
            node.fail(error.message)
            return {"url": url, "error": error.message}
        node.complete({"via": how, "characters": len(str(content))})
        return {"url": url, "content": content}


async def _http_text(url: str) -> str:
    import aiohttp

    if not url.startswith(("http://", "https://")):
        raise SearchError(f"fetch: not an http(s) URL: {url!r}")
    try:
        async with (
            aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=_FETCH_SECONDS), trust_env=True
            ) as session,
            session.get(url) as response,
        ):
            data = await response.content.read(_FETCH_BYTES)
            if response.status >= 400:
                raise SearchError(f"fetch {url}: HTTP {response.status}")
            return data.decode(response.charset or "utf-8", "replace")
    except TimeoutError:
        raise SearchError(f"fetch {url}: no answer within {_FETCH_SECONDS:g}s") from None
    except aiohttp.ClientError as error:
        raise SearchError(f"fetch {url}: {error}") from None


def _traceable(options: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in options.items() if not callable(v)}

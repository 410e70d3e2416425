"""The automatic search before the model call (Yao's auto search): the package's sources
(``kb.collections``, ``db.models``, ``search.web``) are searched for the user's last
message, concurrently, and the hits go to the model as one system message after the
prompts, each under its citation marker (``search.citation.format``, ``[1]`` by default),
with the instruction to cite them unless ``auto_inject_prompt`` is false.

It runs unless turned off: ``uses.search: "disabled"`` (package.yao, or a Create hook's
``uses`` for its request), a Create hook returning ``search: false``, or the request's
``skip.search`` option (a ``ctx.agent.call`` may pass it) — which a hook's
``force_uses: true`` overrides. A hook's ``search: {"kb": {...}}`` gives options per kind.
A source that fails is a warning in the trace and the model is called without it; a
configuration mistake (a missing key) stops the request.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from agentcli.assistant.search.result import SearchResult
from agentcli.assistant.search.service import Searcher

if TYPE_CHECKING:
    from agentcli.assistant.context import Context
    from agentcli.assistant.hooks import CreateResult

__all__ = ["DEFAULT_PROMPT", "MAX_ITEM_CHARS", "auto_search", "citation_message"]

MAX_ITEM_CHARS = 2000
DEFAULT_PROMPT = (
    "Answer from these results when they help. Cite each result you use with its marker, "
    "e.g. {example}, right after what it supports; do not cite results you did not use."
)


def wanted(ctx: Context, create: CreateResult | None, skip: Mapping[str, Any]) -> bool:
    """Whether the automatic search runs for this request."""
    config = ctx.package.search_config
    if config is None or not config.sources:
        return False
    uses = (create.uses if create is not None else None) or {}
    if str(uses.get("search") or config.uses_search) == "disabled":
        return False
    if create is not None and create.search is False:
        return False
    forced = create is not None and create.force_uses is True
    return forced or not skip.get("search")


async def auto_search(
    ctx: Context,
    messages: list[dict[str, Any]],
    create: CreateResult | None,
    skip: Mapping[str, Any],
) -> dict[str, Any] | None:
    """The system message of the search results for the last user message, or None when
    the search does not run or finds nothing."""
    if not wanted(ctx, create, skip):
        return None
    query = _last_user_text(messages)
    if not query:
        return None
    config = ctx.package.search_config
    assert config is not None
    per_kind = create.search if create is not None and isinstance(create.search, dict) else {}
    searcher = Searcher(ctx)
    results: list[SearchResult] = await asyncio.gather(
        *(
            searcher.search(
                kind, query, dict(per_kind.get(kind) or {}), source="auto", raise_config=True
            )
            for kind in config.sources
        )
    )
    for result in results:
        if result.error is not None:
            ctx.trace.warn(
                f"search {result.type} failed, the model is called without it: {result.error}"
            )
    found = [result for result in results if result.items]
    if not found:
        return None
    return citation_message(ctx, query, found)


def citation_message(ctx: Context, query: str, results: list[SearchResult]) -> dict[str, Any]:
    """The system message listing ``results``' items under their markers."""
    config = ctx.package.search_config
    assert config is not None
    citation = config.citation
    lines = [f"Search results for {query!r}:"]
    first = None
    for result in results:
        for item in result.items:
            marker = citation.marker(int(item.citation_id))
            first = first or marker
            content = item.content
            if len(content) > MAX_ITEM_CHARS:
                content = content[:MAX_ITEM_CHARS] + "…"
            lines.append(f"\n{marker} {item.title} ({item.url})\n{content}")
    if citation.auto_inject_prompt:
        prompt = citation.custom_prompt or DEFAULT_PROMPT
        lines.append("\n" + prompt.replace("{example}", first or citation.marker(1)))
    return {"role": "system", "content": "\n".join(lines)}


def _last_user_text(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content.strip()
        if isinstance(content, list):
            texts = [
                str(part.get("text") or "")
                for part in content
                if isinstance(part, dict) and part.get("type") == "text"
            ]
            return " ".join(texts).strip()
    return ""

"""``ctx.search`` from hooks: sync and awaited, Yao's PascalCase names, ``all``/``any``/
``race``, citation numbers unique across one request, and the SearchResult shape."""

from __future__ import annotations

import json
from pathlib import Path

from tests.assistant.search.conftest import FAQ, package

ASYNC_NEXT = """
async def Next(ctx, payload):
    first = await ctx.search.kb("password")
    again = await ctx.search.KB("billing card", {"limit": 1})
    anyone = await ctx.search.Any([{"type": "web", "query": "x"}, {"type": "kb", "query": "shipping"}])
    raced = await ctx.search.race([{"type": "db", "query": "x"}])
    bad = await ctx.search.all([{"type": "video", "query": "x"}, {"type": "kb", "query": "  "}])
    return {"data": {
        "first": first.to_dict(), "again": again["items"], "any": anyone.to_dict(),
        "race": raced.get("error"), "bad": [b.error for b in bad],
    }}
"""


async def test_async_hooks_await_every_call_and_citations_never_repeat(
    assistants: Path, make_registry
) -> None:
    package(
        assistants,
        "h",
        json.dumps(
            {"name": "H", "connector": "echo", "kb": ["faq"], "uses": {"search": "disabled"}}
        ),
        {**FAQ, "src/index.py": ASYNC_NEXT},
    )
    data = (await make_registry().get("h").respond("go")).next
    first = data["first"]
    assert sorted(first) == ["duration_ms", "items", "query", "source", "total", "type"]
    assert first["query"] == "password" and first["source"] == "hook"
    assert sorted(first["items"][0]) == [
        "citation_id", "collection", "content", "document_id", "score", "title", "url",
    ]  # fmt: skip
    numbers = [i["citation_id"] for i in first["items"]] + [data["again"][0]["citation_id"]]
    assert numbers == [str(n) for n in range(1, len(numbers) + 1)]
    assert data["again"][0]["url"] == "kb://faq/billing.md"
    assert data["any"]["type"] == "kb" and data["any"]["items"][0]["url"] == "kb://faq/shipping.txt"
    assert data["race"].startswith("assistant 'h' names no data models to search")
    assert data["bad"] == [
        "unknown search type 'video' (use web, kb or db)",
        "the search query is empty",
    ]

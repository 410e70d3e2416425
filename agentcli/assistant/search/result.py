"""Yao's ``SearchResult``: what every search returns (``ctx.search.web/kb/db``, the
automatic search before a model call), typed here and in Yao's JSON shape by ``to_dict``.

A failed search is a value with ``error`` set and no items, never an exception: Yao's
"search errors don't block the agent" (a hook decides what to do with it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["SearchItem", "SearchResult", "SearchSource", "SearchType"]

SearchType = Literal["web", "kb", "db"]
SearchSource = Literal["hook", "auto", "user"]


@dataclass(slots=True)
class SearchItem:
    """One hit. ``score`` is a relevance in 0..1 (each search says how it is computed);
    ``citation_id`` is filled when the hit is numbered for citing."""

    title: str
    url: str
    content: str
    score: float
    citation_id: str = ""
    document_id: str | None = None  # kb: <collection>/<path>
    collection: str | None = None  # kb
    model: str | None = None  # db: the model's Process name
    record_id: Any = None  # db: the row's primary key
    data: dict[str, Any] | None = None  # db: the row

    def to_dict(self) -> dict[str, Any]:
        """Yao's ``ResultItem`` fields (the kind-specific ones only when set)."""
        found: dict[str, Any] = {
            "citation_id": self.citation_id,
            "title": self.title,
            "url": self.url,
            "content": self.content,
            "score": round(self.score, 6),
        }
        for name in ("document_id", "collection", "model", "record_id", "data"):
            value = getattr(self, name)
            if value is not None:
                found[name] = value
        return found


@dataclass(slots=True)
class SearchResult:
    """One search's answer: ``items`` best first; ``error`` set when it failed."""

    type: SearchType
    query: str
    source: SearchSource = "hook"
    items: list[SearchItem] = field(default_factory=list)
    total: int = 0  # matches before max_results cut them
    duration_ms: int = 0
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Yao's shape: ``type, query, source, items, total, duration_ms[, error]``."""
        found: dict[str, Any] = {
            "type": self.type,
            "query": self.query,
            "source": self.source,
            "items": [item.to_dict() for item in self.items],
            "total": self.total,
            "duration_ms": self.duration_ms,
        }
        if self.error is not None:
            found["error"] = self.error
        return found

    def __getitem__(self, key: str) -> Any:
        # Hooks ported from Yao read ``result["items"]``; the dataclass stays the value.
        return self.to_dict()[key]

    def get(self, key: str, default: Any = None) -> Any:
        """``result.get("error")``, as on the dict Yao's hooks receive."""
        return self.to_dict().get(key, default)

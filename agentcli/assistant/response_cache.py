"""The response cache (``agent eval --cache``): a model call asked again with the same
request — a judge re-asked about the same output, a generator given the same prompt — is
answered from disk instead of the provider.

Entries live in ``$AGENTCLI_HOME/cache`` (default ``~/.local/share/agentcli/cache``), in a
``diskcache`` store (SQLite underneath: safe across processes and threads, its size kept
under a limit by evicting the least recently used). The key is a hash of the request as
cassettes match it (connector, messages, tools, settings; redacted), the value the
streamed answer as JSON. Only complete answers are kept; a failed call is never cached.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.assistant.cassette import (
    ModelWrapper,
    decode_parts,
    encode_parts,
    model_request,
    recorded,
)
from agentcli.errors import StorageError
from agentcli.models.base import Model, ModelSettings, ResponseDone, StreamPart

if TYPE_CHECKING:
    import diskcache

__all__ = ["CachingModel", "ResponseCache", "default_cache_dir"]

SIZE_LIMIT = 1 << 30  # bytes on disk; the least recently used entries go first


def default_cache_dir() -> Path:
    """``$AGENTCLI_HOME/cache`` (default ``~/.local/share/agentcli/cache``): the user's, kept
    across runs (not in a run's fresh state folder)."""
    from agentcli.home import data_home

    return data_home() / "cache"


class ResponseCache:
    """Model answers by request, on disk."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder or default_cache_dir()
        self._store: diskcache.Cache | None = None

    @property
    def store(self) -> diskcache.Cache:
        """The diskcache store, opened on first use (a folder that cannot hold it is a
        ``StorageError``)."""
        if self._store is None:
            import diskcache

            try:
                self._store = diskcache.Cache(str(self.folder), size_limit=SIZE_LIMIT)
            except OSError as error:
                raise StorageError(
                    f"cannot open the response cache in {self.folder}: {error.strerror}",
                    hint="set AGENTCLI_HOME to a writable folder",
                ) from error
            self._store.stats(enable=True)
        return self._store

    @staticmethod
    def key(request: Any) -> str:
        """The entry key of a request (a hash of its JSON)."""
        text = json.dumps(request, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()

    def get(self, request: Any) -> list[StreamPart] | None:
        """The cached answer of ``request``, if any."""
        text = self.store.get(self.key(request))
        return decode_parts(json.loads(text)) if isinstance(text, str) else None

    def put(self, request: Any, parts: list[StreamPart]) -> None:
        """Keep a complete answer."""
        # redacted as a cassette is: the cache is on disk too
        value = json.dumps(recorded(encode_parts(parts)), ensure_ascii=False)
        self.store.set(self.key(request), value)

    def stats(self) -> dict[str, int]:
        """Entries, bytes on disk, and the hits and misses counted since the last clear."""
        hits, misses = self.store.stats()
        return {
            "entries": len(self.store),
            "bytes": int(self.store.volume()),
            "hits": int(hits),
            "misses": int(misses),
        }

    def clear(self) -> int:
        """Remove every entry (and reset the counts); how many there were."""
        removed = int(self.store.clear())
        self.store.stats(reset=True)
        return removed

    def close(self) -> None:
        """Close the store (it opens again on next use)."""
        if self._store is not None:
            self._store.close()
            self._store = None


class CachingModel(ModelWrapper):
    """A model whose complete answers are kept in a ``ResponseCache`` and given again for
    the same request."""

    def __init__(self, inner: Model, label: str, cache: ResponseCache) -> None:
        super().__init__(inner, label)
        self.cache = cache

    async def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], settings: ModelSettings
    ) -> AsyncIterator[StreamPart]:
        """The cached answer, or the live one (kept once it is complete)."""
        request = model_request(self.label, messages, tools, settings)
        cached = self.cache.get(request)
        if cached is not None:
            for part in cached:
                yield part
            return
        parts: list[StreamPart] = []
        async for part in self.inner.stream(messages, tools, settings):
            parts.append(part)
            yield part
        if parts and isinstance(parts[-1], ResponseDone):
            self.cache.put(request, parts)

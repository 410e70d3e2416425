"""Vectors for the knowledge base: ``kb.embedding`` names a connector (``connectors.yml``
alias or ``openai/<model>``) whose API speaks OpenAI's ``POST /v1/embeddings``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentcli.assistant.search.http import request_json
from agentcli.errors import ConfigError, SearchError

__all__ = ["BATCH", "Embedder", "resolve_embedder"]

BATCH = 64  # texts per request


@dataclass(frozen=True, slots=True)
class Embedder:
    """Where one connector's embeddings come from."""

    connector: str
    model: str
    url: str
    headers: Mapping[str, str]
    params: Mapping[str, str]
    timeout: float

    @property
    def key(self) -> str:
        """What the index records as its embedder: a change re-embeds every chunk."""
        return f"{self.connector}|{self.model}|{self.url}"

    async def embed(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, in order; through the case's cassette (as a call of server
        "embeddings", tool: the connector), so ``--replay`` answers with the recorded vectors
        and no endpoint (the request's key is never recorded: only the model and the texts)."""
        from agentcli.assistant import cassette

        async def live() -> list[list[float]]:
            return await self._embed_live(texts)

        request = {"model": self.model, "input": texts}
        found = await cassette.call_tool("embeddings", self.connector, request, live, raising=True)
        if not isinstance(found, list) or len(found) != len(texts):
            raise SearchError(
                f"embeddings ({self.connector}): the cassette holds no {len(texts)} vectors "
                "for these texts; record it again (--record)"
            )
        return [[float(x) for x in vector] for vector in found]

    async def _embed_live(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, in order, from the endpoint (in batches)."""
        vectors: list[list[float]] = []
        for start in range(0, len(texts), BATCH):
            batch = texts[start : start + BATCH]
            data = await request_json(
                "POST",
                self.url,
                label=f"embeddings ({self.connector})",
                timeout=self.timeout,
                headers=self.headers,
                params=self.params or None,
                body={"model": self.model, "input": batch},
                key_hint=f"check the api_key of connector {self.connector!r}",
            )
            vectors.extend(_vectors(data, len(batch), self.connector))
        return vectors


def _vectors(data: Any, count: int, connector: str) -> list[list[float]]:
    rows = data.get("data") if isinstance(data, dict) else None
    if not isinstance(rows, list) or len(rows) != count:
        raise SearchError(
            f"embeddings ({connector}): expected {count} vectors in data[], got "
            f"{len(rows) if isinstance(rows, list) else 'none'}"
        )
    ordered = sorted(rows, key=lambda row: int(row.get("index", 0)) if isinstance(row, dict) else 0)
    vectors = []
    for row in ordered:
        vector = row.get("embedding") if isinstance(row, dict) else None
        if not isinstance(vector, list) or not vector:
            raise SearchError(f"embeddings ({connector}): an item of data[] has no embedding")
        vectors.append([float(x) for x in vector])
    return vectors


def resolve_embedder(
    spec: str,
    *,
    package_dir: Path,
    cwd: Path,
    assistants_root: Path | None,
    env: Mapping[str, str],
) -> Embedder:
    """The embedder of connector ``spec``; a ConfigError when it is no OpenAI-compatible
    connector (offline models have no embeddings)."""
    from agentcli.models.connectors import resolve_connector

    model = resolve_connector(
        spec, package_dir=package_dir, cwd=cwd, assistants_root=assistants_root, env=env
    )
    endpoint_of = getattr(model, "endpoint", None)
    if endpoint_of is None:
        raise ConfigError(
            f"kb.embedding: connector {spec!r} has no embeddings endpoint",
            hint="name an OpenAI-compatible connector (connectors.yml: model openai/<name>, "
            "api_base ...) that serves /v1/embeddings",
        )
    endpoint = endpoint_of()
    return Embedder(
        connector=spec,
        model=str(getattr(model, "name", spec)),
        url=endpoint.base_url + "embeddings",
        headers=endpoint.headers(),
        params=dict(endpoint.query),
        timeout=float(endpoint.timeout),
    )

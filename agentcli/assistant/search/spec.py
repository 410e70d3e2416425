"""What a package asks of search: ``SearchConfig``, read from package.yao's ``kb``, ``db``,
``search`` and ``uses`` (their JSON types are checked by package.schema.json first; this
module checks what a schema cannot: a citation format with a place for the number, the
values of ``uses``). A collection without its folder is the error of the searches that
use it, not of the load: a package can be loaded before its documents are written.

::

    "kb": {"collections": ["faq"], "embedding": "embedder"},
    "db": {"models": ["ticket"]},
    "search": {
      "web": {"provider": "tavily", "max_results": 5, "base_url": "...", "api_key_env": "..."},
      "kb": {"threshold": 0.3, "max_results": 5},
      "db": {"max_results": 20},
      "citation": {"format": "[{index}]", "auto_inject_prompt": true}
    },
    "uses": {"search": "builtin" | "disabled", "fetch": "builtin" | "disabled" | "mcp:<server>"}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "DEFAULT_CITATION_FORMAT",
    "PROVIDERS",
    "CitationSpec",
    "KbSpec",
    "SearchConfig",
    "WebSpec",
    "parse_search",
]

Provider = Literal["tavily", "brave", "searxng"]
PROVIDERS: tuple[Provider, ...] = ("tavily", "brave", "searxng")
DEFAULT_CITATION_FORMAT = "[{index}]"
DEFAULT_MAX_RESULTS = 10
DEFAULT_WEB_TIMEOUT = 15.0
KB_SUFFIXES = (".md", ".txt", ".json")


@dataclass(frozen=True, slots=True)
class WebSpec:
    """``search.web``: the provider and how to reach it (``base_url`` for the fakes and
    self-hosted SearXNG; ``api_key_env`` the variable holding the key)."""

    provider: Provider
    max_results: int = DEFAULT_MAX_RESULTS
    base_url: str | None = None
    api_key_env: str | None = None
    timeout: float = DEFAULT_WEB_TIMEOUT


@dataclass(frozen=True, slots=True)
class KbSpec:
    """``kb`` and ``search.kb``: the collections (folders ``kb/<name>/``), the embedding
    connector (None: BM25 only), the threshold (0..1) and how many hits."""

    collections: tuple[str, ...] = ()
    embedding: str | None = None
    threshold: float = 0.0
    max_results: int = DEFAULT_MAX_RESULTS


@dataclass(frozen=True, slots=True)
class CitationSpec:
    """``search.citation``: the marker of a hit (``{index}``: 1, 2, ...) and whether the
    instruction to cite is added to the injected results."""

    format: str = DEFAULT_CITATION_FORMAT
    auto_inject_prompt: bool = True
    custom_prompt: str | None = None

    def marker(self, index: int) -> str:
        """The text the model writes to cite hit ``index``: ``[1]``."""
        return self.format.replace("{index}", str(index)).replace("{id}", str(index))


@dataclass(frozen=True, slots=True)
class SearchConfig:
    """Everything search of one package: sources, limits, citation and ``uses``."""

    kb: KbSpec = field(default_factory=KbSpec)
    db_models: tuple[str, ...] = ()
    db_max_results: int = DEFAULT_MAX_RESULTS
    web: WebSpec | None = None
    citation: CitationSpec = field(default_factory=CitationSpec)
    uses_search: str = "builtin"  # or "disabled"
    uses_fetch: str = "builtin"  # or "disabled" or "mcp:<server>"

    @property
    def sources(self) -> tuple[str, ...]:
        """The kinds the automatic search runs: those the package configures."""
        found = []
        if self.web is not None:
            found.append("web")
        if self.kb.collections:
            found.append("kb")
        if self.db_models:
            found.append("db")
        return tuple(found)

    @property
    def fetch_server(self) -> str | None:
        """The MCP server ``uses.fetch`` routes fetches to, if any."""
        return self.uses_fetch[4:] if self.uses_fetch.startswith("mcp:") else None


def parse_search(
    values: Mapping[str, Any], package_dir: Path, servers: tuple[str, ...] = ()
) -> tuple[SearchConfig, list[tuple[str, str]]]:
    """The config of schema-valid package values, and its problems as ``(field, message)``
    (the caller turns the first into a ``file:line`` error)."""
    problems: list[tuple[str, str]] = []
    kb = dict(values.get("kb") or {})
    search = dict(values.get("search") or {})
    uses = dict(values.get("uses") or {})
    kb_options = dict(search.get("kb") or {})
    # Yao also takes the default collections in search.kb; the package's kb comes first
    collections = tuple(kb.get("collections") or kb_options.get("collections") or ())
    threshold = float(kb_options.get("threshold") or 0.0)
    kb_spec = KbSpec(
        collections=collections,
        embedding=kb.get("embedding") or None,
        threshold=threshold,
        max_results=int(kb_options.get("max_results") or DEFAULT_MAX_RESULTS),
    )
    web_spec = None
    web = search.get("web")
    if isinstance(web, dict) and web.get("provider"):
        if web["provider"] == "searxng" and not web.get("base_url"):
            problems.append(
                (
                    "search.web.base_url",
                    "is needed for searxng: the URL of your SearXNG instance "
                    '(e.g. "http://127.0.0.1:8888")',
                )
            )
        web_spec = WebSpec(
            provider=web["provider"],
            max_results=int(web.get("max_results") or DEFAULT_MAX_RESULTS),
            base_url=web.get("base_url") or None,
            api_key_env=web.get("api_key_env") or None,
            timeout=_seconds(web.get("timeout"), problems),
        )
    citation = dict(search.get("citation") or {})
    form = citation.get("format") or DEFAULT_CITATION_FORMAT
    if "{index}" not in form and "{id}" not in form:
        problems.append(
            ("search.citation.format", f'must hold {{index}}, e.g. "[{{index}}]", got {form!r}')
        )
    uses_search = str(uses.get("search") or "builtin")
    if uses_search not in ("builtin", "disabled"):
        problems.append(
            (
                "uses.search",
                f'must be "builtin" or "disabled", got {uses_search!r} (a search agent or '
                "MCP search is not run here: call it from a Create hook)",
            )
        )
    fetch = str(uses.get("fetch") or "builtin")
    if fetch.startswith("mcp:"):
        server = fetch[4:]
        if not server:
            problems.append(("uses.fetch", 'names no server: write "mcp:<server id>"'))
        elif servers and server not in servers:
            problems.append(
                (
                    "uses.fetch",
                    f"names MCP server {server!r}, which is not in mcps/ "
                    f"(servers: {', '.join(servers)})",
                )
            )
    elif fetch not in ("builtin", "disabled"):
        problems.append(
            ("uses.fetch", f'must be "builtin", "disabled" or "mcp:<server>", got {fetch!r}')
        )
    config = SearchConfig(
        kb=kb_spec,
        db_models=tuple((values.get("db") or {}).get("models") or ()),
        db_max_results=int((search.get("db") or {}).get("max_results") or DEFAULT_MAX_RESULTS),
        web=web_spec,
        citation=CitationSpec(
            format=form,
            auto_inject_prompt=citation.get("auto_inject_prompt") is not False,
            custom_prompt=citation.get("custom_prompt") or None,
        ),
        uses_search=uses_search,
        uses_fetch=fetch,
    )
    return config, problems


def _seconds(value: Any, problems: list[tuple[str, str]]) -> float:
    if value is None:
        return DEFAULT_WEB_TIMEOUT
    from agentcli.durations import parse_duration
    from agentcli.errors import ConfigError

    try:
        return parse_duration(value)
    except ConfigError as error:
        problems.append(("search.web.timeout", error.message))
        return DEFAULT_WEB_TIMEOUT

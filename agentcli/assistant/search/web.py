"""Web search providers behind one interface: Tavily, Brave and SearXNG JSON APIs, picked
by ``search.web.provider``; the key comes from the environment (``TAVILY_API_KEY``,
``BRAVE_API_KEY``, or ``search.web.api_key_env``) and a missing one is an error before
any request. ``search.web.base_url`` points a provider elsewhere (a self-hosted SearXNG,
the loopback fakes of the tests).

Scores are 0..1: Tavily's own; SearXNG's divided by the best of the answer; Brave gives
none, so a hit scores by its rank (``1 - rank / count``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agentcli.assistant.search.http import request_json
from agentcli.assistant.search.result import SearchItem
from agentcli.assistant.search.spec import WebSpec
from agentcli.errors import ConfigError, SearchError

__all__ = ["KEY_VARIABLES", "PUBLIC_BASES", "WebQuery", "search_web"]

KEY_VARIABLES = {"tavily": "TAVILY_API_KEY", "brave": "BRAVE_API_KEY", "searxng": None}
PUBLIC_BASES = {"tavily": "https://api.tavily.com", "brave": "https://api.search.brave.com"}
TIME_RANGES = ("day", "week", "month", "year")
_BRAVE_FRESHNESS = {"day": "pd", "week": "pw", "month": "pm", "year": "py"}
_BRAVE_MAX_COUNT = 20  # Brave refuses a larger count


@dataclass(frozen=True, slots=True)
class WebQuery:
    """One web search: the text, how many hits, sites to keep to, a time range."""

    query: str
    limit: int
    sites: tuple[str, ...] = ()
    time_range: str | None = None


def api_key(spec: WebSpec, env: Mapping[str, str]) -> str | None:
    """The provider's key (None for SearXNG without ``api_key_env``); a ConfigError
    naming the variable when it is needed and not set."""
    variable = spec.api_key_env or KEY_VARIABLES[spec.provider]
    if variable is None:
        return None
    key = env.get(variable, "").strip()
    if not key:
        raise ConfigError(
            f"search.web: {spec.provider} needs an API key and {variable} is not set",
            hint=f"export {variable}=<your key>, or set search.web.api_key_env in package.yao",
        )
    from agentcli.secrets import register_secret

    register_secret(key)
    return key


async def search_web(spec: WebSpec, query: WebQuery, env: Mapping[str, str]) -> list[SearchItem]:
    """The provider's hits for ``query``, best first (at most ``query.limit``)."""
    key = api_key(spec, env)  # before any request
    base = (spec.base_url or PUBLIC_BASES.get(spec.provider, "")).rstrip("/")
    label = f"web search ({spec.provider})"
    variable = spec.api_key_env or KEY_VARIABLES[spec.provider]
    hint = f"check ${variable}" if variable else "check the instance's settings"
    if query.time_range is not None and query.time_range not in TIME_RANGES:
        raise SearchError(
            f"web search: time_range must be one of {', '.join(TIME_RANGES)}, "
            f"got {query.time_range!r}"
        )
    if spec.provider == "tavily":
        body: dict[str, Any] = {"query": query.query, "max_results": query.limit}
        if query.sites:
            body["include_domains"] = list(query.sites)
        if query.time_range:
            body["time_range"] = query.time_range
        data = await request_json(
            "POST",
            f"{base}/search",
            label=label,
            timeout=spec.timeout,
            headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
            body=body,
            key_hint=hint,
        )
        return _tavily(data, query.limit)
    text = " ".join([query.query, *(f"site:{site}" for site in query.sites)])
    if spec.provider == "brave":
        params = {"q": text, "count": str(min(query.limit, _BRAVE_MAX_COUNT))}
        if query.time_range:
            params["freshness"] = _BRAVE_FRESHNESS[query.time_range]
        data = await request_json(
            "GET",
            f"{base}/res/v1/web/search",
            label=label,
            timeout=spec.timeout,
            headers={"X-Subscription-Token": key or "", "Accept": "application/json"},
            params=params,
            key_hint=hint,
        )
        return _brave(data, query.limit)
    params = {"q": text, "format": "json"}
    if query.time_range:
        params["time_range"] = query.time_range
    headers = {"Accept": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    data = await request_json(
        "GET",
        f"{base}/search",
        label=label,
        timeout=spec.timeout,
        headers=headers,
        params=params,
        key_hint=hint,
    )
    return _searxng(data, query.limit)


def _results(data: Any, *path: str) -> list[dict[str, Any]]:
    found = data
    for key in path:
        found = found.get(key) if isinstance(found, dict) else None
    if not isinstance(found, list):
        raise SearchError(f"web search: the answer has no {'.'.join(path)} list")
    return [item for item in found if isinstance(item, dict)]


def _item(raw: dict[str, Any], content_key: str, score: float) -> SearchItem:
    return SearchItem(
        title=str(raw.get("title") or raw.get("url") or ""),
        url=str(raw.get("url") or ""),
        content=str(raw.get(content_key) or ""),
        score=max(0.0, min(1.0, score)),
    )


def _tavily(data: Any, limit: int) -> list[SearchItem]:
    results = _results(data, "results")[:limit]
    return [_item(r, "content", float(r.get("score") or 0.0)) for r in results]


def _brave(data: Any, limit: int) -> list[SearchItem]:
    results = _results(data, "web", "results")[:limit]
    count = len(results)
    return [_item(r, "description", 1.0 - rank / count) for rank, r in enumerate(results)]


def _searxng(data: Any, limit: int) -> list[SearchItem]:
    results = _results(data, "results")[:limit]
    best = max((float(r.get("score") or 0.0) for r in results), default=0.0) or 1.0
    return [_item(r, "content", float(r.get("score") or 0.0) / best) for r in results]

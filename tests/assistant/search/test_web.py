"""Each web provider against its loopback fake (fixtures/search_servers.py): the request
it sends (key, query, limits, sites, time range), the hits it returns, and every failure
as a clear error: a missing key before any request, 401, 429, 500 and a timeout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.assistant.search.spec import WebSpec
from agentcli.assistant.search.web import WebQuery, search_web
from agentcli.errors import ConfigError, SearchError
from fixtures.search_servers import SearchServer
from tests.assistant.search.conftest import package

KEYS = {"tavily": "TAVILY_API_KEY", "brave": "BRAVE_API_KEY"}


@pytest.fixture(params=["tavily", "brave", "searxng"])
def server(request: pytest.FixtureRequest, no_proxies: None):
    provider = request.param
    with SearchServer(provider, api_key=None if provider == "searxng" else "k-123") as fake:
        yield fake


def _spec(server: SearchServer, **changes) -> WebSpec:
    return WebSpec(provider=server.provider, base_url=server.base_url, **changes)  # type: ignore[arg-type]


def _env(server: SearchServer) -> dict[str, str]:
    return {KEYS[server.provider]: "k-123"} if server.provider in KEYS else {}


async def test_each_provider_answers_hits_in_order(server: SearchServer) -> None:
    items = await search_web(_spec(server), WebQuery("python release", limit=5), _env(server))
    assert [item.title for item in items] == ["Python 3.13 released", "Python packaging guide"]
    assert items[0].url == "https://docs.python.org/3/whatsnew/3.13.html"
    assert "interactive interpreter" in items[0].content
    assert 1 >= items[0].score > items[1].score >= 0
    sent = server.requests[-1]
    if server.provider == "tavily":
        assert sent.method == "POST" and sent.path == "/search"
        assert sent.headers["authorization"] == "Bearer k-123"
        assert sent.body == {"query": "python release", "max_results": 5}
    elif server.provider == "brave":
        assert sent.path == "/res/v1/web/search" and sent.headers["x-subscription-token"] == "k-123"
        assert sent.query == {"q": "python release", "count": "5"}
    else:
        assert sent.query == {"q": "python release", "format": "json"}
        assert "authorization" not in sent.headers


async def test_limit_sites_and_time_range_reach_the_provider(server: SearchServer) -> None:
    query = WebQuery("python rust", limit=1, sites=("rust-lang.org",), time_range="week")
    items = await search_web(_spec(server), query, _env(server))
    assert [item.title for item in items] == ["Rust 1.80 announcement"]
    sent = server.requests[-1]
    if server.provider == "tavily":
        assert sent.body["include_domains"] == ["rust-lang.org"]
        assert sent.body["time_range"] == "week"
    elif server.provider == "brave":
        assert sent.query["q"] == "python rust site:rust-lang.org"
        assert sent.query["freshness"] == "pw" and sent.query["count"] == "1"
    else:
        assert sent.query["q"] == "python rust site:rust-lang.org"
        assert sent.query["time_range"] == "week"


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (401, "the API key was refused (HTTP 401)"),
        (429, "rate limited (HTTP 429, retry after 1s)"),
        (500, "HTTP 500"),
    ],
)
async def test_http_failures_are_clear_errors(
    server: SearchServer, status: int, expected: str
) -> None:
    server.fail(status)
    with pytest.raises(SearchError) as info:
        await search_web(_spec(server), WebQuery("python", limit=3), _env(server))
    assert info.value.message.startswith(f"web search ({server.provider}): {expected}")
    assert "k-123" not in str(info.value)


async def test_a_wrong_key_is_refused_and_named_by_its_variable(server: SearchServer) -> None:
    if server.provider == "searxng":
        pytest.skip("searxng takes no key")
    with pytest.raises(SearchError) as info:
        await search_web(_spec(server), WebQuery("x", limit=3), {KEYS[server.provider]: "bad"})
    assert "HTTP 401" in info.value.message and info.value.hint == f"check ${KEYS[server.provider]}"


async def test_a_slow_provider_times_out(server: SearchServer) -> None:
    server.stall(2.0)
    with pytest.raises(SearchError) as info:
        await search_web(_spec(server, timeout=0.3), WebQuery("x", limit=3), _env(server))
    assert info.value.message == f"web search ({server.provider}): no answer within 0.3s"


@pytest.mark.parametrize("provider", ["tavily", "brave"])
async def test_a_missing_key_fails_before_any_request(provider: str, no_proxies: None) -> None:
    with SearchServer(provider, api_key="k") as fake:
        with pytest.raises(ConfigError) as info:
            await search_web(_spec(fake), WebQuery("x", limit=3), {})
        assert fake.requests == []
    assert info.value.message == (
        f"search.web: {provider} needs an API key and {KEYS[provider]} is not set"
    )
    assert info.value.hint is not None and f"export {KEYS[provider]}=" in info.value.hint


async def test_api_key_env_names_another_variable(no_proxies: None) -> None:
    with SearchServer("tavily", api_key="mine") as fake:
        spec = WebSpec(provider="tavily", base_url=fake.base_url, api_key_env="MY_TAVILY")
        items = await search_web(spec, WebQuery("rust", limit=3), {"MY_TAVILY": "mine"})
    assert [item.title for item in items] == ["Rust 1.80 announcement"]


async def test_ctx_search_web_returns_errors_as_values(
    assistants: Path, make_registry, no_proxies: None
) -> None:
    with SearchServer("brave", api_key="k-123") as fake:
        package(
            assistants,
            "web",
            json.dumps(
                {
                    "name": "W",
                    "connector": "echo",
                    "search": {"web": {"provider": "brave", "base_url": fake.base_url}},
                    "uses": {"search": "disabled"},
                }
            ),
            {
                "src/index.py": "def Next(ctx, payload):\n"
                "    q = payload['messages'][-1]['content']\n"
                "    return {'data': [r.to_dict() for r in ctx.search.All(["
                "{'type': 'web', 'query': q, 'limit': 1}, {'type': 'kb', 'query': q}])]}\n"
            },
        )
        ok = (await make_registry({"BRAVE_API_KEY": "k-123"}).get("web").respond("rust")).next
        missing = (await make_registry({}).get("web").respond("rust")).next
    web, kb = ok
    assert web["type"] == "web" and web["source"] == "hook" and web["total"] == 1
    assert web["items"][0]["citation_id"] == "1" and web["items"][0]["title"].startswith("Rust")
    assert kb["type"] == "kb" and kb["error"].startswith("assistant 'web' has no knowledge base")
    assert missing[0]["error"].startswith(
        "search.web: brave needs an API key and BRAVE_API_KEY is not set (hint: export"
    )


async def test_web_hits_are_recorded_in_the_cassette_and_replayed_without_network(
    assistants: Path, make_registry, no_proxies: None, tmp_path: Path
) -> None:
    from agentcli.assistant.cassette import Cassette, use

    hook = (
        "def Next(ctx, payload):\n"
        "    return {'data': ctx.search.web(payload['messages'][-1]['content']).to_dict()}\n"
    )
    path = tmp_path / "cassettes" / "c1.jsonl"
    with SearchServer("tavily", api_key="k-123") as fake:
        web = {"provider": "tavily", "base_url": fake.base_url}
        package(
            assistants,
            "w",
            json.dumps(
                {
                    "name": "W",
                    "connector": "echo",
                    "search": {"web": web},
                    "uses": {"search": "disabled"},
                }
            ),
            {"src/index.py": hook},
        )
        recording = Cassette.open(path, "record", "c1", None)
        with use(recording):
            live = (await make_registry({"TAVILY_API_KEY": "k-123"}).get("w").respond("rust")).next
        recording.save()
    assert live["items"][0]["title"] == "Rust 1.80 announcement"
    assert "k-123" not in path.read_text()
    with use(Cassette.open(path, "replay", "c1", None)):  # the server is gone, and no key
        replayed = (await make_registry({}).get("w").respond("rust")).next
    assert replayed["items"] == live["items"] and "error" not in replayed
    with use(Cassette.open(path, "replay", "c1", None)):
        other = (await make_registry({}).get("w").respond("python")).next
    assert other["items"] == [] and "is not in" in other["error"]

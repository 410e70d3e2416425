"""OpenAICompatModel against the loopback server: the shared scenarios plus SDK specifics."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from agentcli.errors import AuthenticationError, ProviderError
from agentcli.models.base import Model, ModelSettings, collect
from agentcli.models.openai_model import OpenAICompatModel
from agentcli.models.retry import RetryPolicy
from fixtures.openai_server import OpenAIServer, Reply
from tests.models.network_scenarios import (  # noqa: F401  (collected here for this model)
    API_KEY,
    FAST_RETRY,
    USER,
    test_api_key_never_in_error_message,
    test_call_options_reach_the_server,
    test_connection_reset_before_any_byte_is_retried,
    test_connection_reset_mid_stream_is_not_retried,
    test_context_length_is_bad_request,
    test_empty_response,
    test_hostile_retry_after_waits_at_most_max_delay,
    test_invalid_json_tool_arguments,
    test_model_name_modes_of_the_server,
    test_plain_text_reply,
    test_rate_limit_exhausted_keeps_retry_after,
    test_rate_limit_with_retry_after_then_success,
    test_reasoning_streamed_as_thinking,
    test_repeated_server_errors_end_in_provider_error,
    test_slower_than_timeout_is_model_timeout,
    test_stall_mid_stream_is_model_timeout,
    test_streamed_text_in_many_chunks,
    test_truncated_stream_is_provider_error,
    test_two_parallel_tool_calls_split_across_chunks,
    test_unauthorized_is_not_retried_and_hides_the_key,
    test_usage_recorded,
)


@pytest.fixture(params=["aiohttp", "sdk"])
async def make_model(request):
    """Build OpenAICompatModels pointed at a server, once per transport (every scenario runs
    over aiohttp and over the openai SDK); connections close at teardown."""
    made: list[OpenAICompatModel] = []

    def make(server, name="m", **options):
        options.setdefault("transport", request.param)
        options.setdefault("api_key", API_KEY)
        options.setdefault("retry", FAST_RETRY)
        options.setdefault("timeout", 5.0)
        made.append(OpenAICompatModel(name, api_base=server.base_url, **options))
        return made[-1]

    yield make
    for model in made:
        await model.aclose()


def test_is_a_model_and_strips_the_openai_prefix():
    model = OpenAICompatModel("openai/gpt-4o", api_base="http://127.0.0.1:9/v1")
    assert isinstance(model, Model)
    assert (model.provider, model.name) == ("openai", "gpt-4o")
    assert model.api_key == "none"  # a local server needs no key, the SDK needs one
    assert model._client is None  # nothing built before the first call


def test_building_the_model_does_not_import_openai():
    code = (
        "import sys; from agentcli.models.openai_model import OpenAICompatModel; "
        "OpenAICompatModel('gpt-4o'); print('openai' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


async def test_dummy_key_is_sent_without_an_api_key(openai_server):
    model = OpenAICompatModel("m", api_base=openai_server.base_url)
    await collect(model, USER)
    assert openai_server.requests[-1].headers["authorization"] == "Bearer none"


async def test_missing_key_without_api_base_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(AuthenticationError, match="no API key") as caught:
        await collect(OpenAICompatModel("gpt-4o"), USER)
    assert "OPENAI_API_KEY" in str(caught.value)


async def test_unknown_options_go_in_the_body(make_model, openai_server):
    model = make_model(openai_server, extra={"top_k": 5, "chat_template_kwargs": {"x": 1}})
    await collect(model, USER)
    body = openai_server.requests[-1].body
    assert (body["top_k"], body["chat_template_kwargs"]) == (5, {"x": 1})


async def test_client_and_connections_are_reused(make_model, openai_server):
    model = make_model(openai_server)
    for _ in range(3):
        await collect(model, USER)
    client = model._client
    await collect(model, USER)
    assert model._client is client
    await model.aclose()
    assert model._client is None


async def test_cost_comes_from_the_connector_price_or_litellms_map(make_model):
    from agentcli.models.pricing import Price, litellm_price

    with OpenAIServer() as server:
        for _ in range(3):
            server.enqueue(text="a", usage={"prompt_tokens": 10, "completion_tokens": 5})
        known = make_model(server, name="gpt-4o")
        listed = litellm_price("openai/gpt-4o")
        assert listed is not None and known.known_price() == listed
        assert (await collect(known, USER)).usage.cost == pytest.approx(listed.cost(10, 5))
        unknown = make_model(server, name="my-local-finetune")
        assert unknown.known_price() is None
        assert (await collect(unknown, USER)).usage.cost is None
        unknown.price = Price(1_000.0, 2_000.0)  # as connectors.yml's `price` sets it
        assert (await collect(unknown, USER)).usage.cost == pytest.approx(0.02)


async def test_fifty_concurrent_streams_share_the_latency():
    with OpenAIServer(latency=0.2) as server:
        model = OpenAICompatModel("echo+chunks-3", api_base=server.base_url, retry=FAST_RETRY)
        started = time.monotonic()
        replies = await asyncio.gather(
            *(collect(model, [{"role": "user", "content": f"question {i}"}]) for i in range(50))
        )
        elapsed = time.monotonic() - started
        await model.aclose()
    assert [r.content for r in replies] == [f"question {i}" for i in range(50)]
    assert elapsed < 2.0  # fifty sequential calls would take 10 s


async def test_chaos_mode_faults_are_retried_away():
    with OpenAIServer(latency=0.0) as server:
        model = OpenAICompatModel(
            "echo+chaos-40-3",
            api_base=server.base_url,
            retry=RetryPolicy(max_attempts=8, base_delay=0.001),
        )
        replies = [await collect(model, USER, settings=ModelSettings()) for _ in range(20)]
        await model.aclose()
    assert all(r.content == "hello there" for r in replies)
    assert len(server.requests) > 20  # some requests failed and were retried


async def test_server_requires_its_api_key():
    with OpenAIServer(api_key="right-key") as server:
        wrong = OpenAICompatModel("m", api_base=server.base_url, api_key="wrong-key")
        with pytest.raises(AuthenticationError, match="HTTP 401"):
            await collect(wrong, USER)
        right = OpenAICompatModel("m", api_base=server.base_url, api_key="right-key")
        assert (await collect(right, USER)).content == "hello there"
        await wrong.aclose()
        await right.aclose()


async def test_server_wide_fault_rate_is_seeded():
    def outcomes(seed):
        with OpenAIServer(fault_rate=0.5, seed=seed, faults=("500",)) as server:
            results = []
            for _ in range(12):
                try:
                    post(server, {"model": "m", "messages": USER})
                    results.append(200)
                except urllib.error.HTTPError as exc:
                    results.append(exc.code)
        return results

    first = await asyncio.to_thread(outcomes, 5)
    assert first == await asyncio.to_thread(outcomes, 5)
    assert set(first) == {200, 500}


def post(server, body):
    """A non-streamed chat completion through urllib."""
    request = urllib.request.Request(
        server.base_url + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.load(response)


def test_server_models_list_and_non_streamed_json(openai_server):
    with urllib.request.urlopen(openai_server.base_url + "/models", timeout=5) as response:
        ids = [m["id"] for m in json.load(response)["data"]]
    assert "echo" in ids
    openai_server.enqueue(Reply(text="plain", tool_calls=[{"name": "t", "arguments": {"a": 1}}]))
    data = post(openai_server, {"model": "m", "messages": USER})
    message = data["choices"][0]["message"]
    assert (message["content"], data["choices"][0]["finish_reason"]) == ("plain", "tool_calls")
    assert message["tool_calls"][0]["function"] == {"name": "t", "arguments": '{"a": 1}'}
    assert data["usage"]["total_tokens"] > 0
    assert [r.path for r in openai_server.requests] == ["/v1/models", "/v1/chat/completions"]


async def test_real_providers_are_unreachable_in_tests():
    model = OpenAICompatModel("gpt-4o", api_key=API_KEY, retry=RetryPolicy(max_attempts=1))
    with pytest.raises(ProviderError, match="tests may not resolve"):
        await collect(model, USER)
    with socket.socket() as sock, pytest.raises(RuntimeError, match="may not connect"):
        sock.connect(("203.0.113.7", 443))


def test_an_unknown_transport_is_a_config_error():
    from agentcli.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown transport 'grpc'"):
        OpenAICompatModel("m", transport="grpc")


@pytest.mark.parametrize(
    ("transport", "proxy", "client"),
    [
        ("aiohttp", None, "AiohttpTransport"),
        ("aiohttp", "http://127.0.0.1:3128", "AiohttpTransport"),  # the proxy on each request
        ("sdk", None, "SdkTransport"),
        ("sdk", "http://127.0.0.1:3128", "SdkTransport"),
    ],
)
async def test_which_transport_serves_a_model_and_its_proxy(monkeypatch, transport, proxy, client):
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    if proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy)
    model = OpenAICompatModel(
        "m", api_base="http://10.1.2.3:8000/v1", api_key=API_KEY, transport=transport
    )
    served = model._client_for_loop()
    assert type(served).__name__ == client
    assert (served.proxy, model.via_proxy) == (proxy, bool(proxy))
    await model.aclose()


@pytest.mark.parametrize("transport", ["aiohttp", "sdk"])
async def test_a_query_in_the_api_base_goes_on_every_request(openai_server, transport):
    model = OpenAICompatModel(
        "m",
        api_base=f"{openai_server.base_url}?api-version=2024-10-21",
        api_key=API_KEY,
        transport=transport,
        retry=FAST_RETRY,
    )
    openai_server.enqueue(text="fine")
    response = await collect(model, USER)
    await model.aclose()
    assert response.content == "fine"
    assert openai_server.requests[-1].path == "/v1/chat/completions?api-version=2024-10-21"


def unstreamed(body: bytes, content_type: str = "application/json", status: str = "200 OK"):
    head = f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
    return (head + "\r\n").encode() + body


COMPLETION = json.dumps(
    {
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "whole",
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "lookup", "arguments": '{"q": "x"}'},
                        }
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
    }
).encode()


@pytest.mark.parametrize("transport", ["aiohttp", "sdk"])
async def test_a_server_that_ignores_stream_is_read_as_one_completion(transport):
    from tests.models.rawserver import RawServer

    sse_as_json = b'data: {"choices": [{"index": 0, "delta": {"content": "sse"}}]}\n\n'
    sse_as_json += b'data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}\n\n'
    async with RawServer(unstreamed(COMPLETION), unstreamed(sse_as_json)) as server:
        model = OpenAICompatModel("m", api_base=server.url, api_key=API_KEY, transport=transport)
        whole = await collect(model, USER)
        sse = await collect(model, USER)
        await model.aclose()
    assert whole.content == "whole" and whole.finish_reason == "tool_calls"
    assert [(c.name, c.arguments) for c in whole.tool_calls] == [("lookup", {"q": "x"})]
    assert whole.usage.input_tokens == 3
    assert sse.content == "sse"


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        (unstreamed(b"<html>hi</html>", "text/html"), "answered HTTP 200 text/html,"),
        (
            b"HTTP/1.1 307 Temporary Redirect\r\nLocation: https://x.test/v1/chat/completions\r\n"
            b"Content-Length: 0\r\n\r\n",
            "answered HTTP 307 to https://x.test/v1/chat/completions,",
        ),
    ],
)
async def test_an_answer_that_is_no_completion_says_what_came_back(answer, says):
    from tests.models.rawserver import RawServer

    async with RawServer(answer) as server:
        model = OpenAICompatModel("m", api_base=server.url, api_key=API_KEY, retry=FAST_RETRY)
        with pytest.raises(ProviderError) as info:
            await collect(model, USER)
        await model.aclose()
    assert says in info.value.message
    assert not info.value.retryable
    assert info.value.hint == "check the api_base: it should be the API root, usually ending in /v1"


async def test_a_failing_proxy_is_named_in_the_hint(monkeypatch):
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    probe = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = probe.sockets[0].getsockname()[1]
    probe.close()
    await probe.wait_closed()
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{port}")  # nothing listens there
    model = OpenAICompatModel(
        "m", api_base="http://10.1.2.3:8000/v1", api_key=API_KEY, retry=RetryPolicy(max_attempts=1)
    )
    with pytest.raises(ProviderError, match="connection failed") as info:
        await collect(model, USER)
    await model.aclose()
    assert "HTTP(S)_PROXY" in info.value.hint and "NO_PROXY" in info.value.hint


@pytest.mark.parametrize("transport", ["aiohttp", "sdk"])
async def test_a_refused_connection_names_where_it_tried(transport):
    probe = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = probe.sockets[0].getsockname()[1]
    probe.close()
    await probe.wait_closed()
    model = OpenAICompatModel(
        "m",
        api_base=f"http://127.0.0.1:{port}/v1",
        api_key=API_KEY,
        transport=transport,
        retry=RetryPolicy(max_attempts=1),
    )
    with pytest.raises(ProviderError) as info:
        await collect(model, USER)
    await model.aclose()
    assert info.value.message.startswith("openai model 'm': connection failed: ")
    assert f"127.0.0.1:{port}" in info.value.message

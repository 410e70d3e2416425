"""Scenarios every network model must pass against the loopback OpenAI server.

``test_openai_model.py`` and ``test_litellm_model.py`` import these tests and supply a
``make_model`` fixture for their implementation: one test body, two implementations.
``make_model(server, name="m", **options)`` returns a model that talks to ``server``.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from agentcli.errors import (
    AuthenticationError,
    BadRequestError,
    ModelError,
    ModelTimeout,
    ProviderError,
    RateLimited,
)
from agentcli.models.base import (
    ModelSettings,
    ResponseDone,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    collect,
)
from agentcli.models.retry import RetryPolicy
from fixtures.openai_server import Reply

API_KEY = "sk-test-0123456789abcdefSECRET"
FAST_RETRY = RetryPolicy(max_attempts=4, base_delay=0.001, max_delay=0.2, jitter=0.0)
USER = [{"role": "user", "content": "hello there"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": f"the {name} tool",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
        },
    }
    for name in ("search", "lookup")
]


async def stream_parts(model: Any, tools: list | None = None, settings: Any = None) -> list[Any]:
    """Every part a model streams for USER."""
    return [part async for part in model.stream(USER, tools or [], settings or ModelSettings())]


async def parts_until_error(model: Any) -> tuple[list[Any], ModelError]:
    """The parts streamed before the stream raised, and the error."""
    parts: list[Any] = []
    with pytest.raises(ModelError) as caught:
        async for part in model.stream(USER, [], ModelSettings()):
            parts.append(part)
    return parts, caught.value


async def test_plain_text_reply(make_model, openai_server):
    openai_server.enqueue(text="Hello! How can I help?")
    parts = await stream_parts(make_model(openai_server))
    assert [type(p) for p in parts] == [TextDelta, ResponseDone]
    response = parts[-1].response
    assert response.content == "Hello! How can I help?"
    assert response.finish_reason == "stop"
    assert response.tool_calls == []
    assert (response.provider, response.model) == ("openai", "m")
    body = openai_server.requests[-1].body
    assert body["model"] == "m"
    assert body["messages"] == USER
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert "tools" not in body and "tool_choice" not in body


async def test_streamed_text_in_many_chunks(make_model, openai_server):
    text = "The quick brown fox jumps over the lazy dog. " * 4
    openai_server.enqueue(text=text, chunk_size=3)
    parts = await stream_parts(make_model(openai_server))
    deltas = [p.text for p in parts if isinstance(p, TextDelta)]
    assert len(deltas) == -(-len(text) // 3)
    assert "".join(deltas) == text
    assert isinstance(parts[-1], ResponseDone)
    assert sum(isinstance(p, ResponseDone) for p in parts) == 1
    assert parts[-1].response.content == text


async def test_two_parallel_tool_calls_split_across_chunks(make_model, openai_server):
    calls = [
        {"id": "call_a", "name": "search", "arguments": {"q": "cats and dogs"}},
        {"id": "call_b", "name": "lookup", "arguments": {"q": "id-7", "deep": True}},
    ]
    openai_server.enqueue(text="Checking.", tool_calls=calls, chunk_size=4)
    settings = ModelSettings(tool_choice="auto", temperature=0.2, max_tokens=64)
    parts = await stream_parts(make_model(openai_server), TOOLS, settings)
    fragments = [p for p in parts if isinstance(p, ToolCallDelta)]
    assert {f.index for f in fragments} == {0, 1}
    assert len(fragments) > 4
    assert [(f.index, f.id, f.name) for f in fragments if f.name] == [
        (0, "call_a", "search"),
        (1, "call_b", "lookup"),
    ]
    response = parts[-1].response
    assert response.finish_reason == "tool_calls"
    assert response.content == "Checking."
    assert [(c.id, c.name, c.arguments, c.arguments_error) for c in response.tool_calls] == [
        ("call_a", "search", {"q": "cats and dogs"}, None),
        ("call_b", "lookup", {"q": "id-7", "deep": True}, None),
    ]
    body = openai_server.requests[-1].body
    assert [t["function"]["name"] for t in body["tools"]] == ["search", "lookup"]
    assert (body["tool_choice"], body["temperature"], body["max_tokens"]) == ("auto", 0.2, 64)


async def test_usage_recorded(make_model, openai_server):
    openai_server.enqueue(text="counted", usage={"prompt_tokens": 11, "completion_tokens": 7})
    response = await collect(make_model(openai_server), USER)
    usage = response.usage
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (11, 7, 18)
    assert (usage.provider, usage.model) == ("openai", "m")
    assert usage.cost is None  # "m" is not in litellm's cost table


async def test_reasoning_streamed_as_thinking(make_model, openai_server):
    openai_server.enqueue(reasoning="Let me think.", text="42")
    parts = await stream_parts(make_model(openai_server))
    assert [p.text for p in parts if isinstance(p, ThinkingDelta)] == ["Let me think."]
    assert parts[-1].response.thinking == "Let me think."
    assert parts[-1].response.content == "42"


async def test_empty_response(make_model, openai_server):
    openai_server.enqueue()
    response = await collect(make_model(openai_server), USER)
    assert (response.content, response.tool_calls, response.finish_reason) == ("", [], "stop")


async def test_rate_limit_with_retry_after_then_success(make_model, openai_server):
    openai_server.enqueue(Reply.failure(429, "slow down", headers={"Retry-After": "0.05"}))
    openai_server.enqueue(text="finally")
    retries: list[tuple[type, int, float]] = []
    model = make_model(openai_server, on_retry=lambda e, n, d: retries.append((type(e), n, d)))
    started = time.monotonic()
    response = await collect(model, USER)
    assert response.content == "finally"
    assert retries == [(RateLimited, 1, 0.05)]
    assert time.monotonic() - started >= 0.05
    assert len(openai_server.requests) == 2


# Headers no honest server sends; each must still end in a retry after at most max_delay.
HOSTILE_RETRY_AFTER = {
    "nan": {"Retry-After": "nan"},
    "NaN-ms": {"retry-after-ms": "NaN"},
    "1e999": {"Retry-After": "1e999"},
    "inf": {"Retry-After": "inf"},
    "-inf": {"Retry-After": "-inf"},
    "negative": {"Retry-After": "-30"},
    "huge": {"Retry-After": "99999999999999999999"},
    "far-date": {"Retry-After": "Fri, 31 Dec 9999 23:59:59 GMT"},
}


@pytest.mark.parametrize("headers", HOSTILE_RETRY_AFTER.values(), ids=HOSTILE_RETRY_AFTER)
async def test_hostile_retry_after_waits_at_most_max_delay(make_model, openai_server, headers):
    delays: list[float] = []
    model = make_model(openai_server, on_retry=lambda e, n, d: delays.append(d))
    openai_server.enqueue(text="warm")
    await collect(model, USER)  # the client's imports are not what is timed
    openai_server.enqueue(Reply.failure(429, "slow down", headers=headers))
    openai_server.enqueue(text="finally")
    started = time.monotonic()
    async with asyncio.timeout(5):  # the bug slept NaN seconds, i.e. until cut
        response = await collect(model, USER)
    assert response.content == "finally"
    assert len(delays) == 1 and 0 <= delays[0] <= FAST_RETRY.max_delay, delays
    assert time.monotonic() - started < 2


async def test_rate_limit_exhausted_keeps_retry_after(make_model, openai_server):
    for _ in range(2):
        openai_server.enqueue(Reply.failure(429, headers={"Retry-After": "0"}))
    model = make_model(openai_server, retry=RetryPolicy(max_attempts=2, base_delay=0.001))
    _, error = await parts_until_error(model)
    assert isinstance(error, RateLimited)
    assert (error.attempts, error.status_code, error.retry_after) == (2, 429, 0.0)


async def test_repeated_server_errors_end_in_provider_error(make_model, openai_server):
    for _ in range(FAST_RETRY.max_attempts):
        openai_server.enqueue(Reply.failure(500, "upstream exploded"))
    _, error = await parts_until_error(make_model(openai_server))
    assert type(error) is ProviderError
    assert error.retryable
    assert error.attempts == FAST_RETRY.max_attempts
    assert error.status_code == 500
    assert "HTTP 500" in error.message and "upstream exploded" in error.message
    assert len(openai_server.requests) == FAST_RETRY.max_attempts
    assert "\n" not in error.message


async def test_slower_than_timeout_is_model_timeout(make_model, openai_server):
    retry = RetryPolicy(max_attempts=2, base_delay=0.001)
    model = make_model(openai_server, name="slow-2000", timeout=0.2, retry=retry)
    started = time.monotonic()
    _, error = await parts_until_error(model)
    assert isinstance(error, ModelTimeout)
    assert error.attempts == 2
    assert time.monotonic() - started < 1.5


async def test_stall_mid_stream_is_model_timeout(make_model, openai_server):
    openai_server.enqueue(text="abcdef", chunk_size=2, stall=2.0, stall_after=2)
    model = make_model(openai_server, timeout=0.2)
    parts, error = await parts_until_error(model)
    assert isinstance(error, ModelTimeout)
    assert [p.text for p in parts] == ["ab"]
    assert error.attempts == 1  # a delta was out: retrying would duplicate it


async def test_unauthorized_is_not_retried_and_hides_the_key(make_model, openai_server):
    openai_server.enqueue(
        Reply.failure(401, f"Incorrect API key provided: {API_KEY}.", code="invalid_api_key")
    )
    _, error = await parts_until_error(make_model(openai_server))
    assert isinstance(error, AuthenticationError)
    assert (error.attempts, error.status_code) == (1, 401)
    assert len(openai_server.requests) == 1
    assert API_KEY not in str(error) and API_KEY[5:20] not in str(error)
    assert openai_server.requests[0].headers["authorization"] == f"Bearer {API_KEY}"


@pytest.mark.parametrize(
    "reply",
    [
        Reply.failure(500, f"internal error for key {API_KEY}"),
        Reply.failure(403, f"Authorization: Bearer {API_KEY} is not allowed"),
        Reply.failure(400, f"bad request with api_key={API_KEY}"),
    ],
    ids=["500", "403", "400"],
)
async def test_api_key_never_in_error_message(make_model, openai_server, reply):
    for _ in range(FAST_RETRY.max_attempts):
        openai_server.enqueue(reply)
    _, error = await parts_until_error(make_model(openai_server))
    assert API_KEY not in str(error)
    assert API_KEY not in repr(error.args)
    assert "[redacted]" in str(error)


async def test_context_length_is_bad_request(make_model, openai_server):
    openai_server.enqueue(
        Reply.failure(
            400,
            "This model's maximum context length is 8192 tokens. However, you requested 9000.",
            code="context_length_exceeded",
        )
    )
    _, error = await parts_until_error(make_model(openai_server))
    assert isinstance(error, BadRequestError)
    assert "context window" in error.message
    assert error.attempts == 1 and len(openai_server.requests) == 1


async def test_invalid_json_tool_arguments(make_model, openai_server):
    calls = [
        {"id": "call_ok", "name": "search", "arguments": {"q": "fine"}},
        {"id": "call_bad", "name": "lookup", "arguments": '{"q": "unterminated'},
    ]
    openai_server.enqueue(tool_calls=calls, chunk_size=5)
    response = await collect(make_model(openai_server), USER, TOOLS)
    good, bad = response.tool_calls
    assert (good.arguments, good.arguments_error) == ({"q": "fine"}, None)
    assert (bad.id, bad.name, bad.arguments) == ("call_bad", "lookup", {})
    assert "not valid JSON" in bad.arguments_error


async def test_connection_reset_mid_stream_is_not_retried(make_model, openai_server):
    openai_server.enqueue(text="abcdefgh", chunk_size=2, reset_after=3)
    openai_server.enqueue(text="never fetched")
    parts, error = await parts_until_error(make_model(openai_server))
    assert isinstance(error, ProviderError)
    assert [p.text for p in parts] == ["ab", "cd"]
    assert error.attempts == 1
    assert len(openai_server.requests) == 1


async def test_connection_reset_before_any_byte_is_retried(make_model, openai_server):
    openai_server.enqueue(Reply(reset_after=0), text="second try")
    response = await collect(make_model(openai_server), USER)
    assert response.content == "second try"
    assert len(openai_server.requests) == 2


async def test_truncated_stream_is_provider_error(make_model, openai_server):
    openai_server.enqueue(text="abcdefgh", chunk_size=2, truncate_after=3)
    parts, error = await parts_until_error(make_model(openai_server))
    assert isinstance(error, ProviderError)
    assert [p.text for p in parts] == ["ab", "cd"]
    assert error.attempts == 1


async def test_call_options_reach_the_server(make_model, openai_server):
    model = make_model(openai_server, extra={"seed": 7, "temperature": 0.9})
    await collect(model, USER, settings=ModelSettings(temperature=0.1))
    body = openai_server.requests[-1].body
    assert (body["seed"], body["temperature"]) == (7, 0.1)  # settings beat connector options


async def test_model_name_modes_of_the_server(make_model, openai_server):
    echo = await collect(make_model(openai_server, name="echo+chunks-2"), USER)
    assert echo.content == "hello there"
    called = await collect(make_model(openai_server, name="tools"), USER, TOOLS)
    assert [(c.name, c.arguments) for c in called.tool_calls] == [("search", {})]
    _, error = await parts_until_error(
        make_model(openai_server, name="fail-503", retry=RetryPolicy(max_attempts=1))
    )
    assert (type(error), error.status_code) == (ProviderError, 503)

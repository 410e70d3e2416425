"""The code above the transport (event parsing, unstreamed answers, error mapping, retries,
size limits) through the in-memory ``MockTransport``: no socket involved."""

from __future__ import annotations

import pytest

from agentcli.errors import BadRequestError, ProviderError, ResponseTooLarge
from agentcli.models.base import collect
from agentcli.models.mock_transport import MockRequest, MockResponse, MockTransport
from agentcli.models.openai_model import OpenAICompatModel
from agentcli.models.retry import RetryPolicy

USER = [{"role": "user", "content": "hi"}]
FAST = RetryPolicy(max_attempts=3, base_delay=0.0, jitter=0.0)


def delta(text: str, finish: str | None = None) -> dict:
    return {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": finish}]}


def model_with(handler, **options) -> tuple[OpenAICompatModel, MockTransport]:
    mock = MockTransport(handler)
    options.setdefault("retry", FAST)
    model = OpenAICompatModel(
        "m", api_base="http://mock.test/v1?api-version=7", api_key="k-1", transport=mock, **options
    )
    return model, mock


async def test_a_stream_is_assembled_and_the_request_is_what_the_server_gets():
    model, mock = model_with(lambda request: MockResponse.sse([delta("he"), delta("y", "stop")]))
    response = await collect(model, USER)
    assert (response.content, response.finish_reason) == ("hey", "stop")
    (request,) = mock.requests
    assert request.url == "http://mock.test/v1/chat/completions?api-version=7"
    assert request.headers["Authorization"] == "Bearer k-1"
    assert (request.json["model"], request.json["messages"], request.json["stream"]) == (
        "m",
        USER,
        True,
    )
    await model.aclose()
    assert mock.closed


async def test_an_async_handler_and_events_split_anywhere():
    body = MockResponse.sse([delta("a"), delta("b", "stop")]).body
    pieces = [byte for piece in body for byte in (piece[:5], piece[5:])]

    async def handler(request: MockRequest) -> MockResponse:
        return MockResponse(200, {"content-type": "text/event-stream"}, pieces)

    model, _ = model_with(handler)
    assert (await collect(model, USER)).content == "ab"


async def test_a_server_error_is_retried_then_served():
    answers = [
        MockResponse.json({"error": {"message": "busy"}}, 503),
        MockResponse.sse([delta("ok", "stop")]),
    ]
    model, mock = model_with(lambda request: answers.pop(0))
    assert (await collect(model, USER)).content == "ok"
    assert len(mock.requests) == 2


async def test_an_error_event_in_the_stream_is_the_error_it_names():
    event = {
        "error": {
            "message": "prompt too long: maximum context length",
            "code": "context_length_exceeded",
        }
    }
    model, mock = model_with(lambda request: MockResponse.sse([event]))
    with pytest.raises(BadRequestError, match="context window"):
        await collect(model, USER)
    assert len(mock.requests) == 1


async def test_a_whole_completion_is_read_as_one_chunk():
    completion = {
        "choices": [
            {"message": {"role": "assistant", "content": "whole"}, "finish_reason": "length"}
        ],
        "usage": {"prompt_tokens": 2, "completion_tokens": 1},
    }
    model, _ = model_with(lambda request: MockResponse.json(completion))
    response = await collect(model, USER)
    assert (response.content, response.finish_reason, response.usage.input_tokens) == (
        "whole",
        "length",
        2,
    )


async def test_an_html_page_says_what_came_back_and_is_final():
    page = MockResponse(200, {"Content-Type": "text/html; charset=utf-8"}, b"<html>login</html>")
    model, mock = model_with(lambda request: page)
    with pytest.raises(ProviderError) as info:
        await collect(model, USER)
    assert "answered HTTP 200 text/html, not a chat-completions stream" in info.value.message
    assert not info.value.retryable and len(mock.requests) == 1


async def test_a_line_past_max_response_bytes_is_cut():
    endless = MockResponse(
        200, {"content-type": "text/event-stream"}, [b"data: " + b"x" * 1000] * 50
    )
    model, _ = model_with(lambda request: endless, max_response_bytes=10_000)
    with pytest.raises(ResponseTooLarge, match="max_response_bytes"):
        await collect(model, USER)


async def test_a_handler_that_raises_is_a_broken_connection():
    def handler(request: MockRequest) -> MockResponse:
        raise ConnectionResetError(104, "Connection reset by peer")

    model, mock = model_with(handler)
    with pytest.raises(ProviderError) as info:
        await collect(model, USER)
    assert info.value.message == (
        "openai model 'm': connection failed: the connection broke (reset by the server)"
    )
    assert info.value.retryable and len(mock.requests) == FAST.max_attempts

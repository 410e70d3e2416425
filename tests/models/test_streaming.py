"""Chunk assembly and request building shared by the openai SDK and litellm models."""

from __future__ import annotations

import sys
import types

import pytest

from agentcli.errors import ProviderError
from agentcli.models.base import ModelSettings, TextDelta, ThinkingDelta, ToolCallDelta
from agentcli.models.pricing import Price, litellm_price
from agentcli.models.streaming import StreamAssembler, chat_request, token_cost


def chunk(delta=None, finish=None, usage=None, choices=True):
    data: dict = {"choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}]}
    if not choices:
        data["choices"] = []
    if usage is not None:
        data["usage"] = usage
    return data


def call(index, id=None, name=None, arguments=""):
    function = {"arguments": arguments}
    if name:
        function["name"] = name
    return {"index": index, "id": id, "function": function}


def feed_all(assembler, chunks):
    return [part for c in chunks for part in assembler.feed(c)]


@pytest.fixture(autouse=True)
def _no_litellm(monkeypatch):
    # Cost lookups depend on whether litellm is loaded; keep these tests independent of it.
    monkeypatch.delitem(sys.modules, "litellm", raising=False)


def test_text_thinking_and_usage():
    assembler = StreamAssembler("openai", "m")
    parts = feed_all(
        assembler,
        [
            chunk({"role": "assistant", "content": ""}),
            chunk({"reasoning_content": "hmm "}),
            chunk({"reasoning": "ok"}),
            chunk({"content": "Hel"}),
            chunk({"content": "lo"}),
            chunk(finish="stop"),
            chunk(choices=False, usage={"prompt_tokens": 3, "completion_tokens": 2}),
        ],
    )
    assert parts == [ThinkingDelta("hmm "), ThinkingDelta("ok"), TextDelta("Hel"), TextDelta("lo")]
    response = assembler.finish()
    assert (response.content, response.thinking, response.finish_reason) == (
        "Hello",
        "hmm ok",
        "stop",
    )
    assert (response.usage.input_tokens, response.usage.output_tokens) == (3, 2)
    assert (response.usage.provider, response.usage.model, response.usage.cost) == (
        "openai",
        "m",
        None,
    )


def test_interleaved_tool_calls_are_keyed_by_index():
    assembler = StreamAssembler("p", "m")
    parts = feed_all(
        assembler,
        [
            chunk({"tool_calls": [call(0, "c0", "a", '{"x"'), call(1, "c1", "b", "")]}),
            chunk({"tool_calls": [call(1, arguments='{"y": 2}')]}),
            chunk({"tool_calls": [call(0, arguments=": 1}")]}),
            chunk(finish="tool_calls"),
        ],
    )
    assert parts[0] == ToolCallDelta(index=0, id="c0", name="a", arguments='{"x"')
    assert [p.index for p in parts] == [0, 1, 1, 0]
    calls = assembler.finish().tool_calls
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        ("c0", "a", {"x": 1}),
        ("c1", "b", {"y": 2}),
    ]


def test_index_reused_with_a_new_id_is_a_new_call():
    assembler = StreamAssembler("p", "m")
    parts = feed_all(
        assembler,
        [
            chunk({"tool_calls": [call(0, "first", "a", "{}")]}),
            chunk({"tool_calls": [call(0, "second", "b", '{"k": "v"}')]}),
            chunk(finish="tool_calls"),
        ],
    )
    assert [p.index for p in parts] == [0, 1]
    assert [(c.id, c.arguments) for c in assembler.finish().tool_calls] == [
        ("first", {}),
        ("second", {"k": "v"}),
    ]


def test_argument_problems_and_missing_ids():
    assembler = StreamAssembler("p", "m")
    feed_all(
        assembler,
        [
            chunk({"tool_calls": [call(0, None, "empty", "")]}),
            chunk({"tool_calls": [call(1, "c1", "list", "[1, 2]")]}),
            chunk({"tool_calls": [call(2, "c2", "broken", '{"a": ')]}),
            chunk(finish="tool_calls"),
        ],
    )
    empty, listed, broken = assembler.finish().tool_calls
    assert empty.id.startswith("call_") and (empty.arguments, empty.arguments_error) == ({}, None)
    assert listed.arguments == {} and "not a JSON object" in listed.arguments_error
    assert broken.arguments == {} and "not valid JSON" in broken.arguments_error


@pytest.mark.parametrize(
    ("reason", "has_calls", "expected"),
    [
        ("stop", False, "stop"),
        ("stop", True, "tool_calls"),
        ("tool_calls", True, "tool_calls"),
        ("length", True, "length"),
        ("max_tokens", False, "length"),
        ("content_filter", False, "content_filter"),
        ("something_new", False, "stop"),
    ],
)
def test_finish_reasons(reason, has_calls, expected):
    assembler = StreamAssembler("p", "m")
    if has_calls:
        assembler.feed(chunk({"tool_calls": [call(0, "c", "t", "{}")]}))
    assembler.feed(chunk(finish=reason))
    assert assembler.finish().finish_reason == expected


def test_stream_without_finish_reason_is_a_provider_error():
    assembler = StreamAssembler("openai", "m")
    assembler.feed(chunk({"content": "partial"}))
    with pytest.raises(ProviderError, match="no finish reason") as caught:
        assembler.finish()
    assert caught.value.retryable


def test_sdk_objects_are_read_like_dicts():
    delta = types.SimpleNamespace(content="hi", tool_calls=None, reasoning_content=None)
    choice = types.SimpleNamespace(index=0, delta=delta, finish_reason="stop")
    assembler = StreamAssembler("p", "m")
    assert assembler.feed(types.SimpleNamespace(choices=[choice], usage=None)) == [TextDelta("hi")]
    assert assembler.finish().content == "hi"


def test_cost_from_the_connector_price_else_litellms_cost_map_without_importing_it():
    sys.modules.pop("litellm", None)
    gpt4o = token_cost("openai/gpt-4o", 1_000_000, 1_000_000)
    assert "litellm" not in sys.modules  # the map is read as data
    price = litellm_price("openai/gpt-4o")
    assert price is not None and price.source == "litellm"
    assert gpt4o == pytest.approx(price.input_per_mtok + price.output_per_mtok) and gpt4o > 0
    assert litellm_price("gpt-4o") == price  # the bare name is the same entry
    own = Price(1.0, 2.0)
    assert token_cost("openai/gpt-4o", 500_000, 250_000, own) == pytest.approx(1.0)
    assert token_cost("openai/gpt-4o", 0, 0, own) is None  # no usage reported: unknown
    assert token_cost("local/my-finetune", 10, 10) is None  # unknown, never wrong
    assert litellm_price("anthropic/gpt-4o") is None  # another provider's bare name


def test_a_model_the_cost_map_never_names_is_unpriced_without_parsing_the_map():
    from agentcli.models import pricing

    pricing.litellm_price.cache_clear()
    pricing._cost_map.cache_clear()
    assert litellm_price("openai/echo-local-bench") is None
    assert pricing._cost_map.cache_info().currsize == 0  # the text search sufficed
    assert litellm_price("openai/gpt-4o") is not None  # a named one parses the map
    assert pricing._cost_map.cache_info().currsize == 1


def test_chat_request_merges_options():
    settings = ModelSettings(
        temperature=0.1, timeout=3.0, tool_choice="required", extra={"seed": 1}
    )
    tools = [{"type": "function", "function": {"name": "t", "parameters": {}}}]
    request, timeout = chat_request(
        "m",
        [{"role": "user", "content": "x"}],
        tools,
        settings,
        {"temperature": 0.9, "top_p": 0.5},
        60.0,
    )
    assert timeout == 3.0
    assert request == {
        "model": "m",
        "messages": [{"role": "user", "content": "x"}],
        "stream": True,
        "stream_options": {"include_usage": True},
        "tools": tools,
        "temperature": 0.1,
        "top_p": 0.5,
        "tool_choice": "required",
        "seed": 1,
    }


def test_chat_request_without_tools_drops_tool_choice():
    settings = ModelSettings(tool_choice="auto")
    request, timeout = chat_request("m", [], [], settings, {"parallel_tool_calls": False}, 60.0)
    assert timeout == 60.0
    assert "tools" not in request and "tool_choice" not in request
    assert "parallel_tool_calls" not in request

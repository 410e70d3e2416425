"""Thinking levels and session ids as provider parameters, down to the request body."""

from __future__ import annotations

import pytest

from agentcli.models.base import ModelSettings, collect
from agentcli.models.litellm_model import LiteLLMModel
from agentcli.models.openai_model import OpenAICompatModel
from agentcli.models.reasoning import DEFAULT_BUDGETS, litellm_params, openai_params

USER = [{"role": "user", "content": "think"}]


@pytest.mark.parametrize(
    ("level", "effort"),
    [("minimal", "minimal"), ("low", "low"), ("medium", "medium"), ("high", "high"),
     ("xhigh", "high"), ("max", "high")],
)  # fmt: skip
def test_openai_effort_per_level(level: str, effort: str) -> None:
    assert openai_params(ModelSettings(thinking_level=level)) == {"reasoning_effort": effort}  # type: ignore[arg-type]


def test_off_and_no_level_send_nothing() -> None:
    assert openai_params(ModelSettings(thinking_level="off")) == {}
    assert openai_params(ModelSettings()) == {}
    assert litellm_params("anthropic", ModelSettings(thinking_level="off")) == {}


def test_anthropic_gets_a_thinking_budget_the_agents_or_the_default() -> None:
    assert litellm_params("anthropic", ModelSettings(thinking_level="low")) == {
        "thinking": {"type": "enabled", "budget_tokens": DEFAULT_BUDGETS["low"]}
    }
    custom = ModelSettings(thinking_level="low", thinking_budget=777)
    assert litellm_params("anthropic", custom) == {
        "thinking": {"type": "enabled", "budget_tokens": 777}
    }


def test_session_id_is_openais_prompt_cache_key_only() -> None:
    settings = ModelSettings(session_id="s-1", thinking_level="medium")
    assert openai_params(settings) == {"reasoning_effort": "medium", "prompt_cache_key": "s-1"}
    assert litellm_params("gemini", settings) == {"reasoning_effort": "medium"}


@pytest.mark.parametrize("transport", ["aiohttp", "sdk"])
async def test_the_openai_request_body_carries_effort_and_cache_key(openai_server, transport):
    model = OpenAICompatModel("m", api_base=openai_server.base_url, transport=transport)
    try:
        await collect(model, USER, settings=ModelSettings(thinking_level="high", session_id="s-9"))
    finally:
        await model.aclose()
    body = openai_server.requests[-1].body
    assert (body["reasoning_effort"], body["prompt_cache_key"]) == ("high", "s-9")


async def test_the_litellm_request_body_carries_the_effort(openai_server):
    model = LiteLLMModel("openai/m", api_base=openai_server.base_url)
    await collect(model, USER, settings=ModelSettings(thinking_level="minimal"))
    assert openai_server.requests[-1].body["reasoning_effort"] == "minimal"


@pytest.mark.parametrize("transport", ["aiohttp", "sdk"])
async def test_a_per_request_key_replaces_the_models_own(openai_server, transport):
    model = OpenAICompatModel(
        "m", api_base=openai_server.base_url, api_key="static", transport=transport
    )
    try:
        await collect(model, USER, settings=ModelSettings(api_key="token-1"))
        await collect(model, USER, settings=ModelSettings(api_key="token-2"))
        await collect(model, USER)
    finally:
        await model.aclose()
    sent = [r.headers["authorization"] for r in openai_server.requests]
    assert sent == ["Bearer token-1", "Bearer token-2", "Bearer static"]
    assert "token-3" not in repr(ModelSettings(api_key="token-3"))  # never printed

"""LiteLLMModel against the loopback server: the shared scenarios plus litellm specifics.

litellm is pointed at the server as ``openai/<name>`` with ``api_base``, so the real
litellm code path (its OpenAI provider, streaming wrapper and exception mapping) runs.
"""

from __future__ import annotations

import logging
import subprocess
import sys

import pytest

from agentcli.errors import BadRequestError
from agentcli.models.base import Model, collect
from agentcli.models.litellm_model import LiteLLMModel, import_litellm
from fixtures.openai_server import Reply
from tests.models.network_scenarios import (  # noqa: F401  (collected here for this model)
    API_KEY,
    FAST_RETRY,
    USER,
    parts_until_error,
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


@pytest.fixture
def make_model():
    """Build a LiteLLMModel that reaches a server as an OpenAI-compatible endpoint."""

    def make(server, name="m", **options):
        options.setdefault("api_key", API_KEY)
        options.setdefault("retry", FAST_RETRY)
        options.setdefault("timeout", 5.0)
        return LiteLLMModel(f"openai/{name}", api_base=server.base_url, **options)

    return make


def test_provider_and_name_come_from_the_model_string():
    model = LiteLLMModel("anthropic/claude-3-5-haiku-latest")
    assert isinstance(model, Model)
    assert (model.provider, model.name) == ("anthropic", "claude-3-5-haiku-latest")
    assert LiteLLMModel("gpt-4o").provider == "litellm"
    assert LiteLLMModel("ollama/llama3", provider="local").provider == "local"


def test_building_the_model_does_not_import_litellm():
    code = (
        "import sys; from agentcli.models.litellm_model import LiteLLMModel; "
        "LiteLLMModel('openai/gpt-4o'); print('litellm' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_litellm_is_imported_quietly():
    litellm = import_litellm()
    assert litellm.suppress_debug_info is True
    assert litellm.drop_params is True
    assert logging.getLogger("LiteLLM").level == logging.WARNING


async def test_cost_from_litellm_table_for_a_known_model(make_model, openai_server):
    openai_server.enqueue(text="priced", usage={"prompt_tokens": 1000, "completion_tokens": 100})
    response = await collect(make_model(openai_server, name="gpt-4o"), USER)
    assert response.usage.cost is not None and response.usage.cost > 0
    assert (response.usage.provider, response.usage.model) == ("openai", "gpt-4o")


async def test_content_filter_is_bad_request(make_model, openai_server):
    openai_server.enqueue(Reply.failure(400, "flagged by policy", code="content_filter"))
    _, error = await parts_until_error(make_model(openai_server))
    assert isinstance(error, BadRequestError)
    assert "content filter" in error.message
    assert error.attempts == 1


async def test_openai_compatible_server_needs_no_key(openai_server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    model = LiteLLMModel("openai/m", api_base=openai_server.base_url, retry=FAST_RETRY)
    assert (await collect(model, USER)).content == "hello there"
    assert openai_server.requests[-1].headers["authorization"] == "Bearer none"

"""Thinking levels and session ids as each provider's request parameters.

``ModelSettings.thinking_level`` (``off`` ... ``max``, seed 004) becomes:

==========================  =================================================================
OpenAI and compatible       ``reasoning_effort``: minimal / low / medium / high (``xhigh`` and
(aiohttp, SDK, litellm)     ``max`` ask for ``high``, the most the API takes)
Anthropic (litellm)         ``thinking={"type": "enabled", "budget_tokens": N}``: the
                            settings' ``thinking_budget``, else ``DEFAULT_BUDGETS[level]``
other litellm providers     ``reasoning_effort``, which litellm maps to the provider's own
==========================  =================================================================

``off`` (or no level) sends nothing, so a model that has no reasoning is not sent a
parameter it would reject. ``session_id`` becomes OpenAI's ``prompt_cache_key`` (requests
of one session share the provider's prompt cache); providers that do not cache by a key get
nothing.
"""

from __future__ import annotations

from typing import Any

from agentcli.models.base import ModelSettings, ThinkingLevel

__all__ = ["DEFAULT_BUDGETS", "OPENAI_EFFORT", "litellm_params", "openai_params"]

# tokens of thinking per level for providers that take a budget (pi-ai's defaults, extended)
DEFAULT_BUDGETS: dict[str, int] = {
    "minimal": 1024,
    "low": 2048,
    "medium": 8192,
    "high": 16384,
    "xhigh": 24576,
    "max": 32000,
}
OPENAI_EFFORT: dict[ThinkingLevel, str] = {
    "minimal": "minimal",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "high",
    "max": "high",
}
# providers litellm serves that take a thinking budget rather than an effort
_BUDGET_PROVIDERS = frozenset({"anthropic", "bedrock", "vertex_ai"})


def openai_params(settings: ModelSettings) -> dict[str, Any]:
    """The reasoning and cache parameters of an OpenAI-protocol request."""
    params: dict[str, Any] = {}
    level = settings.thinking_level
    if level is not None and level != "off":
        params["reasoning_effort"] = OPENAI_EFFORT[level]
    if settings.session_id:
        params["prompt_cache_key"] = settings.session_id
    return params


def litellm_params(provider: str, settings: ModelSettings) -> dict[str, Any]:
    """The reasoning and cache parameters of a litellm request to ``provider``."""
    level = settings.thinking_level
    if provider not in _BUDGET_PROVIDERS:
        params = openai_params(settings)
        if provider != "openai":
            params.pop("prompt_cache_key", None)  # only OpenAI caches by a key
        return params
    if level is None or level == "off":
        return {}
    budget = settings.thinking_budget or DEFAULT_BUDGETS[level]
    return {"thinking": {"type": "enabled", "budget_tokens": budget}}

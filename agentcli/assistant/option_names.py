"""The call options ``package.yao``'s ``options`` is expected to hold, so ``agent list
--check`` can warn about a misspelt one (``temprature``): any key is passed to the provider
as is, and a typo would otherwise be silently ignored or refused only at the first call.

The names are the OpenAI chat-completion parameters and the common ones of the providers
litellm serves; a key that is none of them is reported, with a "did you mean" when it is
close to one.
"""

from __future__ import annotations

import difflib
import re

from agentcli.assistant.package import AssistantPackage

__all__ = ["KNOWN_OPTIONS", "option_warnings"]

KNOWN_OPTIONS = frozenset(
    {
        "temperature",
        "top_p",
        "top_k",
        "min_p",
        "max_tokens",
        "max_completion_tokens",
        "presence_penalty",
        "frequency_penalty",
        "repetition_penalty",
        "seed",
        "stop",
        "n",
        "logit_bias",
        "logprobs",
        "top_logprobs",
        "response_format",
        "tool_choice",
        "parallel_tool_calls",
        "reasoning_effort",
        "verbosity",
        "thinking",
        "user",
        "service_tier",
        "store",
        "metadata",
        "modalities",
        "audio",
        "prediction",
        "web_search_options",
        "safety_identifier",
        "prompt_cache_key",
        "extra_headers",
        "extra_body",
        "num_ctx",
        "keep_alive",
    }
)


def option_warnings(package: AssistantPackage) -> list[str]:
    """A warning for each ``options`` key that is not a known call option."""
    options = package.raw.get("options")
    if not isinstance(options, dict):
        return []
    text = package.file.read_text(encoding="utf-8", errors="replace")
    warnings = []
    for key in options:
        if key in KNOWN_OPTIONS:
            continue
        close = difflib.get_close_matches(key, sorted(KNOWN_OPTIONS), n=1, cutoff=0.75)
        found = [m.start() for m in re.finditer(rf'"{re.escape(key)}"\s*:', text)]
        line = text.count("\n", 0, found[0]) + 1 if len(found) == 1 else None
        where = f"{package.file}:{line}" if line is not None else str(package.file)
        guess = f" (did you mean '{close[0]}'?)" if close else ""
        warnings.append(
            f"{where}: unknown option 'options.{key}'{guess}; it is passed to the provider as is"
        )
    return warnings

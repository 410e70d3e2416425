"""The automatic search before the model call: its hits reach the model request as one
system message with citation markers (seen by the loopback OpenAI server), the trace
records it, and each way of turning it off works; ``uses.fetch: "mcp:<server>"`` sends
``ctx.search.fetch`` to that server's fetch tool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.assistant.session import RequestOptions
from agentcli.errors import ConfigError
from fixtures.search_servers import SearchServer
from tests.assistant.search.conftest import FAQ, package


@pytest.fixture
def loop(tmp_path: Path, openai_server, no_proxies: None):
    (tmp_path / "connectors.yml").write_text(
        f"loop: {{model: openai/echo, api_base: '{openai_server.base_url}', api_key: none}}\n"
    )
    return openai_server


def _helpdesk(assistants: Path, extra: dict | None = None, files: dict | None = None) -> None:
    data = {
        "name": "Help",
        "connector": "loop",
        "kb": {"collections": ["faq"]},
        "search": {"kb": {"max_results": 2}},
        **(extra or {}),
    }
    package(assistants, "help", json.dumps(data), {**FAQ, **(files or {})})


def _system(server) -> list[str]:
    messages = server.requests[-1].body["messages"]
    return [m["content"] for m in messages if m["role"] == "system"]


async def test_hits_reach_the_model_with_citations_and_the_trace_records_them(
    assistants: Path, make_registry, loop
) -> None:
    _helpdesk(
        assistants, files={"prompts.yml": "- role: system\n  content: You are the helpdesk.\n"}
    )
    reply = await make_registry().get("help").respond("How do I reset my password?")
    assert reply.error is None
    prompts, found = _system(loop)
    assert prompts == "You are the helpdesk."  # the package's prompts come first
    assert found.startswith("Search results for 'How do I reset my password?':\n\n[1] ")
    assert "[1] Resetting your password (kb://faq/password.md)\n# Resetting your password" in found
    assert "\n[2] " in found and "\n[3] " not in found  # search.kb.max_results
    assert found.endswith(
        "Cite each result you use with its marker, e.g. [1], right after what it supports; "
        "do not cite results you did not use."
    )
    (node,) = [n for n in reply.trace if n["type"] == "search"]
    assert node["label"] == "Search kb" and node["status"] == "completed"
    assert node["input"]["query"] == "How do I reset my password?"
    assert node["output"]["items"][0] == {
        "citation_id": "1",
        "title": "Resetting your password",
        "url": "kb://faq/password.md",
        "score": pytest.approx(node["output"]["items"][0]["score"]),
    }


async def test_citation_format_and_prompt_come_from_the_package(
    assistants: Path, make_registry, loop
) -> None:
    _helpdesk(
        assistants,
        {"search": {"citation": {"format": "(ref {index})", "auto_inject_prompt": False}}},
    )
    await make_registry().get("help").respond("billing card")
    (found,) = _system(loop)
    assert "\n(ref 1) Billing (kb://faq/billing.md)\n" in found
    assert "Cite" not in found
    _helpdesk(assistants, {"search": {"citation": {"custom_prompt": "Quote like {example}."}}})
    await make_registry().get("help").respond("billing card")
    assert _system(loop)[0].endswith("\nQuote like [1].")


@pytest.mark.parametrize(
    ("extra", "hook", "options"),
    [
        ({"uses": {"search": "disabled"}}, None, {}),
        ({}, "return {'uses': {'search': 'disabled'}}", {}),
        ({}, "return {'search': False}", {}),
        ({}, None, {"skip": {"search": True}}),
    ],
    ids=["package-uses", "create-uses", "create-search-false", "skip-search"],
)
async def test_each_way_of_turning_it_off(
    assistants: Path, make_registry, loop, extra, hook, options
) -> None:
    files = {"src/index.py": f"def Create(ctx, messages):\n    {hook}\n"} if hook else {}
    _helpdesk(assistants, extra, files)
    reply = await make_registry().get("help").respond("reset password", RequestOptions(**options))
    assert _system(loop) == []
    assert [n for n in reply.trace if n["type"] == "search"] == []
    assert not any("ignored" in log["message"] for n in reply.trace for log in n["logs"])


async def test_a_hook_can_force_it_and_give_options_per_kind(
    assistants: Path, make_registry, loop
) -> None:
    hook = "def Create(ctx, messages):\n    return {'force_uses': True, 'search': {'kb': {'limit': 1}}}\n"
    _helpdesk(assistants, files={"src/index.py": hook})
    options = RequestOptions(skip={"search": True})
    await make_registry().get("help").respond("reset password", options)
    (found,) = _system(loop)
    assert "[1] Resetting your password" in found and "[2]" not in found


async def test_a_failing_source_is_a_warning_and_a_missing_key_stops_the_request(
    assistants: Path, make_registry, loop
) -> None:
    with SearchServer("tavily", api_key="k") as fake:
        web = {"web": {"provider": "tavily", "base_url": fake.base_url}}
        _helpdesk(assistants, {"search": web})
        fake.fail(500)
        reply = await make_registry({"TAVILY_API_KEY": "k"}).get("help").respond("reset password")
        assert reply.error is None
        (found,) = _system(loop)
        assert "kb://faq/password.md" in found  # the kb half still answered
        logs = [log["message"] for n in reply.trace for log in n["logs"]]
        assert any(
            m.startswith("search web failed, the model is called without it: ") for m in logs
        )

        calls = len(loop.requests)
        with pytest.raises(ConfigError, match="TAVILY_API_KEY is not set"):
            await make_registry({}).get("help").respond("reset password")
        assert len(loop.requests) == calls and fake.requests[-1:] == fake.requests[:1]


async def test_a_python_function_model_sees_the_injected_results(
    assistants: Path, make_registry
) -> None:
    model = (
        "def answer(messages, tools, settings):\n"
        "    found = [m['content'] for m in messages if m['role'] == 'system']\n"
        "    return 'cited: ' + ('[1]' if found and '[1] ' in found[-1] else 'nothing')\n"
    )
    package(
        assistants,
        "fn",
        json.dumps({"name": "F", "connector": "python:model:answer", "kb": ["faq"]}),
        {**FAQ, "src/model.py": model},
    )
    reply = await make_registry().get("fn").respond("shipping free")
    assert reply.text == "cited: [1]"


async def test_uses_fetch_routes_to_the_named_mcp_server(assistants: Path, make_registry) -> None:
    files = {
        "mcps/fetcher.mcp.yao": '{"transport": "process", "tools": {"fetch": "fetcher.Fetch"}}',
        "src/fetcher.py": "def Fetch(args):\n    return 'page at ' + args['url']\n",
        "src/index.py": "def Next(ctx, payload):\n"
        "    return {'data': ctx.search.Fetch('https://example.com/a')}\n",
    }
    package(
        assistants,
        "f",
        json.dumps({"name": "F", "connector": "echo", "uses": {"fetch": "mcp:fetcher"}}),
        files,
    )
    reply = await make_registry().get("f").respond("go")
    assert reply.next == {
        "url": "https://example.com/a",
        "content": "page at https://example.com/a",
    }
    (node,) = [n for n in reply.trace if n["type"] == "fetch"]
    assert node["output"] == {"via": "mcp:fetcher", "characters": 29}

    package(
        assistants,
        "f",
        json.dumps({"name": "F", "connector": "echo", "uses": {"fetch": "disabled"}}),
        files,
    )
    off = (await make_registry().get("f").respond("go")).next
    assert off == {"url": "https://example.com/a", "error": "assistant 'f' has uses.fetch disabled"}

"""Conversation.send end to end: connectors, prompts, presets, hooks, tools, history, abort."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from agentcli.assistant.memory import MemoryStore
from agentcli.assistant.session import AssistantRegistry, Reply, RequestOptions
from agentcli.errors import ConfigError
from agentcli.runtime.storage import JsonlStorage

# A python: model that answers with what it was given, so tests can see the request.
SPY = """
import json

def reply(messages, tools, settings):
    return json.dumps({
        "messages": messages,
        "tools": [t["function"]["name"] for t in tools],
        "settings": settings,
    })
"""


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def assistants(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AGENT_CONNECTOR", raising=False)
    monkeypatch.delenv("AGENT_ROOT", raising=False)
    return tmp_path / "assistants"


@pytest.fixture
async def registry(assistants: Path, tmp_path: Path):
    registry = AssistantRegistry(
        assistants, cwd=tmp_path, memory_store=MemoryStore(tmp_path / "memory.sqlite3")
    )
    yield registry
    await registry.aclose()


def spy_package(root: Path, name: str = "spy", **files: str) -> Path:
    package = {"package.yao": '{"name": "Spy", "connector": "python:spy:reply"}', "src/spy.py": SPY}
    package.update({key.replace("__", "/"): value for key, value in files.items()})
    return write(root / name, package)


def seen(reply: Reply) -> dict[str, Any]:
    """What the spy model received."""
    return json.loads(reply.text)


# -- connectors -------------------------------------------------------------------------

SAY = "rules:\n  - say: {word}\n"


def connector_package(root: Path, hook: str = "") -> None:
    files = {
        "package.yao": '{"name": "C", "connector": "scripted:package.yml"}',
        **{f"{w}.yml": SAY.format(word=w) for w in ("package", "option", "hook", "env")},
    }
    if hook:
        files["src/index.py"] = hook
    write(root / "c", files)


async def test_connector_order_hook_then_option_then_package(registry, assistants) -> None:
    connector_package(
        assistants,
        "def Create(ctx, messages):\n"
        "    if ctx.metadata.get('use_hook'):\n"
        "        return {'connector': 'scripted:hook.yml'}\n",
    )
    assistant = registry.get("c")
    assert (await assistant.respond("hi")).text == "package"
    option = RequestOptions(connector="scripted:option.yml")
    reply = await assistant.respond("hi", option)
    assert (reply.text, reply.connector) == ("option", "scripted:option.yml")
    both = RequestOptions(connector="scripted:option.yml", metadata={"use_hook": True})
    assert (await assistant.respond("hi", both)).text == "hook"


async def test_agent_connector_env_is_the_last_resort(assistants, tmp_path) -> None:
    write(
        assistants / "bare", {"package.yao": '{"name": "Bare"}', "env.yml": SAY.format(word="env")}
    )
    registry = AssistantRegistry(
        assistants, cwd=tmp_path, env={"AGENT_CONNECTOR": "scripted:env.yml"}
    )
    try:
        assert (await registry.get("bare").respond("hi")).text == "env"
    finally:
        await registry.aclose()


async def test_missing_connector_is_a_config_error_with_a_hint(registry, assistants) -> None:
    write(assistants / "bare", {"package.yao": '{"name": "Bare"}'})
    conversation = registry.get("bare").conversation()
    with pytest.raises(ConfigError, match="'bare' has no connector") as caught:
        await conversation.send("hi")
    assert "AGENT_CONNECTOR" in caught.value.hint
    with pytest.raises(ConfigError):
        _ = conversation.connector


# -- prompts ----------------------------------------------------------------------------


async def test_prompts_are_prepended_with_ctx_variables_and_never_stored(
    registry, assistants
) -> None:
    spy_package(
        assistants,
        **{
            "prompts.yml": "- role: system\n  content: >-\n"
            "    I am $CTX.ASSISTANT_NAME ($CTX.ASSISTANT_ID) for $CTX.USER_ID/$CTX.TEAM_ID"
            " in $CTX.LOCALE, chat $CTX.CHAT_ID, tier $CTX.tier\n"
        },
    )
    options = RequestOptions(
        user_id="u1", team_id="t1", locale="zh-cn", chat_id="c9", metadata={"tier": "gold"}
    )
    conversation = registry.get("spy").conversation(options)
    messages = seen(await conversation.send("hello"))["messages"]
    assert messages[0] == {
        "role": "system",
        "content": "I am Spy (spy) for u1/t1 in zh-cn, chat c9, tier gold",
    }
    assert messages[1] == {"role": "user", "content": "hello"}
    assert conversation.history[0] == {"role": "user", "content": "hello"}
    assert all(m["role"] != "system" for m in conversation.history)
    # the prompts reach the model through the runtime's plugin mechanism
    assert [plugin.name for plugin in conversation.agent.plugins] == ["package"]


async def test_localized_name_reaches_the_prompt(registry, assistants) -> None:
    spy_package(
        assistants,
        **{
            "package.yao": '{"name": "{{ name }}", "connector": "python:spy:reply"}',
            "locales__en-us.yml": "name: Helper\n",
            "locales__zh-cn.yml": "name: 助手\n",
            "prompts.yml": "- role: system\n  content: I am $CTX.ASSISTANT_NAME\n",
        },
    )
    reply = await registry.get("spy").respond("hi", RequestOptions(locale="zh-cn"))
    assert seen(reply)["messages"][0]["content"] == "I am 助手"


PRESET_HOOK = """
def Create(ctx, messages):
    preset = ctx.metadata.get("hook_preset")
    return {"prompt_preset": preset} if preset else None
"""


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (RequestOptions(), "default"),
        (RequestOptions(metadata={"__prompt_preset": "task"}), "task"),
        (RequestOptions(mode="task"), "task"),
        (RequestOptions(metadata={"__prompt_preset": "task", "hook_preset": "chat"}), "chat"),
    ],
)
async def test_preset_selection(registry, assistants, options, expected) -> None:
    spy_package(
        assistants,
        **{
            "prompts.yml": "- role: system\n  content: default\n",
            "prompts__task.yml": "- role: system\n  content: task\n",
            "prompts__chat.yml": "- role: system\n  content: chat\n",
            "src__index.py": PRESET_HOOK,
        },
    )
    reply = await registry.get("spy").respond("hi", options)
    assert seen(reply)["messages"][0]["content"] == expected


async def test_prompts_are_read_once_per_selection_for_the_run(registry, assistants) -> None:
    package = spy_package(
        assistants,
        **{
            "prompts.yml": "- role: system\n  content: default\n",
            "prompts__task.yml": "- role: system\n  content: task\n",
            "src__index.py": PRESET_HOOK,
        },
    )
    spy = registry.get("spy")
    first = [
        seen(await spy.respond("hi", options))["messages"][0]["content"]
        for options in (
            RequestOptions(),
            RequestOptions(mode="task"),
            RequestOptions(metadata={"hook_preset": "task"}),
            RequestOptions(metadata={"__disable_global_prompts": "yes"}),
        )
    ]
    assert first == ["default", "task", "task", "default"]
    (package / "prompts.yml").write_text("- role: system\n  content: edited\n")
    again = await spy.respond("hi", RequestOptions())
    assert seen(again)["messages"][0]["content"] == "default"  # as loaded for this run
    fresh = await type(registry)(registry.root).get("spy").respond("hi", RequestOptions())
    assert seen(fresh)["messages"][0]["content"] == "edited"  # the next run reads the edit


async def test_unknown_preset_falls_back_to_the_default_prompts_with_a_warning(
    registry, assistants
) -> None:
    # Yao's behaviour (issue 18): a missing preset is not an error for the request
    spy_package(
        assistants,
        **{"src__index.py": PRESET_HOOK, "prompts.yml": "- role: system\n  content: default\n"},
    )
    options = RequestOptions(metadata={"hook_preset": "nope"})
    reply = await registry.get("spy").respond("hi", options)
    assert seen(reply)["messages"][0]["content"] == "default"
    logs = [log["message"] for node in reply.trace for log in node["logs"]]
    assert any("prompt preset 'nope'" in m and "default prompts are used" in m for m in logs)


async def test_create_messages_replace_what_the_model_sees_not_the_history(
    registry, assistants
) -> None:
    spy_package(
        assistants,
        **{
            "src__index.py": "def Create(ctx, messages):\n"
            "    return {'messages': [{'role': 'system', 'content': 'be brief'}, *messages],"
            " 'temperature': 0.1, 'max_tokens': 7}\n"
        },
    )
    conversation = registry.get("spy").conversation()
    first = seen(await conversation.send("one"))
    assert first["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "one"},
    ]
    assert first["settings"] == {"temperature": 0.1, "max_tokens": 7}
    second = seen(await conversation.send("two"))
    assert [m["role"] for m in second["messages"]] == ["system", "user", "assistant", "user"]
    assert [m["role"] for m in conversation.history] == ["user", "assistant", "user", "assistant"]


# -- hooks and output -------------------------------------------------------------------

NEXT_HOOK = """
def Next(ctx, payload):
    tools = payload["tools"]
    return {"data": {"said": payload["completion"]["content"],
                     "tools": [(t["server"], t["tool"], t["result"]) for t in tools],
                     "tier": ctx.metadata.get("tier")}}
"""

CALC = {
    "mcps/calc.mcp.yao": '{"transport": "process", "tools": {"add": "calc.Add"}}',
    "src/calc.py": "def Add(args, ctx):\n"
    "    return {'sum': args['a'] + args['b'], 'user': ctx.user_id}\n",
    "scripted.yml": "rules:\n"
    "  - when: {user: add}\n    call: {name: add, arguments: {a: 2, b: 3}}\n"
    "  - when: {tool_result: add}\n    say: 'sum {{ result.sum }}'\n"
    "  - say: plain\n",
}


async def test_next_data_becomes_the_output_and_tools_name_server_and_tool(
    registry, assistants
) -> None:
    write(
        assistants / "calc",
        {"package.yao": '{"name": "Calc", "connector": "scripted"}', "src/index.py": NEXT_HOOK}
        | CALC,
    )
    options = RequestOptions(user_id="ada", metadata={"tier": "gold"})
    reply = await registry.get("calc").respond("add please", options)
    assert reply.status == "done"
    assert reply.text == "sum 5"
    assert (
        reply.output
        == reply.next
        == {
            "said": "sum 5",
            "tools": [("calc", "add", {"sum": 5, "user": "ada"})],
            "tier": "gold",
        }
    )
    (activity,) = reply.tool_calls
    assert (activity.server, activity.tool, activity.arguments) == ("calc", "add", {"a": 2, "b": 3})
    assert activity.error is None
    json.dumps(reply.to_dict())  # JSON-ready


async def test_without_next_data_the_output_is_the_text(registry, assistants) -> None:
    write(assistants / "calc", {"package.yao": '{"name": "Calc", "connector": "scripted"}'} | CALC)
    reply = await registry.get("calc").respond("hello")
    assert (reply.output, reply.next) == ("plain", None)


async def test_next_delegate_answers_with_the_other_assistant(registry, assistants) -> None:
    write(assistants / "b", {"package.yao": '{"name": "B", "connector": "echo"}'})
    write(
        assistants / "a",
        {
            "package.yao": '{"name": "A", "connector": "scripted"}',
            "scripted.yml": "rules:\n  - say: transfer me\n",
            "src/index.py": "def Next(ctx, payload):\n"
            "    ctx.send('handing over')\n"
            "    if 'transfer' in payload['completion']['content']:\n"
            "        return {'delegate': {'agent_id': 'b', 'messages': [{'role': 'user', 'content': 'from a'}]}}\n",
        },
    )
    conversation = registry.get("a").conversation()
    reply = await conversation.send("hi")
    assert (reply.assistant_id, reply.text) == ("b", "from a")
    assert [m["props"]["content"] for m in reply.sent] == ["handing over"]
    # the delegating chat remembers its own turn and the delegate's answer
    assert conversation.history[-1] == {"role": "assistant", "content": "from a"}


async def test_case_metadata_reaches_hooks_and_tools(registry, assistants) -> None:
    write(
        assistants / "m",
        {
            "package.yao": '{"name": "M", "connector": "scripted"}',
            "scripted.yml": "rules:\n  - when: {user: go}\n    call: {name: peek}\n"
            "  - when: {tool_result: peek}\n    say: '{{ result }}'\n",
            "mcps/t.mcp.yao": '{"transport": "process", "tools": {"peek": "t.Peek"}}',
            "src/t.py": "def Peek(args, ctx):\n    return ctx.metadata['scenario']\n",
            "src/index.py": "def Create(ctx, messages, options):\n"
            "    ctx.send(ctx.metadata['scenario'] + '/' + options['metadata']['scenario'])\n",
        },
    )
    reply = await registry.get("m").respond("go", RequestOptions(metadata={"scenario": "filter"}))
    assert reply.text == "filter"
    assert reply.sent[0]["props"]["content"] == "filter/filter"


async def test_on_event_and_on_output_listeners(registry, assistants) -> None:
    write(
        assistants / "e",
        {
            "package.yao": '{"name": "E", "connector": "echo"}',
            "src/index.py": "def Create(ctx, messages):\n    ctx.send('note')\n",
        },
    )
    events: list[str] = []
    outputs: list[str] = []
    options = RequestOptions(
        on_event=lambda e: events.append(e.type),
        on_output=lambda m: outputs.append(m.props["content"]),
    )
    await registry.get("e").respond("hey", options)
    assert outputs == ["note"]
    assert events[0] == "agent_start" and "message_update" in events and "turn_end" in events


# -- history, sessions, abort -----------------------------------------------------------


async def test_history_is_kept_across_sends_and_reset_forgets_it(registry, assistants) -> None:
    spy_package(assistants)
    conversation = registry.get("spy").conversation()
    await conversation.send("one")
    second = seen(await conversation.send("two"))
    assert [m.get("content") for m in second["messages"] if m["role"] == "user"] == ["one", "two"]
    conversation.reset()
    third = seen(await conversation.send("three"))
    assert [m["content"] for m in third["messages"]] == ["three"]


async def test_skip_history_sends_only_the_input(registry, assistants) -> None:
    spy_package(assistants)
    conversation = registry.get("spy").conversation(RequestOptions(skip={"history": True}))
    await conversation.send("one")
    messages = seen(await conversation.send(["two", "three"]))["messages"]
    assert [m["content"] for m in messages] == ["two", "three"]


async def test_a_jsonl_storage_resumes_the_conversation(registry, assistants, tmp_path) -> None:
    spy_package(assistants)
    log = tmp_path / "chat.jsonl"
    first_log, resumed_log = JsonlStorage(log), JsonlStorage(log)
    try:
        first = registry.get("spy").conversation(storage=first_log)
        await first.send("remember me")
        resumed = registry.get("spy").conversation(storage=resumed_log)
        assert resumed.history[0] == {"role": "user", "content": "remember me"}
        messages = seen(await resumed.send("again"))["messages"]
        assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    finally:
        first_log.close()
        resumed_log.close()


SLOW = {
    "mcps/s.mcp.yao": '{"transport": "process", "tools": {"slow": "s.Slow"}}',
    "src/s.py": "import asyncio\n\nasync def Slow(args):\n    await asyncio.sleep(30)\n",
    "scripted.yml": "rules:\n  - when: {user: slow}\n    call: {name: slow}\n  - say: done\n",
}


async def test_abort_during_a_tool_ends_the_turn_and_skips_next(registry, assistants) -> None:
    write(
        assistants / "s",
        {
            "package.yao": '{"name": "S", "connector": "scripted"}',
            "src/index.py": "def Next(ctx, payload):\n    return {'data': 'next ran'}\n",
        }
        | SLOW,
    )
    started = asyncio.Event()
    options = RequestOptions(
        on_event=lambda e: started.set() if e.type == "tool_execution_start" else None
    )
    conversation = registry.get("s").conversation(options)
    assert conversation.abort() is False  # idle
    task = asyncio.create_task(conversation.send("slow please"))
    await asyncio.wait_for(started.wait(), 5)
    assert conversation.is_busy and conversation.abort() is True
    reply = await asyncio.wait_for(task, 5)
    assert (reply.status, reply.output) == ("aborted", "")
    assert reply.tool_calls[0].error == "aborted before the tool finished"
    # the chat goes on after an abort
    assert (await conversation.send("hello")).output == "next ran"


async def test_abort_during_a_hook_cancels_the_request(registry, assistants) -> None:
    write(
        assistants / "h",
        {
            "package.yao": '{"name": "H", "connector": "echo"}',
            "src/index.py": "import asyncio\n\nasync def Create(ctx, messages):\n"
            "    await asyncio.sleep(30)\n",
        },
    )
    conversation = registry.get("h").conversation()
    task = asyncio.create_task(conversation.send("hi"))
    await asyncio.sleep(0.05)
    assert conversation.abort() is True
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not conversation.is_busy


async def test_registry_ask_inherits_identity_and_merges_metadata(registry, assistants) -> None:
    write(
        assistants / "who",
        {
            "package.yao": '{"name": "Who", "connector": "echo"}',
            "src/index.py": "def Next(ctx, payload):\n"
            "    return {'data': [ctx.user_id, ctx.locale, ctx.metadata]}\n",
        },
    )
    write(
        assistants / "parent",
        {
            "package.yao": '{"name": "P", "connector": "echo"}',
            "src/index.py": "def Create(ctx, messages):\n"
            "    r = ctx.agent.call('who', 'x', {'metadata': {'extra': 1}})\n"
            "    ctx.send(repr(r['content']))\n",
        },
    )
    options = RequestOptions(user_id="u7", locale="fr", metadata={"case": "c"})
    reply = await registry.get("parent").respond("go", options)
    assert reply.sent[0]["props"]["content"] == "['u7', 'fr', {'case': 'c', 'extra': 1}]"


async def test_registry_caches_assistants_and_models(registry, assistants) -> None:
    spy_package(assistants)
    assert registry.get("spy") is registry.get("spy")
    package = registry.get("spy").package
    assert registry.model("echo", package=package) is registry.model("echo", package=package)


async def test_create_picks_tool_servers_and_disables_global_prompts(registry, assistants) -> None:
    write(assistants, {"prompts.yml": "- role: system\n  content: global rules\n"})
    spy_package(
        assistants,
        **{
            "package.yao": '{"name": "Spy", "connector": "python:spy:reply",'
            ' "mcp": {"servers": ["a"]}}',
            "prompts.yml": "- role: system\n  content: local rules\n",
            "mcps__a.mcp.yao": '{"transport": "process", "tools": {"one": "t.One"}}',
            "mcps__b.mcp.yao": '{"transport": "process", "tools": {"two": "t.Two"}}',
            "src__t.py": "def One(args):\n    return 1\n\ndef Two(args):\n    return 2\n",
            "src__index.py": "def Create(ctx, messages):\n"
            "    if ctx.metadata.get('alone'):\n"
            "        return {'mcp_servers': [{'server_id': 'b', 'tools': ['two']}],"
            " 'disable_global_prompts': True}\n",
        },
    )
    assistant = registry.get("spy")
    default = seen(await assistant.respond("hi"))
    assert default["tools"] == ["a__one"]
    assert [m["content"] for m in default["messages"][:2]] == ["global rules", "local rules"]
    alone = seen(await assistant.respond("hi", RequestOptions(metadata={"alone": True})))
    assert alone["tools"] == ["b__two"]
    assert alone["messages"][0]["content"] == "local rules"


async def test_registry_gives_each_network_connector_one_adaptive_limit(tmp_path):
    from agentcli.assistant.session import AssistantRegistry

    (tmp_path / "connectors.yml").write_text(
        "loop: {model: openai/m, api_base: 'http://127.0.0.1:9/v1', api_key: none}\n"
    )
    registry = AssistantRegistry(None, cwd=tmp_path, max_concurrency=12)
    first = registry.model("loop")
    assert first.limiter is not None and first.limiter.ceiling == 12
    assert registry.model("loop") is first
    assert registry.model("echo") is not first  # offline models have no limiter
    await registry.aclose()
    assert first._client is None


async def test_uses_and_next_metadata_are_visible_in_the_trace(registry, assistants) -> None:
    spy_package(
        assistants,
        **{
            "src__index.py": "def Create(ctx, messages):\n    return {'uses': {'vision': 'v'}}\n"
            "def Next(ctx, payload):\n    return {'metadata': {'why': 'debug'}}\n"
        },
    )
    reply = await registry.get("spy").respond("hi")
    logs = [log["message"] for node in reply.trace for log in node["logs"]]
    assert any("Create returned uses" in m and "only search and fetch" in m for m in logs)
    assert any(
        node["label"] == "Next metadata" and node["input"] == {"why": "debug"}
        for node in reply.trace
    )


async def test_runtime_messages_sent_keep_their_tool_calls_and_names(registry, assistants) -> None:
    from agentcli.runtime.messages import Message
    from agentcli.runtime.tools import ToolCall

    spy_package(assistants)
    call = ToolCall(id="c1", name="lookup", arguments={"q": "x"})
    reply = await registry.get("spy").respond(
        [
            Message(role="user", content="find x"),
            Message(role="assistant", content="", tool_calls=[call]),
            Message(role="tool", content="found", tool_call_id="c1", name="lookup"),
            "and then?",
        ]
    )
    sent = seen(reply)["messages"]
    assert sent[1]["tool_calls"][0]["function"]["name"] == "lookup"
    assert (sent[2]["role"], sent[2]["tool_call_id"], sent[2]["name"]) == ("tool", "c1", "lookup")
    assert sent[3] == {"role": "user", "content": "and then?"}

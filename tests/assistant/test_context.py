"""The hook ``ctx``: memory scopes, trace, output messages, agent / llm / mcp calls."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.assistant.context import Context
from agentcli.assistant.memory import MemoryStore
from agentcli.assistant.session import AssistantRegistry, RequestOptions
from agentcli.errors import HookError, ToolError


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


TOOLS = {
    "mcps/kit.mcp.yao": '{"transport": "process", "tools": {"add": "kit.Add", "fail": "kit.Fail",'
    ' "whoami": "kit.WhoAmI"}}',
    "mcps/mapping/kit/schemes/add.in.yao": '{"type": "object", "properties": {"a": {"type":'
    ' "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}',
    "src/kit.py": "def Add(args):\n    return {'sum': args['a'] + args['b']}\n\n"
    "def Fail(args):\n    raise RuntimeError('nope')\n\n"
    "def WhoAmI(args, ctx):\n"
    "    ctx.memory.user.incr('tool_calls')\n"
    "    return {'user': ctx.user_id, 'chat': ctx.chat_id}\n",
}


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    root = tmp_path / "assistants"
    write(root / "kit", {"package.yao": '{"name": "Kit", "connector": "echo"}', **TOOLS})
    write(root / "upper", {"package.yao": '{"name": "Upper", "connector": "python:up:reply"}',
                           "src/up.py": "def reply(messages, tools, settings):\n"
                           "    return messages[-1]['content'].upper()\n"})  # fmt: skip
    return root


@pytest.fixture
async def registry(root: Path, tmp_path: Path):
    registry = AssistantRegistry(
        root, cwd=tmp_path, memory_store=MemoryStore(tmp_path / "memory.sqlite3")
    )
    yield registry
    await registry.aclose()


def with_hook(root: Path, index: str, name: str = "h") -> None:
    write(
        root / name,
        {"package.yao": '{"name": "H", "connector": "echo"}', "src/index.py": index, **TOOLS},
    )


def sent(reply) -> list:
    return [m["props"].get("content") for m in reply.sent]


# -- memory -----------------------------------------------------------------------------


async def test_memory_namespaces_are_scoped_to_user_team_chat_and_request(registry) -> None:
    kit = registry.get("kit")

    def ctx(user: str, team: str, chat: str) -> Context:
        options = RequestOptions(user_id=user, team_id=team, chat_id=chat)
        conversation = kit.conversation(options)
        return conversation._context()

    first = ctx("ada", "red", "chat-1")
    first.memory.user.set("theme", "dark")
    first.memory.team.set("plan", "pro")
    first.memory.chat.set("topic", "expenses")
    first.memory.context.set("temp", 1)
    assert first.memory.context.get("temp") == 1
    first.close()

    same_user_new_chat = ctx("ada", "blue", "chat-2")
    assert same_user_new_chat.memory.user.get("theme") == "dark"
    assert same_user_new_chat.memory.team.get("plan") is None
    assert same_user_new_chat.memory.chat.get("topic") is None
    assert same_user_new_chat.memory.context.get("temp") is None

    same_chat_other_user = ctx("bob", "red", "chat-1")
    assert same_chat_other_user.memory.user.get("theme") is None
    assert same_chat_other_user.memory.team.get("plan") == "pro"
    assert same_chat_other_user.memory.chat.get("topic") == "expenses"


async def test_hooks_and_tools_share_memory_across_requests(registry, root) -> None:
    with_hook(
        root,
        "def Create(ctx, messages):\n"
        "    ctx.memory.context.set('seen', ctx.memory.user.incr('visits'))\n"
        "    ctx.memory.chat.push('said', messages[-1]['content'])\n"
        "def Next(ctx, payload):\n"
        "    return {'data': [ctx.memory.context.get('seen'), ctx.memory.chat.get('said')]}\n",
    )
    conversation = registry.get("h").conversation(RequestOptions(user_id="ada"))
    assert (await conversation.send("one")).output == [1, ["one"]]
    assert (await conversation.send("two")).output == [2, ["one", "two"]]
    other_chat = registry.get("h").conversation(RequestOptions(user_id="ada"))
    assert (await other_chat.send("three")).output == [3, ["three"]]


# -- trace and output messages ----------------------------------------------------------


async def test_trace_nodes_are_recorded_into_the_reply(registry, root) -> None:
    with_hook(
        root,
        "def Create(ctx, messages):\n"
        "    node = ctx.trace.add({'q': 1}, {'label': 'Search', 'type': 'search'})\n"
        "    node.info('cache miss')\n"
        "    node.add({'url': 'u'}, label='Fetch').fail('timeout')\n"
        "    node.complete({'hits': 0})\n"
        "    ctx.trace.add({}, label='left running')\n",
    )
    reply = await registry.get("h").respond("go")
    labels = {n["label"]: n for n in reply.trace}
    assert labels["Search"]["status"] == "completed"
    assert labels["Search"]["output"] == {"hits": 0}
    assert labels["Search"]["logs"][0]["message"] == "cache miss"
    assert labels["Fetch"]["status"] == "failed"
    assert labels["Fetch"]["parent_id"] == labels["Search"]["id"]
    assert labels["left running"]["status"] == "completed"  # finished with the request


async def test_skip_trace_records_nothing(registry, root) -> None:
    with_hook(root, "def Create(ctx, messages):\n    ctx.trace.add({}, label='x').complete()\n")
    reply = await registry.get("h").respond("go", RequestOptions(skip={"trace": True}))
    assert reply.trace == []


async def test_send_stream_and_message_updates_reach_the_reply_and_listener(registry, root) -> None:
    with_hook(
        root,
        "def Create(ctx, messages):\n"
        "    ctx.send('Processing...')\n"
        "    ctx.send({'type': 'loading', 'props': {'message': 'wait'}})\n"
        "    msg = ctx.send_stream('Starting')\n"
        "    ctx.append(msg, ' step 1')\n"
        "    ctx.end(msg)\n"
        "    status = ctx.send_stream({'type': 'status', 'props': {'progress': 0}})\n"
        "    ctx.merge(status, {'progress': 50})\n"
        "    ctx.set(status, 'done', 'props.state')\n"
        "    ctx.set(status, 3, 'detail.count')\n"
        "    ctx.end(status)\n"
        "    swap = ctx.send_stream('loading')\n"
        "    ctx.replace(swap, {'type': 'text', 'props': {'content': 'Complete!'}})\n"
        "    ctx.end(swap)\n"
        "    block = ctx.block_id()\n"
        "    ctx.send_stream('a', block)\n"
        "    ctx.send_stream('b', block)\n"
        "    ctx.end_block(block)\n",
    )
    updates: list[tuple[str, str, bool]] = []
    options = RequestOptions(
        on_output=lambda m: updates.append((m.id, m.text(), m.done)),
    )
    reply = await registry.get("h").respond("go", options)
    assert sent(reply) == ["Processing...", None, "Starting step 1", None, "Complete!", "a", "b"]
    by_id = {m["id"]: m for m in reply.sent}
    assert by_id["M4"] == {
        "id": "M4",
        "type": "status",
        "props": {"progress": 50, "state": "done", "detail": {"count": 3}},
        "done": True,
    }
    assert by_id["M6"]["block_id"] == by_id["M7"]["block_id"] == "B1"
    assert all(m["done"] for m in reply.sent)
    assert updates[:5] == [
        ("M1", "Processing...", True),
        ("M2", '[loading] {"message": "wait"}', True),
        ("M3", "Starting", False),
        ("M3", "Starting step 1", False),
        ("M3", "Starting step 1", True),
    ]


async def test_updating_an_unknown_message_fails_the_hook(registry, root) -> None:
    with_hook(root, "def Create(ctx, messages):\n    ctx.append('M9', 'x')\n")
    with pytest.raises(HookError, match="no output message 'M9'"):
        await registry.get("h").respond("go")


# -- ctx.agent --------------------------------------------------------------------------


async def test_agent_call_from_a_sync_hook(registry, root) -> None:
    with_hook(
        root,
        "def Create(ctx, messages):\n"
        "    chunks = []\n"
        "    r = ctx.agent.call('upper', 'hello', {'on_chunk': chunks.append})\n"
        "    ctx.send(r['content'] + '|' + ''.join(chunks) + '|' + str(r['error']))\n"
        "    bad = ctx.agent.call('missing', 'x')\n"
        "    ctx.send('unknown assistant' if 'unknown assistant' in bad['error'] else 'no')\n",
    )
    reply = await registry.get("h").respond("go")
    assert sent(reply) == ["HELLO|HELLO|None", "unknown assistant"]


async def test_agent_calls_from_an_async_hook(registry, root) -> None:
    with_hook(
        root,
        "async def Create(ctx, messages):\n"
        "    one = await ctx.agent.call('upper', [{'role': 'user', 'content': 'abc'}])\n"
        "    both = await ctx.agent.all([{'agent': 'upper', 'messages': 'x'},"
        " {'agent': 'kit', 'messages': 'y'}])\n"
        "    first_ok = await ctx.agent.any([{'agent': 'missing', 'messages': 'x'},"
        " {'agent': 'upper', 'messages': 'z'}])\n"
        "    raced = await ctx.agent.race([{'agent': 'upper', 'messages': 'r'}])\n"
        "    ctx.send(' '.join([one['content'], *[b['content'] for b in both],"
        " first_ok['content'], raced['agent_id']]))\n",
    )
    reply = await registry.get("h").respond("go")
    assert sent(reply) == ["ABC X y Z upper"]


# -- ctx.llm ----------------------------------------------------------------------------


async def test_llm_stream_with_the_echo_connector(registry, root) -> None:
    with_hook(
        root,
        "def Create(ctx, messages):\n"
        "    chunks = []\n"
        "    r = ctx.llm.stream('echo', [{'role': 'user', 'content': 'one two three four'}],"
        " {'temperature': 0.1}, on_chunk=chunks.append)\n"
        "    ctx.send(r['content'] + '|' + str(len(chunks)) + '|' + r['response']['finish_reason'])\n"
        "    results = ctx.llm.all([{'connector': 'echo', 'messages': 'a'},"
        " {'connector': 'no-such-model', 'messages': 'b'}])\n"
        "    ctx.send(results[0]['content'] + '|' + str('unknown connector' in results[1]['error']))\n"
        "    ok = ctx.llm.any([{'connector': 'no-such-model', 'messages': 'b'},"
        " {'connector': 'echo', 'messages': 'c'}])\n"
        "    ctx.send(ok['content'])\n",
    )
    reply = await registry.get("h").respond("go")
    assert sent(reply) == ["one two three four|2|stop", "a|True", "c"]


async def test_llm_race_from_an_async_hook(registry, root) -> None:
    with_hook(
        root,
        "async def Create(ctx, messages):\n"
        "    r = await ctx.llm.race([{'connector': 'echo', 'messages': 'fast'}])\n"
        "    ctx.send(r['connector'] + ':' + r['content'])\n",
    )
    assert sent(await registry.get("h").respond("go")) == ["echo:fast"]


# -- ctx.mcp ----------------------------------------------------------------------------


async def test_mcp_calls_from_a_sync_hook(registry, root) -> None:
    with_hook(
        root,
        "def Create(ctx, messages):\n"
        "    names = [t['name'] for t in ctx.mcp.list_tools('kit')]\n"
        "    one = ctx.mcp.call_tool('kit', 'add', {'a': 1, 'b': 2})\n"
        "    seq = ctx.mcp.call_tools('kit', [{'name': 'add', 'arguments': {'a': 1, 'b': 1}},"
        " {'name': 'whoami'}])\n"
        "    par = ctx.mcp.call_tools_parallel('kit', [{'name': 'add', 'arguments': {'a': 5,"
        " 'b': 5}}])\n"
        "    mixed = ctx.mcp.all([{'mcp': 'kit', 'tool': 'add', 'arguments': {'a': 0, 'b': 1}},"
        " {'mcp': 'kit', 'tool': 'fail'}])\n"
        "    ctx.send(repr([names, one, seq, par, mixed[0], 'nope' in mixed[1]['error']]))\n",
    )
    reply = await registry.get("h").respond("go", RequestOptions(user_id="ada", chat_id="c1"))
    assert sent(reply) == [
        repr(
            [
                ["add", "fail", "whoami"],
                {"sum": 3},
                [{"sum": 2}, {"user": "ada", "chat": "c1"}],
                [{"sum": 10}],
                {"mcp": "kit", "tool": "add", "result": {"sum": 1}},
                True,
            ]
        )
    ]


async def test_mcp_call_tool_from_an_async_hook_validates_and_raises(registry, root) -> None:
    with_hook(
        root,
        "async def Create(ctx, messages):\n"
        "    ok = await ctx.mcp.call_tool('kit', 'add', {'a': 2, 'b': 2})\n"
        "    first = await ctx.mcp.any([{'mcp': 'kit', 'tool': 'fail'},"
        " {'mcp': 'kit', 'tool': 'add', 'arguments': {'a': 1, 'b': 1}}])\n"
        "    ctx.send(repr([ok, first['result']]))\n"
        "    await ctx.mcp.call_tool('kit', 'add', {'a': 'x', 'b': 2})\n",
    )
    with pytest.raises(ToolError, match="kit/add: invalid arguments") as caught:
        await registry.get("h").respond("go")
    assert caught.type is ToolError


async def test_process_tools_called_by_the_model_get_the_ctx(registry, root) -> None:
    write(
        root / "m",
        {
            "package.yao": '{"name": "M", "connector": "scripted"}',
            "scripted.yml": "rules:\n  - when: {user: who}\n    call: {name: whoami}\n"
            "  - when: {tool_result: whoami}\n    say: '{{ result.user }}@{{ result.chat }}'\n",
            **TOOLS,
        },
    )
    options = RequestOptions(user_id="ada", chat_id="c2")
    assert (await registry.get("m").respond("who?", options)).text == "ada@c2"
    kit_ctx = registry.get("kit").conversation(RequestOptions(user_id="ada"))._context()
    assert kit_ctx.memory.user.get("tool_calls") == 1
    kit_ctx.close()


async def test_ids_and_repr(registry) -> None:
    ctx = registry.get("kit").conversation(RequestOptions(chat_id="c3"))._context()
    assert [ctx.message_id(), ctx.message_id(), ctx.block_id(), ctx.thread_id()] == [
        "M1",
        "M2",
        "B1",
        "T1",
    ]
    assert repr(ctx) == "Context(assistant='kit', chat='c3')"
    ctx.close()

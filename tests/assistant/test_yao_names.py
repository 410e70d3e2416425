"""Yao's PascalCase names as aliases (ctx.Send, ctx.memory.user.Get, ctx.mcp.CallToolsParallel,
ctx.trace.Add, t.assert_.Equal), onChunk returning non-zero stopping a stream, and All/Any/Race
taking one shared callback."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.assistant.memory import MemoryStore
from agentcli.assistant.session import AssistantRegistry
from agentcli.eval.checks.script_assert import T
from agentcli.pascal import snake_name

LONG = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen"


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
async def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    root = tmp_path / "assistants"
    write(root / "talker", {"package.yao": '{"name": "Talker", "connector": "echo"}'})
    write(root / "other", {"package.yao": '{"name": "Other", "connector": "echo"}'})
    write(
        root / "kit",
        {
            "package.yao": '{"name": "Kit", "connector": "echo"}',
            "mcps/kit.mcp.yao": '{"transport": "process", "tools": {"add": "kit.Add"}}',
            "src/kit.py": "def Add(args):\n    return args['a'] + args['b']\n",
        },
    )
    registry = AssistantRegistry(
        root, cwd=tmp_path, memory_store=MemoryStore(tmp_path / "memory.sqlite3")
    )
    yield registry
    await registry.aclose()


def hook(registry: AssistantRegistry, body: str) -> None:
    """Give the kit package a Create hook with ``body``."""
    source = "def Create(ctx, messages):\n" + "".join(f"    {line}\n" for line in body.splitlines())
    (registry.root / "kit" / "src" / "index.py").write_text(source)  # type: ignore[operator]


def test_snake_names() -> None:
    assert snake_name("CallToolsParallel") == "call_tools_parallel"
    assert snake_name("JSONPath") == "json_path"
    assert snake_name("Send") == "send"


async def test_pascal_case_ctx_names_are_the_python_ones(registry: AssistantRegistry) -> None:
    hook(
        registry,
        "ctx.memory.user.Set('n', 1)\n"
        "ctx.memory.user.Incr('n')\n"
        "results = ctx.mcp.CallToolsParallel('kit', [{'name': 'add', 'arguments': {'a': 1, 'b': 2}}])\n"
        "listed = [t['name'] for t in ctx.mcp.ListTools('kit')]\n"
        "node = ctx.trace.Add({'q': 1}, {'label': 'Yao'})\n"
        "node.Complete({'ok': True})\n"
        "ctx.Send(f\"{ctx.memory.user.Get('n')} {results} {listed} {ctx.memory.user.GetDel('n')}\")\n"
        "ctx.Send(str(ctx.memory.user.Has('n')))",
    )
    reply = await registry.get("kit").respond("hi")
    assert [m["props"]["content"] for m in reply.sent] == ["2 [3] ['add'] 2", "False"]
    assert any(node["label"] == "Yao" and node["status"] == "completed" for node in reply.trace)


async def test_an_unknown_name_is_still_an_attribute_error(registry: AssistantRegistry) -> None:
    hook(registry, "ctx.NoSuchThing()")
    with pytest.raises(Exception, match="no attribute 'NoSuchThing'"):
        await registry.get("kit").respond("hi")


async def test_on_chunk_returning_non_zero_stops_an_agent_call(registry: AssistantRegistry) -> None:
    hook(
        registry,
        "seen = []\n"
        "def on_chunk(text):\n"
        "    seen.append(text)\n"
        "    return 1 if len(seen) == 2 else 0\n"
        f"stopped = ctx.agent.Call('talker', {LONG!r}, {{'onChunk': on_chunk}})\n"
        f"whole = ctx.agent.Call('talker', {LONG!r}, {{'onChunk': lambda text: 0}})\n"
        "ctx.Send(f\"{len(seen)}|{stopped['text']}|{whole['text']}\")",
    )
    reply = await registry.get("kit").respond("hi")
    count, stopped, whole = reply.sent[0]["props"]["content"].split("|")
    assert count == "2"  # no chunk after the one that said stop
    assert whole == LONG
    assert stopped and LONG.startswith(stopped) and len(stopped) < len(LONG)


async def test_on_chunk_returning_non_zero_stops_an_llm_call(registry: AssistantRegistry) -> None:
    hook(
        registry,
        "seen = []\n"
        "def on_chunk(text):\n"
        "    seen.append(text)\n"
        "    return 1\n"
        f"answer = ctx.llm.Stream('echo', {LONG!r}, {{}}, on_chunk)\n"
        "ctx.Send(f\"{len(seen)}|{answer['content']}|{answer['response']['finish_reason']}\")",
    )
    reply = await registry.get("kit").respond("hi")
    count, content, reason = reply.sent[0]["props"]["content"].split("|")
    assert (count, reason) == ("1", "stopped")
    assert LONG.startswith(content) and content != LONG


async def test_all_any_race_take_a_shared_callback(registry: AssistantRegistry) -> None:
    hook(
        registry,
        "seen = set()\n"
        "def shared(target, index, text):\n"
        "    seen.add((target, index))\n"
        "    return 0\n"
        "requests = [{'agent': 'talker', 'messages': 'a b'}, {'agent': 'other', 'messages': 'c'}]\n"
        "answers = ctx.agent.All(requests, {'onChunk': shared})\n"
        "first = ctx.agent.Any(requests, {'on_chunk': shared})\n"
        "llm = ctx.llm.All([{'connector': 'echo', 'messages': 'x'}], {'onChunk': shared})\n"
        "ctx.Send(f\"{sorted(seen)}|{[a['text'] for a in answers]}|{first['text'] in ('a b', 'c')}|{llm[0]['content']}\")",
    )
    reply = await registry.get("kit").respond("hi")
    seen, texts, first, llm = reply.sent[0]["props"]["content"].split("|")
    assert seen == "[('echo', 0), ('other', 1), ('talker', 0)]"
    assert texts == "['a b', 'c']"
    assert first == "True" and llm == "x"


def test_script_tests_use_yao_names_too() -> None:
    t = T("TestYao")
    assert t.assert_.Equal(1, 1)
    assert t.Assert is t.assert_
    t.Log("hello")
    assert t.logs == ["hello"]
    assert not t.assert_.Equal(1, 2)
    assert t.failed

"""Create / Next hooks: calling conventions, return contracts, errors, delegation."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from agentcli.assistant.hooks import Hooks, call_user_function
from agentcli.assistant.memory import MemoryStore
from agentcli.assistant.session import MAX_DELEGATE_DEPTH, AssistantRegistry
from agentcli.errors import HookError, PackageError

MESSAGES = [{"role": "user", "content": "hi"}]


def hooks_from(tmp_path: Path, source: str, assistant_id: str = "demo") -> Hooks:
    folder = tmp_path / assistant_id
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "index.py").write_text(source, encoding="utf-8")
    return Hooks.load(assistant_id, folder)


# -- calling conventions ----------------------------------------------------------------


async def test_no_index_py_means_no_hooks(tmp_path: Path) -> None:
    hooks = Hooks.load("demo", tmp_path)
    assert (hooks.create, hooks.next) == (None, None)
    assert await hooks.run_create(None, MESSAGES, {}) is None
    assert await hooks.run_next(None, {}, {}) is None


async def test_sync_hook_runs_off_the_loop_thread(tmp_path: Path) -> None:
    hooks = hooks_from(
        tmp_path,
        "import threading, time\n"
        "def Create(ctx, messages, options):\n"
        "    time.sleep(0.2)\n"
        "    return {'metadata': {'thread': threading.current_thread().name,"
        " 'seen': [messages[-1]['content'], options['locale']]}}\n",
    )
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.01)

    ticker = asyncio.create_task(tick())
    result = await hooks.run_create("ctx", MESSAGES, {"locale": "en-us"})
    ticker.cancel()
    assert result.metadata["seen"] == ["hi", "en-us"]
    assert result.metadata["thread"] != threading.current_thread().name
    assert ticks > 5  # the loop kept running while the sync hook slept


async def test_async_hook_and_lowercase_names(tmp_path: Path) -> None:
    hooks = hooks_from(
        tmp_path,
        "import asyncio\n"
        "async def create(ctx, messages):\n"
        "    await asyncio.sleep(0)\n"
        "    return {'temperature': 0.5, 'max_tokens': 10, 'connector': 'echo',"
        " 'prompt_preset': 'task', 'disable_global_prompts': True, 'locale': 'zh-cn',"
        " 'mcp_servers': ['tools'], 'messages': messages}\n"
        "def next(ctx, payload):\n"
        "    return {'data': payload['completion'], 'metadata': {'k': 1}}\n",
    )
    create = await hooks.run_create(None, MESSAGES, {})
    assert (create.temperature, create.max_tokens, create.connector) == (0.5, 10, "echo")
    assert (create.prompt_preset, create.disable_global_prompts) == ("task", True)
    assert (create.locale, create.mcp_servers, create.messages) == ("zh-cn", ["tools"], MESSAGES)
    after = await hooks.run_next(None, {"completion": "x"}, {})
    assert (after.data, after.has_data, after.metadata) == ("x", True, {"k": 1})


@pytest.mark.parametrize(
    ("signature", "expected"),
    [
        ("ctx", "('ctx',)"),
        ("ctx, messages", "('ctx', [1])"),
        ("ctx, messages, options", "('ctx', [1], {'o': 1})"),
        ("*args", "('ctx', [1], {'o': 1})"),
    ],
)
async def test_hooks_take_as_many_arguments_as_they_declare(
    tmp_path: Path, signature: str, expected: str
) -> None:
    body = "args" if signature == "*args" else f"({signature},)"
    hooks = hooks_from(
        tmp_path, f"def Create({signature}):\n    return {{'metadata': {{'a': repr({body})}}}}\n"
    )
    result = await hooks.run_create("ctx", [1], {"o": 1})
    assert result.metadata["a"] == expected


async def test_next_without_data_is_not_an_output(tmp_path: Path) -> None:
    hooks = hooks_from(tmp_path, "def Next(ctx, payload):\n    return {'metadata': {'x': 1}}\n")
    result = await hooks.run_next(None, {}, {})
    assert (result.has_data, result.data) == (False, None)


async def test_call_user_function_awaits_what_a_sync_function_returns() -> None:
    async def inner() -> int:
        return 7

    assert await call_user_function(lambda: inner()) == 7


# -- errors -----------------------------------------------------------------------------


async def test_raising_hook_names_assistant_file_line_and_function(tmp_path: Path) -> None:
    hooks = hooks_from(
        tmp_path,
        "def helper():\n    raise ValueError('boom')\n\ndef Create(ctx, messages):\n    helper()\n",
        assistant_id="expense",
    )
    with pytest.raises(HookError) as caught:
        await hooks.run_create(None, MESSAGES, {})
    message = str(caught.value)
    assert "assistant expense" in message
    assert f"{tmp_path / 'expense' / 'src' / 'index.py'}:2" in message  # the raising line
    assert "Create()" in message and "ValueError: boom" in message
    assert isinstance(caught.value.__cause__, ValueError)


async def test_system_exit_in_a_sync_hook_is_a_hook_error(tmp_path: Path) -> None:
    hooks = hooks_from(tmp_path, "import sys\ndef Next(ctx, payload):\n    sys.exit(3)\n")
    with pytest.raises(HookError, match="Next\\(\\) of assistant demo raised RuntimeError"):
        await hooks.run_next(None, {}, {})


@pytest.mark.parametrize(
    ("returned", "match"),
    [
        ("'text'", "must return a dict or None, not str"),
        ("{'mesages': []}", "unknown field\\(s\\) mesages"),
        ("{'temperature': 'hot'}", "temperature must be a number, got str"),
        ("{'max_tokens': 1.5}", "max_tokens must be an integer"),
        ("{'disable_global_prompts': 1}", "disable_global_prompts must be true or false"),
        ("{'messages': 'hi'}", "messages must be a list of messages"),
        ("{'metadata': [1]}", "metadata must be an object"),
        ("{'connector': ''}", "connector must not be empty"),
        ("{'delegate': {'messages': []}}", "delegate must be an object with an agent_id"),
        ("{'delegate': {'agent_id': 'b', 'messages': 'x'}}", "delegate.messages must be a list"),
    ],
)
async def test_bad_create_return_shapes(tmp_path: Path, returned: str, match: str) -> None:
    hooks = hooks_from(tmp_path, f"def Create(ctx, messages):\n    return {returned}\n")
    with pytest.raises(HookError, match=match) as caught:
        await hooks.run_create(None, MESSAGES, {})
    assert "index.py" in str(caught.value)


async def test_unknown_field_error_lists_the_allowed_fields(tmp_path: Path) -> None:
    hooks = hooks_from(tmp_path, "def Next(ctx, payload):\n    return {'output': 1}\n")
    with pytest.raises(HookError, match="unknown field") as caught:
        await hooks.run_next(None, {}, {})
    assert caught.value.hint == "Next may return: data, delegate, metadata"


async def test_hook_file_with_a_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    with pytest.raises(PackageError, match=r"index\.py:2: syntax error"):
        hooks_from(tmp_path, "def Create(ctx):\n    return {\n")


# -- delegation -------------------------------------------------------------------------


def package(root: Path, name: str, index: str = "", connector: str = "echo") -> None:
    folder = root / name
    (folder / "src").mkdir(parents=True)
    (folder / "package.yao").write_text(
        f'{{"name": "{name}", "connector": "{connector}"}}', encoding="utf-8"
    )
    if index:
        (folder / "src" / "index.py").write_text(index, encoding="utf-8")


@pytest.fixture
async def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    registry = AssistantRegistry(
        tmp_path / "assistants",
        cwd=tmp_path,
        memory_store=MemoryStore(tmp_path / "memory.sqlite3"),
    )
    yield registry
    await registry.aclose()


async def test_create_delegate_hands_the_request_over(registry, tmp_path: Path) -> None:
    root = tmp_path / "assistants"
    package(
        root,
        "main",
        "def Create(ctx, messages):\n"
        "    ctx.trace.add({}, {'label': 'routing'})\n"
        "    if 'special' in messages[-1]['content']:\n"
        "        return {'delegate': {'agent_id': 'specialist', 'messages': messages,"
        " 'options': {'metadata': {'source': 'main'}}}}\n",
    )
    package(
        root,
        "specialist",
        "def Next(ctx, payload):\n"
        "    return {'data': {'by': ctx.assistant_id, 'source': ctx.metadata['source'],"
        " 'text': payload['completion']['content']}}\n",
    )
    reply = await registry.get("main").respond("a special request")
    assert reply.assistant_id == "specialist"
    assert reply.output == {"by": "specialist", "source": "main", "text": "a special request"}
    assert reply.trace[0]["label"] == "routing"
    plain = await registry.get("main").respond("ordinary")
    assert (plain.assistant_id, plain.output) == ("main", "ordinary")


async def test_delegate_loop_hits_the_depth_limit(registry, tmp_path: Path) -> None:
    root = tmp_path / "assistants"
    loop = "def Create(ctx, messages):\n    return {{'delegate': {{'agent_id': '{}'}}}}\n"
    package(root, "ping", loop.format("pong"))
    package(root, "pong", loop.format("ping"))
    with pytest.raises(HookError, match=f"depth limit of {MAX_DELEGATE_DEPTH}") as caught:
        await registry.get("ping").respond("hi")
    assert "ping -> pong -> ping" in str(caught.value)
    assert "loop" in caught.value.hint


async def test_async_delegate_loop_is_stopped_too(registry, tmp_path: Path) -> None:
    root = tmp_path / "assistants"
    package(
        root,
        "self",
        "async def Create(ctx, messages):\n    return {'delegate': {'agent_id': 'self'}}\n",
    )
    with pytest.raises(HookError, match="depth limit"):
        await registry.get("self").respond("hi")


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("0", "max_steps must be a positive integer, got 0"),
        ("'20'", "max_steps must be a positive integer, got str"),
        ("True", "max_steps must be a positive integer, got bool"),
    ],
)
async def test_create_max_steps_is_a_positive_integer(tmp_path: Path, value, problem) -> None:
    hooks = hooks_from(
        tmp_path, f"def Create(ctx, messages):\n    return {{'max_steps': {value}}}\n"
    )
    with pytest.raises(HookError, match=problem):
        await hooks.run_create(None, MESSAGES, {})
    fine = hooks_from(
        tmp_path / "fine", "def Create(ctx, messages):\n    return {'max_steps': 60}\n"
    )
    assert (await fine.run_create(None, MESSAGES, {})).max_steps == 60

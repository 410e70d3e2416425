"""Echo and Python function models, the function loader and the shared YAML reader."""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from agentcli.errors import ConfigError, PackageError, ProviderError, RateLimited
from agentcli.models.base import (
    Model,
    ModelSettings,
    ResponseDone,
    TextDelta,
    ToolCallDelta,
    collect,
)
from agentcli.models.offline import (
    EchoModel,
    FunctionModel,
    load_function,
    message_text,
)

TOOLS = [{"type": "function", "function": {"name": "search__find", "parameters": {}}}]


def user(content: Any) -> dict[str, Any]:
    return {"role": "user", "content": content}


async def parts_of(model: Any, messages: list[dict[str, Any]], tools: list[dict] | None = None):
    return [p async for p in model.stream(messages, tools or [], ModelSettings())]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


# -- echo ---------------------------------------------------------------------------


async def test_echo_replies_with_the_last_user_message_in_chunks():
    model = EchoModel()
    assert isinstance(model, Model)
    text = "the quick brown fox jumps over the lazy dog"
    messages = [user("first"), {"role": "assistant", "content": "ok"}, user(text)]
    parts = await parts_of(model, messages)
    texts = [p.text for p in parts if isinstance(p, TextDelta)]
    assert len(texts) == 3 and "".join(texts) == text
    done = parts[-1]
    assert isinstance(done, ResponseDone)
    response = done.response
    assert (response.content, response.finish_reason, response.tool_calls) == (text, "stop", [])
    assert (response.provider, response.model) == ("offline", "echo")
    assert (response.usage.input_tokens, response.usage.output_tokens) == (11, 9)
    assert (response.usage.provider, response.usage.model) == ("offline", "echo")


async def test_echo_reads_text_parts_of_list_content():
    content = [
        {"type": "text", "text": "look at "},
        {"type": "image_url", "image_url": {"url": "data:,"}},
        {"type": "text", "text": "this"},
    ]
    assert (await collect(EchoModel(), [user(content)])).content == "look at this"


async def test_echo_without_user_message_replies_empty():
    reply = await collect(EchoModel(), [{"role": "system", "content": "be nice"}])
    assert reply.content == ""


def test_message_text_shapes():
    assert message_text({"content": None}) == ""
    assert message_text({"content": "x"}) == "x"
    assert message_text({"content": [{"text": "a"}, {"type": "text", "text": "b"}, "junk"]}) == "ab"


# -- function models ----------------------------------------------------------------


async def test_sync_function_runs_in_a_worker_thread_with_settings():
    seen: dict[str, Any] = {}

    def reply(messages, tools, settings):
        seen.update(thread=threading.current_thread(), settings=settings, tools=tools)
        return f"you said {messages[-1]['content']}"

    model = FunctionModel(reply, name="python:models.fake:reply")
    settings = ModelSettings(temperature=0.2, max_tokens=5, extra={"seed": 1})
    parts = [p async for p in model.stream([user("hi there")], TOOLS, settings)]
    assert seen["thread"] is not threading.main_thread()
    assert seen["settings"] == {"temperature": 0.2, "max_tokens": 5, "seed": 1}
    assert seen["tools"] == TOOLS
    done = parts[-1]
    assert isinstance(done, ResponseDone)
    assert done.response.content == "you said hi there"
    assert (done.response.provider, done.response.model) == ("python", "python:models.fake:reply")
    assert "".join(p.text for p in parts if isinstance(p, TextDelta)) == "you said hi there"


async def test_async_function_with_tool_calls_and_bare_names():
    async def reply(messages, tools, settings):
        await asyncio.sleep(0)
        return {
            "content": "searching",
            "tool_calls": [
                {"name": "find", "arguments": {"q": "cats"}},
                {"name": "other", "id": "mine"},
            ],
        }

    parts = await parts_of(FunctionModel(reply, name="f"), [user("x")], TOOLS)
    deltas = [p for p in parts if isinstance(p, ToolCallDelta)]
    assert [(d.index, d.id, d.name, json.loads(d.arguments)) for d in deltas] == [
        (0, "call_1", "search__find", {"q": "cats"}),
        (1, "mine", "other", {}),
    ]
    response = parts[-1].response
    assert response.finish_reason == "tool_calls"
    assert [(c.id, c.name, c.arguments) for c in response.tool_calls] == [
        ("call_1", "search__find", {"q": "cats"}),
        ("mine", "other", {}),
    ]


async def test_sync_function_returning_a_coroutine_is_awaited():
    async def later() -> str:
        return "late"

    assert (
        await collect(FunctionModel(lambda m, t, s: later(), name="f"), [user("x")])
    ).content == "late"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (None, "python model f returned NoneType; expected text or {"),
        (42, "python model f returned int; expected text or {"),
        ({"text": "x"}, "python model f returned unknown keys ['text']; expected text or {"),
        ({"content": 3}, "python model f returned content of type int; expected a string"),
        ({"tool_calls": {"name": "x"}}, "python model f returned tool_calls that is not a list"),
        ({"tool_calls": [{"arguments": {}}]}, "python model f tool_calls[0] needs a string `name`"),
        (
            {"tool_calls": [{"name": "t", "arguments": "{}"}]},
            "python model f tool_calls[0].arguments must be a dict, not str",
        ),
        (
            {"tool_calls": [{"name": "t", "id": 5}]},
            "python model f tool_calls[0].id must be a string",
        ),
    ],
)
async def test_bad_return_shapes_are_provider_errors(value, message):
    with pytest.raises(ProviderError) as caught:
        await collect(FunctionModel(lambda m, t, s: value, name="f"), [user("x")])
    assert str(caught.value).startswith(message)
    assert caught.value.retryable is False


async def test_function_exceptions_become_provider_errors_but_model_errors_pass():
    def broken(messages, tools, settings):
        raise KeyError("nope")

    with pytest.raises(ProviderError, match=r"^python model f raised KeyError: 'nope'$"):
        await collect(FunctionModel(broken, name="f"), [user("x")])

    async def throttled(messages, tools, settings):
        raise RateLimited("slow down", retry_after=1.0)

    with pytest.raises(RateLimited) as caught:
        await collect(FunctionModel(throttled, name="f"), [user("x")])
    assert caught.value.retry_after == 1.0


# -- loading python:<module>:<function> ---------------------------------------------


def test_load_function_from_dotted_module(tmp_path):
    write(
        tmp_path / "src/models/fake.py",
        "def reply(messages, tools, settings):\n    return 'fake'\n",
    )
    function = load_function(tmp_path / "src", "models.fake", "reply")
    assert function([], [], {}) == "fake"
    assert load_function(tmp_path / "src", "models.fake", "reply") is function  # loaded once


def test_load_function_from_package_init(tmp_path):
    write(tmp_path / "src/models/__init__.py", "def reply(m, t, s):\n    return 'init'\n")
    assert load_function(tmp_path / "src", "models", "reply")([], [], {}) == "init"


def test_same_module_name_in_two_packages_does_not_collide(tmp_path):
    write(tmp_path / "a/src/tools.py", "def reply(m, t, s):\n    return 'a'\n")
    write(tmp_path / "b/src/tools.py", "def reply(m, t, s):\n    return 'b'\n")
    first = load_function(tmp_path / "a/src", "tools", "reply")
    second = load_function(tmp_path / "b/src", "tools", "reply")
    assert (first([], [], {}), second([], [], {})) == ("a", "b")
    leaked = [
        name
        for name, module in list(sys.modules.items())
        if str(getattr(module, "__file__", None) or "").startswith(str(tmp_path))
        and not name.startswith("_agentcli_src_")
    ]
    assert leaked == []


def test_missing_module_names_the_file(tmp_path):
    with pytest.raises(ConfigError) as caught:
        load_function(tmp_path / "src", "models.fake", "reply")
    expected = f"python model: module file {tmp_path / 'src/models/fake.py'} not found"
    assert caught.value.message == expected
    assert "reply(messages, tools, settings)" in (caught.value.hint or "")


def test_missing_function_names_the_file(tmp_path):
    path = write(tmp_path / "src/fake.py", "other = 1\nreply = 'not callable'\n")
    with pytest.raises(ConfigError) as caught:
        load_function(tmp_path / "src", "fake", "reply")
    assert str(caught.value) == f"python model: {path} has no function 'reply'"


def test_module_with_syntax_error_names_file_and_line(tmp_path):
    path = write(tmp_path / "src/fake.py", "x = 1\ndef reply(:\n")
    with pytest.raises(PackageError) as caught:
        load_function(tmp_path / "src", "fake", "reply")
    assert str(caught.value) == f"{path.resolve()}:2: syntax error: invalid syntax"


def test_module_that_fails_to_import_is_reported_and_can_be_retried(tmp_path):
    path = write(tmp_path / "src/fake.py", "raise RuntimeError('boom')\n")
    with pytest.raises(PackageError, match=r"fake\.py:1: importing failed: RuntimeError: boom$"):
        load_function(tmp_path / "src", "fake", "reply")
    write(path, "def reply(m, t, s):\n    return 'fixed'\n")
    assert load_function(tmp_path / "src", "fake", "reply")([], [], {}) == "fixed"


@pytest.mark.parametrize("module", ["../evil", "a..b", "a/b", ""])
def test_module_must_be_a_dotted_name(tmp_path, module):
    with pytest.raises(ConfigError, match="is not a dotted module name"):
        load_function(tmp_path, module, "reply")

"""A Yao application laid out as yaoapp/yao's unit-test/agent/app (fixtures/yao_app), run as
a new user would: app-level tool servers, Yao connector ids running offline, HookCreateResponse
fields, TypeScript hooks without a port, presets, locales, and Yao's names for things."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentcli.assistant.memory import MemoryStore
from agentcli.assistant.session import AssistantRegistry, RequestOptions
from agentcli.cli.main import _register, app

YAO_APP = Path(__file__).resolve().parents[2] / "fixtures" / "yao_app"
SPY = """
import json

def reply(messages, tools, settings):
    return json.dumps({"messages": messages, "tools": [t["function"]["name"] for t in tools],
                       "settings": settings})
"""

_register()


@pytest.fixture
def yao(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the app; cwd is the app folder (as `yao start` would have it)."""
    copy = tmp_path / "app"
    shutil.copytree(YAO_APP, copy)
    monkeypatch.chdir(copy)
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AGENT_ROOT", raising=False)
    monkeypatch.delenv("AGENT_CONNECTOR", raising=False)
    return copy


def spying(app_dir: Path, *packages: str) -> None:
    """Point `openai.gpt-4o` at a model that answers with what it was sent."""
    (app_dir / "connectors.yml").write_text(
        "openai.mock: scripted\nopenai.gpt-4o: python:spy:reply\n"
    )
    for package in packages:
        (app_dir / "assistants" / "tests" / package / "src").mkdir(exist_ok=True)
        (app_dir / "assistants" / "tests" / package / "src" / "spy.py").write_text(SPY)


@pytest.fixture
async def registry(yao: Path):
    registry = AssistantRegistry(
        yao / "assistants", cwd=yao, memory_store=MemoryStore(yao.parent / "memory.sqlite3")
    )
    yield registry
    await registry.aclose()


def cli(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def logs(reply: Any) -> list[str]:
    return [log["message"] for node in reply.trace for log in node.get("logs", [])]


async def test_app_level_servers_are_found_by_id_with_their_mapping(
    registry: AssistantRegistry,
) -> None:
    assistant = registry.get("tests.mcp-tools")
    box = assistant.toolbox
    assert box.specs["echo"].path == registry.root.parent / "mcps" / "echo.mcp.yao"
    tools = {t.bare_name: t for t in await box.tools()}
    assert sorted(tools) == ["echo", "ping"]
    assert tools["echo"].parameters["required"] == ["message"]  # mcps/mapping/echo/schemes
    reply = await assistant.respond("ping")
    assert reply.text == "pong pong"
    assert [(c.server, c.tool) for c in reply.tool_calls] == [("echo", "ping")]
    (prompt,) = await box.list_prompts("echo")
    assert prompt["arguments"][0]["name"] == "message"


async def test_ported_hooks_read_as_typescript_did(registry: AssistantRegistry) -> None:
    reply = await registry.get("tests.mcp-tools").respond("yao names")
    (sent,) = reply.sent
    assert sent["props"]["content"].startswith('pong hi {"name": "echo", "version": "1.0.0"')


async def test_create_may_return_every_field_of_hook_create_response(
    registry: AssistantRegistry, yao: Path
) -> None:
    reply = await registry.get("tests.create").respond("return_full")
    assert reply.text == "Hello from the mock"  # the connector id openai.mock ran offline
    spying(yao, "create")
    fresh = AssistantRegistry(yao / "assistants", cwd=yao)
    try:
        seen = json.loads((await fresh.get("tests.create").respond("adjust_context")).text)
        assert seen["messages"][-1] == {"role": "user", "content": "adjusted"}
        full = await fresh.get("tests.create").respond("return_full")
    finally:
        await fresh.aclose()
    # return_full keeps the scripted connector; its settings reach the model call
    assert full.text == "Hello from the mock"
    adjusted = await registry.get("tests.create").respond("adjust_context")
    (note,) = [m for m in logs(adjusted) if m.startswith("Create returned")]
    assert note == ("Create returned theme, route, ignored (theme/route: there is no UI)")


async def test_audio_and_max_completion_tokens_reach_the_model(yao: Path) -> None:
    spying(yao, "create")
    (yao / "assistants/tests/create/package.yao").write_text(
        '{"name": "Create", "connector": "openai.gpt-4o"}'
    )
    registry = AssistantRegistry(yao / "assistants", cwd=yao)
    try:
        seen = json.loads((await registry.get("tests.create").respond("return_full")).text)
    finally:
        await registry.aclose()
    assert seen["settings"]["max_tokens"] == 1500
    assert seen["settings"]["audio"] == {"voice": "alloy", "format": "mp3"}
    assert seen["settings"]["temperature"] == 0.7


async def test_prompt_presets_in_yao_folders_and_a_missing_one_falls_back(yao: Path) -> None:
    spying(yao, "hook-prompt-preset")
    registry = AssistantRegistry(yao / "assistants", cwd=yao)
    try:
        assistant = registry.get("tests.hook-prompt-preset")
        chat = json.loads((await assistant.respond("use_chat_preset")).text)
        missing = await assistant.respond("use_nope_preset")
    finally:
        await registry.aclose()
    assert chat["messages"][0]["content"] == "chat prompt"  # prompts/chat/prompts.yml
    assert json.loads(missing.text)["messages"][0]["content"] == "default prompt"
    assert any("prompt preset 'nope'" in m for m in logs(missing))


@pytest.mark.parametrize(
    ("locale", "expected"),
    [
        ("fr_FR", "Réponds en français. (locale fr-fr)"),
        ("zh-CN", "请用中文回答。 (locale zh-cn)"),
        (None, "Answer in English. (locale en-us)"),
    ],
)
async def test_locale_placeholders_in_prompts_and_the_normalised_locale(
    yao: Path, locale: str | None, expected: str
) -> None:
    spying(yao, "i18n-multilang")
    registry = AssistantRegistry(yao / "assistants", cwd=yao)
    try:
        reply = await registry.get("tests.i18n-multilang").respond(
            "hi", RequestOptions(locale=locale)
        )
    finally:
        await registry.aclose()
    assert json.loads(reply.text)["messages"][0]["content"] == expected


def test_typescript_hooks_without_a_port_are_warned_about(yao: Path) -> None:
    checked = cli("list", "--check")
    assert checked.exit_code == 0, checked.output
    assert (
        "! tests.realworld" in checked.output
        and "src/index.ts has no Python twin (src/index.py): its hooks do not run here"
        in checked.output
    )
    assert (
        "tests.create" in checked.output
        and "index.ts" not in checked.output.split("tests.create")[1].split("\n", 2)[1]
    )  # create has its port
    ran = cli("run", "tests.realworld", "hi")
    assert ran.exit_code == 0
    assert "warning: src/index.ts has no Python twin" in ran.stderr
    evaluated = cli("eval", "tests.realworld", "hi")
    assert "src/index.ts has no Python twin" in evaluated.output


def test_seed_names_for_assistants_and_script_assertions(yao: Path) -> None:
    result = cli(
        "eval", "-n", "assistants.tests.create", "-i", "assistants/tests/create/cases.jsonl",
        "-o", "out.jsonl",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    (line,) = [json.loads(x) for x in (yao / "out.jsonl").read_text().splitlines()
               if '"id": "full"' in x or '"id":"full"' in x]  # fmt: skip
    assert line["assertions"][0]["passed"] is True
    assert "Hello from the mock" in line["assertions"][0]["message"]


def test_list_check_resolves_every_alias_and_fails_on_a_broken_one(yao: Path) -> None:
    (yao / "connectors.yml").write_text(
        "openai.mock: scripted\nopenai.gpt-4o: {model: echo}\n"
        "unused.offline: echo\n"
        'unused.broken: {model: openai/x, api_base: "localhost:1/v1"}\n'
    )
    checked = cli("list", "--check")
    assert checked.exit_code == 1
    out = checked.output
    assert f"connectors: {yao / 'connectors.yml'}" in out
    assert "✓ unused.offline -> echo" in out
    assert "✗ unused.broken -> openai/x" in out and "is not an http(s) URL" in out
    assert "openai.mock ->" not in out  # checked with the packages that use it


def test_connector_all_applies_c_to_delegated_assistants(yao: Path) -> None:
    (yao / "assistants/tests/realworld/src/index.py").write_text(
        "def Create(ctx, messages):\n"
        "    return {'delegate': {'agent_id': 'tests.create', 'messages': messages}}\n"
    )
    plain = cli("run", "tests.realworld", "hello", "-c", "echo")
    assert plain.stdout.strip() == "mock: hello"  # the delegate kept its own connector
    everywhere = cli("run", "tests.realworld", "hello", "-c", "echo", "--connector-all")
    assert everywhere.stdout.strip() == "hello"
    alone = cli("run", "tests.realworld", "hello", "--connector-all")
    assert alone.exit_code == 2 and "give -c too" in alone.output
    evaluated = cli("eval", "tests.realworld", "hello", "-c", "echo", "--connector-all")
    assert evaluated.exit_code == 0 and evaluated.stdout.strip().endswith("hello")
    assert "mock:" not in evaluated.stdout
    refused = cli("eval", "tests.realworld", "hello", "--connector-all")
    assert refused.exit_code == 2 and "give -c too" in refused.output


def test_list_check_finds_a_resource_function_that_does_not_exist(yao: Path) -> None:
    server = yao / "mcps" / "echo.mcp.yao"
    server.write_text(
        server.read_text().replace("scripts.tests.mcp.Info", "scripts.tests.mcp.Nope")
    )
    checked = cli("list", "--check")
    assert checked.exit_code == 1
    assert "'scripts.tests.mcp.Nope': scripts/tests/mcp.py has no function 'Nope'" in checked.output
    assert "src/scripts" not in checked.output

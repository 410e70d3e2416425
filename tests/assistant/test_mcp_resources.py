"""MCP resources and prompts (ctx.mcp over stdio, streamable HTTP and process servers),
resources in the model's context, task-only tools withheld, progress as tool updates and
image/audio results as content parts: against a real MCP server process."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentcli.assistant.memory import MemoryStore
from agentcli.assistant.session import AssistantRegistry
from agentcli.assistant.tools import ToolBox
from agentcli.errors import ToolError
from agentcli.runtime.events import ToolExecutionUpdate
from agentcli.runtime.messages import Message, to_llm_messages
from agentcli.runtime.tools import ToolCall, ToolExecutor, ToolResult
from fixtures.library_server import library_server

LIBRARY = Path(__file__).resolve().parents[2] / "fixtures" / "library_server.py"

SPY = """
import json

def reply(messages, tools, settings):
    return json.dumps({"messages": messages, "tools": [t["function"]["name"] for t in tools]})
"""


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def stdio_definition(protocol: str = "auto") -> str:
    return json.dumps(
        {
            "transport": "stdio",
            "command": sys.executable,
            "args": [str(LIBRARY)],
            "protocol": protocol,
        }
    )


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    with library_server() as url:
        yield url


@pytest.fixture(params=["stdio", "http"])
def library(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """A package whose `library` server runs over stdio or streamable HTTP."""
    if request.param == "stdio":
        definition = stdio_definition()
    else:
        url = request.getfixturevalue("http_url")
        definition = json.dumps({"transport": "http", "url": url})
    return write(tmp_path / "pkg", {"mcps/library.mcp.yao": definition})


async def test_resources_and_prompts_over_stdio_and_http(library: Path) -> None:
    async with ToolBox(library) as box:
        listed = await box.list_resources("library")
        assert [(r["uri"], r["name"], r["mime_type"]) for r in listed] == [
            ("library://catalog", "Catalog", "application/json"),
            ("library://hours", "Opening hours", "text/plain"),
        ]
        assert await box.read_resource("library", "library://books/2") == [
            {"uri": "library://books/2", "mime_type": "text/plain", "text": "Emma"}
        ]
        (prompt,) = await box.list_prompts("library")
        assert prompt["name"] == "summarize"
        assert [(a["name"], a["required"]) for a in prompt["arguments"]] == [
            ("title", True),
            ("style", False),
        ]
        filled = await box.get_prompt("library", "summarize", {"title": "Dune", "style": "long"})
        assert filled["messages"] == [{"role": "user", "content": "Summarize Dune in a long way."}]
        with pytest.raises(ToolError, match="library"):
            await box.get_prompt("library", "nope")


async def test_progress_becomes_tool_updates_and_media_become_content_parts(
    library: Path,
) -> None:
    events: list[Any] = []

    async def emit(event: Any) -> None:
        events.append(event)

    async with ToolBox(library) as box:
        tools = {t.name: t for t in await box.tools()}
        executor = ToolExecutor(tools, emit=emit, turn_id=None)
        counted, cover, reading = await executor.run(
            [
                ToolCall("a", "library__count", {"to": 3}),
                ToolCall("b", "library__cover", {"title": "Dune"}),
                ToolCall("c", "library__reading", {"title": "Dune"}),
            ]
        )
    updates = [e.data for e in events if isinstance(e, ToolExecutionUpdate)]
    assert updates == [
        {"progress": float(n), "total": 3.0, "message": f"counted {n}"} for n in (1, 2, 3)
    ]
    assert counted.content == "counted to 3"
    caption, image = cover.content
    assert caption == {"type": "text", "text": "cover of Dune"}
    assert image["type"] == "image_url"
    assert image["image_url"]["url"].startswith("data:image/png;base64,iVBORw0KGgo")
    (audio,) = reading.content
    assert audio["type"] == "input_audio" and audio["input_audio"]["format"] == "wav"


def test_media_results_reach_the_model_as_parts_after_the_tool_messages() -> None:
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    calls = [ToolCall("a", "library__cover"), ToolCall("b", "library__count")]
    messages = [
        Message(role="assistant", content="", tool_calls=calls),
        Message(role="tool", tool_call_id="a", name="library__cover",
                content=[{"type": "text", "text": "cover of Dune"}, image]),
        Message(role="tool", tool_call_id="b", name="library__count", content="counted"),
        Message(role="assistant", content="Here it is."),
    ]  # fmt: skip
    _assistant, cover, count, attached, answer = to_llm_messages(messages)
    assert cover["role"] == "tool" and cover["content"].startswith("cover of Dune\n[1 attachment")
    assert "base64" not in cover["content"]  # the image is not flattened into text
    assert count == {"role": "tool", "tool_call_id": "b", "name": "library__count",
                     "content": "counted"}  # fmt: skip
    assert attached["role"] == "user"
    assert attached["content"][1] == image
    assert "library__cover (a)" in attached["content"][0]["text"]
    assert answer["content"] == "Here it is."
    # a JSON list that is not content parts stays a JSON value
    plain = to_llm_messages([Message(role="tool", tool_call_id="x", name="t", content=[1, 2])])
    assert plain[0]["content"] == "[1, 2]"


async def test_task_only_tools_are_withheld_over_the_handshake(tmp_path: Path) -> None:
    package = write(tmp_path / "pkg", {"mcps/library.mcp.yao": stdio_definition("2025-11-25")})
    async with ToolBox(package) as box:
        names = [t.bare_name for t in await box.tools()]
        assert names == ["count", "cover", "reading"]
        assert box.withheld() == ["library/archive"]
        # naming it in a selection is not an error: it is withheld there too
        selected = await box.tools([{"server_id": "library", "tools": ["count", "archive"]}])
        assert [t.bare_name for t in selected] == ["count"]


PROCESS_SRC = """
BOOKS = {"1": "Dune", "2": "Emma"}

def Find(args):
    return {"id": args["id"], "title": BOOKS[args["id"]]}

def Hours(args, ctx=None):
    return "Mon-Fri " + ("9-17" if ctx is not None else "?")

def Search(args):
    return [b for b in BOOKS.values() if args["q"].lower() in b.lower()]

def Ask(args):
    return [{"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Tell me about " + args["title"]}]
"""


def process_package(root: Path) -> Path:
    return write(
        root / "shelf",
        {
            "package.yao": json.dumps(
                {
                    "name": "Shelf",
                    "connector": "python:spy:reply",
                    "mcp": {
                        "servers": [
                            {
                                "server_id": "data",
                                "tools": ["search"],
                                "resources": ["data://books/2", "data://h*"],
                            },
                        ]
                    },
                }
            ),
            "src/spy.py": SPY,
            "src/books.py": PROCESS_SRC,
            "mcps/data.mcp.yao": json.dumps(
                {
                    "transport": "process",
                    "tools": {"search": "books.Search"},
                    "resources": {"detail": "books.Find", "hours": "books.Hours"},
                    "prompts": {"ask": "books.Ask"},
                }
            ),
            "mcps/mapping/data/resources/detail.res.yao": json.dumps(
                {"uri": "data://books/{id}", "name": "Book", "mimeType": "application/json"}
            ),
            "mcps/mapping/data/prompts/ask.pmt.yao": json.dumps(
                {
                    "description": "Ask about a book",
                    "arguments": [{"name": "title", "required": True}],
                }
            ),
        },
    )


@pytest.fixture
async def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    registry = AssistantRegistry(
        tmp_path / "assistants", cwd=tmp_path, memory_store=MemoryStore(tmp_path / "m.sqlite3")
    )
    yield registry
    await registry.aclose()


async def test_process_servers_have_resources_and_prompts(tmp_path: Path) -> None:
    async with ToolBox(process_package(tmp_path)) as box:
        listed = await box.list_resources("data")
        assert [(r["uri"], r["name"]) for r in listed] == [
            ("data://books/{id}", "Book"),
            ("data://hours", "hours"),
        ]
        (book,) = await box.read_resource("data", "data://books/1")
        assert book["mime_type"] == "application/json"
        assert json.loads(book["text"]) == {"id": "1", "title": "Dune"}
        (hours,) = await box.read_resource("data", "data://hours", ctx=object())
        assert hours == {"uri": "data://hours", "mime_type": "text/plain", "text": "Mon-Fri 9-17"}
        with pytest.raises(ToolError, match="no resource 'data://nope'"):
            await box.read_resource("data", "data://nope")
        assert await box.list_prompts("data") == [
            {
                "name": "ask",
                "description": "Ask about a book",
                "arguments": [{"name": "title", "description": "", "required": True}],
            }
        ]
        asked = await box.get_prompt("data", "ask", {"title": "Emma"})
        assert asked["messages"][1] == {"role": "user", "content": "Tell me about Emma"}


async def test_selected_resources_are_system_messages_in_the_models_context(
    registry: AssistantRegistry, tmp_path: Path
) -> None:
    process_package(tmp_path / "assistants")
    reply = await registry.get("shelf").respond("hi")
    seen = json.loads(reply.text)
    systems = [m["content"] for m in seen["messages"] if m["role"] == "system"]
    assert systems == [
        "MCP resource data://books/2 (Book, application/json) from server data:\n"
        '{"id": "2", "title": "Emma"}',
        "MCP resource data://hours (hours, text/plain) from server data:\nMon-Fri 9-17",
    ]
    assert seen["tools"] == ["data__search"]
    (note,) = [n for n in reply.trace if n.get("label") == "MCP resources in context"]
    assert note["input"] == {"uris": ["data://books/2", "data://hours"]}


async def test_create_hook_mcp_servers_select_resources(
    registry: AssistantRegistry, tmp_path: Path
) -> None:
    package = process_package(tmp_path / "assistants")
    (package / "src" / "index.py").write_text(
        "def Create(ctx, messages):\n"
        "    return {'mcp_servers': [{'server_id': 'data', 'resources': ['data://books/1']}]}\n"
    )
    reply = await registry.get("shelf").respond("hi")
    systems = [m["content"] for m in json.loads(reply.text)["messages"] if m["role"] == "system"]
    assert systems == [
        "MCP resource data://books/1 (Book, application/json) from server data:\n"
        '{"id": "1", "title": "Dune"}'
    ]


async def test_ctx_mcp_reaches_resources_and_prompts_with_yao_names(
    registry: AssistantRegistry, tmp_path: Path
) -> None:
    package = process_package(tmp_path / "assistants")
    (package / "src" / "index.py").write_text(
        "def Create(ctx, messages):\n"
        "    found = ctx.mcp.ListResources('data')\n"
        "    book = ctx.mcp.ReadResource('data', 'data://books/2')[0]['text']\n"
        "    prompt = ctx.mcp.get_prompt('data', 'ask', {'title': 'Dune'})\n"
        "    names = [p['name'] for p in ctx.mcp.list_prompts('data')]\n"
        "    ctx.Send(f\"{len(found)} {book} {prompt['messages'][1]['content']} {names}\")\n"
    )
    reply = await registry.get("shelf").respond("hi")
    assert [m["props"]["content"] for m in reply.sent] == [
        '2 {"id": "2", "title": "Emma"} Tell me about Dune [\'ask\']'
    ]


async def test_task_only_tool_is_noted_in_the_trace_and_not_offered(
    registry: AssistantRegistry, tmp_path: Path
) -> None:
    write(
        tmp_path / "assistants" / "lib",
        {
            "package.yao": '{"name": "Lib", "connector": "python:spy:reply"}',
            "src/spy.py": SPY,
            "mcps/library.mcp.yao": stdio_definition("legacy"),
        },
    )
    reply = await registry.get("lib").respond("hi")
    assert json.loads(reply.text)["tools"] == [
        "library__count",
        "library__cover",
        "library__reading",
    ]
    logs = [log["message"] for node in reply.trace for log in node.get("logs", [])]
    assert any("library/archive needs MCP task execution" in m for m in logs), reply.trace


def test_a_tool_result_object_is_not_mistaken_for_media() -> None:
    result = ToolResult("a", "t", [{"type": "image_url"}, {"type": "other"}])
    (message,) = to_llm_messages([Message(role="tool", tool_call_id="a", name="t",
                                          content=result.content)])  # fmt: skip
    assert message["content"] == json.dumps(result.content)

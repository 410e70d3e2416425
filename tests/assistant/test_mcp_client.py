"""Real MCP servers through the official SDK: the weather example over stdio, HTTP and SSE,
concurrency on one session, error results, restarts, and no orphan processes."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from agentcli.assistant.mcps import ToolServerSpec
from agentcli.assistant.package import load_package
from agentcli.assistant.tools import ToolBox
from agentcli.errors import ToolError
from agentcli.runtime.tools import ToolCall, ToolExecutor, ToolResult
from fixtures.weather_server import weather_server

WEATHER = Path(__file__).resolve().parents[2] / "assistants" / "weather"

PROBE_SERVER = '''
import asyncio, os, sys
from mcp.server.mcpserver import MCPServer

server = MCPServer("probe", log_level="WARNING")
arrived = []

@server.tool()
async def meet(who: str) -> str:
    """Return only once another call of meet is running too."""
    arrived.append(who)
    while len(arrived) < 2:
        await asyncio.sleep(0.005)
    return who

@server.tool()
def env(name: str) -> str:
    """An environment variable of the server process."""
    return os.environ.get(name, "<unset>")

@server.tool()
def words() -> list[str]:
    """A list, which the SDK wraps as {"result": [...]} in structured content."""
    return ["first", "second"]

@server.tool()
def lines():
    """Two text blocks and no structured content."""
    return ["first", "second"]

if __name__ == "__main__":
    server.run()
'''


def children() -> set[int]:
    """Live child processes of this test process (Linux /proc)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if int(ppid) == os.getpid() and state != "Z":
            found.add(int(entry.name))
    return found


needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


async def run_calls(tools: list[Any], *calls: tuple[str, dict[str, Any]]) -> list[ToolResult]:
    """Execute one batch the way the runtime does (parallel, errors as results)."""

    async def emit(event: Any) -> None:
        return None

    executor = ToolExecutor({t.name: t for t in tools}, emit=emit, turn_id=None)
    batch = [
        ToolCall(id=f"c{i}", name=name, arguments=args) for i, (name, args) in enumerate(calls)
    ]
    return await executor.run(batch)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def weather() -> AsyncIterator[ToolBox]:
    """One weather server for the module: it takes about half a second to start."""
    async with ToolBox.for_package(load_package(WEATHER)) as box:
        yield box


module_loop = pytest.mark.asyncio(loop_scope="module")


@module_loop
async def test_weather_tools_are_listed_from_the_server(weather: ToolBox) -> None:
    tools = await weather.tools()
    assert [t.name for t in tools] == ["weather__get_forecast", "weather__list_cities"]
    forecast = tools[0]
    assert (forecast.server, forecast.bare_name) == ("weather", "get_forecast")
    assert forecast.description.startswith("Get the weather forecast")
    assert forecast.parameters["required"] == ["city"]
    assert set(forecast.parameters["properties"]) == {"city", "days"}


@module_loop
async def test_get_forecast_returns_the_parsed_forecast(weather: ToolBox) -> None:
    (result,) = await run_calls(
        await weather.tools(), ("weather__get_forecast", {"city": "paris", "days": 3})
    )
    assert not result.is_error
    assert result.content["city"] == "Paris"
    assert [d["day"] for d in result.content["days"]] == [1, 2, 3]
    again = await weather.call_tool("weather", "get_forecast", {"city": "Paris", "days": 3})
    assert again == result.content  # deterministic fake data


@module_loop
async def test_two_tools_of_one_server_run_concurrently(weather: ToolBox) -> None:
    results = await run_calls(
        await weather.tools(),
        ("weather__get_forecast", {"city": "Tokyo"}),
        ("weather__list_cities", {}),
        ("weather__get_forecast", {"city": "Berlin", "days": 2}),
    )
    assert [r.is_error for r in results] == [False, False, False]
    assert results[0].content["city"] == "Tokyo"
    assert results[1].content == {"cities": ["Berlin", "London", "Paris", "Tokyo"]}
    assert len(results[2].content["days"]) == 2


@module_loop
async def test_server_error_is_an_error_result_and_a_ctx_tool_error(weather: ToolBox) -> None:
    (result,) = await run_calls(
        await weather.tools(), ("weather__get_forecast", {"city": "Atlantis"})
    )
    assert result.is_error
    assert "unknown city 'Atlantis'" in result.content
    with pytest.raises(ToolError, match=r"weather/get_forecast failed: .*days must be between"):
        await weather.call_tool("weather", "get_forecast", {"city": "Paris", "days": 9})
    (bad,) = await run_calls(await weather.tools(), ("weather__get_forecast", {"days": 1}))
    assert bad.is_error and "city" in bad.content  # validated before reaching the server


@module_loop
async def test_ctx_mcp_calls_on_a_stdio_server(weather: ToolBox) -> None:
    listed = await weather.list_tools("weather")
    assert [t["name"] for t in listed] == ["get_forecast", "list_cities"]
    assert listed[0]["input_schema"]["required"] == ["city"]
    cities, paris = await weather.call_tools_parallel(
        "weather",
        [{"name": "list_cities"}, {"name": "get_forecast", "arguments": {"city": "Paris"}}],
    )
    assert "Paris" in cities["cities"] and paris["city"] == "Paris"


@module_loop
async def test_the_weather_example_answers_offline_through_the_agent(weather: ToolBox) -> None:
    from agentcli.models.scripted import ScriptedModel
    from agentcli.runtime.agent import Agent

    model = ScriptedModel.from_file(WEATHER / "scripted.yml")
    agent = Agent(model, tools=await weather.tools())
    result = await agent.prompt("What's the weather in Paris?")
    forecast = await weather.call_tool("weather", "get_forecast", {"city": "Paris"})
    assert result.reason == "done"
    assert [r.name for r in result.tool_results] == ["weather__get_forecast"]
    assert result.messages[-1].text() == f"The forecast for Paris: {forecast['summary']}."
    result = await Agent(model, tools=await weather.tools()).prompt("weather in Atlantis?")
    assert [r.is_error for r in result.tool_results] == [True]
    assert "could not get that forecast" in result.messages[-1].text()
    assert "unknown city 'Atlantis'" in result.messages[-1].text()


@needs_proc
async def test_nothing_spawns_before_use_and_no_orphan_after_aclose() -> None:
    before = children()
    box = ToolBox.for_package(load_package(WEATHER))
    assert children() == before  # loading the package starts no server
    await box.tools()
    (pid,) = children() - before
    assert "mcps/server.py" in Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " ")
    await box.aclose()
    assert pid not in children()
    assert not Path(f"/proc/{pid}").exists()  # exited and reaped


@needs_proc
async def test_a_dead_server_is_reported_then_restarted() -> None:
    before = children()
    async with ToolBox(WEATHER) as box:
        await box.tools()
        (pid,) = children() - before
        os.kill(pid, signal.SIGKILL)
        await asyncio.sleep(0.1)
        with pytest.raises(ToolError, match=r"'weather' stopped .*restarted on next use"):
            await box.call_tool("weather", "list_cities")
        assert await box.call_tool("weather", "list_cities") == {
            "cities": ["Berlin", "London", "Paris", "Tokyo"]
        }
        (restarted,) = children() - before
        assert restarted != pid
    assert children() == before


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("probe")
    (folder / "mcps").mkdir()
    (folder / "mcps" / "probe_server.py").write_text(PROBE_SERVER)
    (folder / "mcps" / "probe.mcp.yao").write_text(
        '{"transport": "stdio", "command": "python", "args": ["mcps/probe_server.py"],'
        ' "env": {"PROBE_TOKEN": "$ENV.PROBE_SECRET"}}'
    )
    return folder


async def test_one_session_multiplexes_concurrent_calls(probe: Path) -> None:
    async with ToolBox(probe, env={"PROBE_SECRET": "s3"}) as box:
        tools = await box.tools()
        calls = [("probe__meet", {"who": "a"}), ("probe__meet", {"who": "b"})]
        # meet only returns once both calls are in the server at the same time
        results = await asyncio.wait_for(run_calls(tools, *calls), timeout=10)
        assert [r.content for r in results] == ["a", "b"]
        assert await box.call_tool("probe", "env", {"name": "PROBE_TOKEN"}) == "s3"
        assert await box.call_tool("probe", "env", {"name": "HOME"}) != "<unset>"
        # the SDK wraps a non-object return value as {"result": ...}; the tool gives the value
        assert await box.call_tool("probe", "words") == ["first", "second"]
        assert await box.call_tool("probe", "lines") == "first\nsecond"


async def test_a_server_that_cannot_start_shows_its_stderr(tmp_path: Path) -> None:
    (tmp_path / "mcps").mkdir()
    (tmp_path / "mcps" / "broken.py").write_text(
        "import sys\nprint('missing config: WEATHER_API', file=sys.stderr)\nsys.exit(3)\n"
    )
    (tmp_path / "mcps" / "broken.mcp.yao").write_text(
        '{"transport": "stdio", "command": "python", "args": ["mcps/broken.py"]}'
    )
    async with ToolBox(tmp_path) as box:
        with pytest.raises(ToolError) as error:
            await box.tools()
    message = str(error.value)
    assert "tool server 'broken' could not start" in message
    assert "missing config: WEATHER_API" in message
    assert "broken.mcp.yao" in message


@needs_proc
async def test_a_server_that_never_answers_times_out_and_is_stopped(tmp_path: Path) -> None:
    (tmp_path / "mcps").mkdir()
    (tmp_path / "mcps" / "mute.mcp.yao").write_text(
        '{"transport": "stdio", "command": "python", "timeout": 0.5,'
        ' "args": ["-c", "import time; time.sleep(60)"]}'
    )
    before = children()
    box = ToolBox(tmp_path)
    started = time.monotonic()
    with pytest.raises(ToolError, match=r"tool server 'mute' did not start within 0\.5s"):
        await box.tools()
    # The error is prompt; the server is stopped in the background, and gone after aclose.
    assert time.monotonic() - started < 1.5
    await box.aclose()
    assert children() == before


@pytest.fixture(scope="module", params=["http", "sse"])
def remote_weather(request: pytest.FixtureRequest) -> Iterator[ToolServerSpec]:
    """The weather example served over streamable HTTP or SSE on 127.0.0.1."""
    with weather_server(request.param) as url:
        yield ToolServerSpec(
            id="remote.weather",
            path=Path("remote.mcp.yao"),
            transport=request.param,
            url=url,
            headers={"Authorization": "Bearer test-token"},
        )


async def test_http_and_sse_servers(remote_weather: ToolServerSpec) -> None:
    async with ToolBox(WEATHER, specs=[remote_weather]) as box:
        tools = await box.tools()
        assert [t.name for t in tools] == [
            "remote_weather__get_forecast",
            "remote_weather__list_cities",
        ]
        forecast, cities = await run_calls(
            tools,
            ("remote_weather__get_forecast", {"city": "London"}),
            ("remote_weather__list_cities", {}),
        )
        assert forecast.content["city"] == "London" and "London" in cities.content["cities"]
        (error,) = await run_calls(tools, ("remote_weather__get_forecast", {"city": "Mars"}))
        assert error.is_error and "unknown city" in error.content

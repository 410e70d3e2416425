"""ToolBox: process tools, server selection, naming, ctx.mcp calls, lazy loading."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentcli.assistant.package import McpServerRef, load_package
from agentcli.assistant.tools import ToolBox, tool_name
from agentcli.errors import PackageError, ToolError
from agentcli.runtime.tools import ToolCall, ToolContext, ToolExecutor

REPO = Path(__file__).resolve().parents[2]

TOOLS_PY = '''
import asyncio

def Add(args):
    """Add two numbers."""
    return {"sum": args["a"] + args["b"]}

async def Echo(args):
    await asyncio.sleep(0)
    return args

def Who(args, ctx):
    return {"user": ctx.user, "args": args}

def Fail(args):
    raise ValueError("no such order: " + str(args.get("id")))

async def Slow(args):
    await asyncio.sleep(5)
'''

CALC_SCHEMA = """{
  "type": "object",
  "description": "Add a and b",
  "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
  "required": ["a", "b"],
  "x-process-args": [":arguments"],
}"""


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def package(tmp_path: Path) -> Path:
    return write(
        tmp_path / "calc",
        {
            "package.yao": '{"name": "Calc"}',
            "src/tools.py": TOOLS_PY,
            "src/lib/text.py": "def Upper(args):\n    return args['s'].upper()\n",
            "mcps/calc.mcp.yao": """{
  "label": "Calculator", "transport": "process",
  "tools": {"add": "tools.Add", "echo": "tools.Echo", "who": "tools.Who",
            "fail": "tools.Fail"},
}""",
            "mcps/mapping/calc/schemes/add.in.yao": CALC_SCHEMA,
            "mcps/sub/text.mcp.yao": '{"transport": "process", "tools": {"upper": "lib.text.Upper"}}',
        },
    )


async def run_calls(tools: list[Any], *calls: tuple[str, dict[str, Any]], services: Any = None):
    """Execute calls the way the runtime does (validation, errors as results)."""

    async def emit(event: Any) -> None:
        return None

    executor = ToolExecutor({t.name: t for t in tools}, emit=emit, turn_id=None, services=services)
    batch = [
        ToolCall(id=f"c{i}", name=name, arguments=args) for i, (name, args) in enumerate(calls)
    ]
    return await executor.run(batch)


class User:
    user = "ada"


async def test_process_tools_named_per_server_with_mapping_schema(package: Path) -> None:
    async with ToolBox(package) as box:
        tools = await box.tools()
    by_name = {t.name: t for t in tools}
    assert list(by_name) == [
        "calc__add",
        "calc__echo",
        "calc__who",
        "calc__fail",
        "sub_text__upper",
    ]
    add = by_name["calc__add"]
    assert (add.server, add.bare_name, add.description) == ("calc", "add", "Add a and b")
    assert add.parameters["required"] == ["a", "b"]
    assert "x-process-args" not in add.parameters
    echo = by_name["calc__echo"]
    assert echo.parameters == {"type": "object", "properties": {}}
    assert by_name["sub_text__upper"].server == "sub.text"
    assert add.to_openai()["function"]["name"] == "calc__add"


async def test_sync_async_ctx_and_nested_module_tools_through_the_runtime(package: Path) -> None:
    async with ToolBox(package) as box:
        tools = await box.tools()
        results = await run_calls(
            tools,
            ("calc__add", {"a": 2, "b": 3}),
            ("calc__echo", {"x": [1, 2]}),
            ("calc__who", {"q": 1}),
            ("sub_text__upper", {"s": "abc"}),
            services=User(),
        )
    assert [r.content for r in results] == [
        {"sum": 5},
        {"x": [1, 2]},
        {"user": "ada", "args": {"q": 1}},
        "ABC",
    ]
    assert not any(r.is_error for r in results)


async def test_raising_tool_and_invalid_arguments_become_error_results(package: Path) -> None:
    async with ToolBox(package) as box:
        tools = await box.tools()
        fail, bad = await run_calls(
            tools, ("calc__fail", {"id": 7}), ("calc__add", {"a": "two", "b": 3})
        )
    assert fail.is_error and "no such order: 7" in fail.content
    assert bad.is_error and "a" in bad.content and "number" in bad.content


async def test_selection_picks_servers_and_tool_subsets(package: Path) -> None:
    box = ToolBox(package, servers=[{"server_id": "calc", "tools": ["add", "who"]}])
    assert [t.name for t in await box.tools()] == ["calc__add", "calc__who"]
    box = ToolBox(package, servers=["sub.text"])
    assert [t.name for t in await box.tools()] == ["sub_text__upper"]
    box = ToolBox(package, servers=[McpServerRef("sub.text"), McpServerRef("calc", ["fail"])])
    assert [t.name for t in await box.tools()] == ["sub_text__upper", "calc__fail"]
    box = ToolBox(package, servers=[])
    assert await box.tools() == []


async def test_create_hook_override_replaces_the_package_selection(package: Path) -> None:
    box = ToolBox(package, servers=["calc"])
    override = await box.tools(servers=[{"server_id": "sub.text"}])
    assert [t.name for t in override] == ["sub_text__upper"]
    assert len(await box.tools()) == 4  # the package selection is unchanged
    with pytest.raises(PackageError, match=r"Create hook mcp_servers.*unknown tool server 'nope'"):
        await box.tools(servers=["nope"])


async def test_unknown_server_or_tool_in_selection_is_a_package_error(package: Path) -> None:
    with pytest.raises(PackageError, match=r"package\.yao: unknown tool server 'weather'"):
        ToolBox(package, servers=["weather"])
    box = ToolBox(package, servers=[{"server_id": "calc", "tools": ["add", "divide"]}])
    with pytest.raises(PackageError, match="server 'calc' has no tool 'divide'"):
        await box.tools()
    with pytest.raises(PackageError, match=r"servers\[0\]"):
        ToolBox(package, servers=[{"tools": ["add"]}])


async def test_for_package_reads_mcp_servers_and_defaults_to_all(package: Path) -> None:
    box = ToolBox.for_package(load_package(package))
    assert box.selection is None and len(await box.tools()) == 5
    (package / "package.yao").write_text(
        '{"name": "Calc", "mcp": {"servers": [{"server_id": "calc", "tools": ["add"]}]}}'
    )
    box = ToolBox.for_package(load_package(package))
    assert [t.name for t in await box.tools()] == ["calc__add"]


@pytest.mark.parametrize(
    ("ref", "files", "expected"),
    [
        ("tools.Missing", {"src/tools.py": "X = 1\n"}, "has no function 'Missing'"),
        ("nothere.Func", {}, "module file src/nothere.py not found"),
        ("Func", {}, "is not a function reference"),
        ("..secret.Func", {}, "is not a function reference"),
        ("a/b.Func", {}, "is not a function reference"),
    ],
)
async def test_bad_function_reference_names_the_mcp_file(
    tmp_path: Path, ref: str, files: dict[str, str], expected: str
) -> None:
    write(
        tmp_path,
        {"mcps/t.mcp.yao": f'{{"transport": "process", "tools": {{"x": "{ref}"}}}}', **files},
    )
    with pytest.raises(PackageError) as error:
        await ToolBox(tmp_path).tools()
    assert expected in str(error.value)
    assert "t.mcp.yao" in str(error.value)


async def test_function_outside_src_is_rejected(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "secret.py": "def Steal(args):\n    return 'stolen'\n",
            "mcps/t.mcp.yao": '{"transport": "process", "tools": {"x": "evil.Steal"}}',
        },
    )
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "evil.py").symlink_to(tmp_path / "secret.py")
    with pytest.raises(PackageError, match="outside the package's src/ folder"):
        await ToolBox(tmp_path).tools()


async def test_broken_module_reports_file_and_line(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "src/tools.py": "def Ok(args):\n    return 1\n\ndef Broken(args)\n    return 2\n",
            "mcps/t.mcp.yao": '{"transport": "process", "tools": {"x": "tools.Ok"}}',
        },
    )
    with pytest.raises(PackageError, match=r"src/tools\.py:4: syntax error"):
        await ToolBox(tmp_path).tools()
    write(tmp_path, {"src/tools.py": "import not_a_real_module_xyz\n"})
    with pytest.raises(PackageError, match="importing failed: ModuleNotFoundError"):
        await ToolBox(tmp_path).tools()


async def test_invalid_json_schema_in_mapping_names_the_schema_file(package: Path) -> None:
    write(
        package,
        {
            "mcps/mapping/calc/schemes/echo.in.yao": '{"type": "object", "properties": {"a": {"type": 5}}}'
        },
    )
    with pytest.raises(PackageError, match=r"echo\.in\.yao: invalid JSON Schema"):
        await ToolBox(package).tools()


async def test_ctx_mcp_calls(package: Path) -> None:
    async with ToolBox(package) as box:
        listed = await box.list_tools("calc")
        assert [t["name"] for t in listed] == ["add", "echo", "who", "fail"]
        assert listed[0]["server"] == "calc" and listed[0]["description"] == "Add a and b"
        assert len(await box.list_tools()) == 5
        assert await box.call_tool("calc", "add", {"a": 1, "b": 2}) == {"sum": 3}
        assert await box.call_tool("calc", "who", {}, ctx=User()) == {"user": "ada", "args": {}}
        assert await box.call_tools(
            "calc", [{"name": "add", "arguments": {"a": 1, "b": 1}}, {"name": "echo"}]
        ) == [{"sum": 2}, {}]
        with pytest.raises(ToolError, match="calc/fail failed: ValueError: no such order: 1"):
            await box.call_tool("calc", "fail", {"id": 1})
        with pytest.raises(ToolError, match="calc/add: invalid arguments"):
            await box.call_tool("calc", "add", {"a": 1})
        with pytest.raises(ToolError, match="server 'calc' has no tool 'nope'"):
            await box.call_tool("calc", "nope")
        with pytest.raises(ToolError, match="unknown tool server 'x'"):
            await box.call_tool("x", "add")


async def test_call_tools_parallel_runs_concurrently_and_keeps_order(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "src/meet.py": """
import asyncio
arrived = []

async def Meet(args):
    arrived.append(args["who"])
    while len(arrived) < 2:  # only returns when the other call is running too
        await asyncio.sleep(0.005)
    return args["who"]
""",
            "mcps/m.mcp.yao": '{"transport": "process", "tools": {"meet": "meet.Meet"}}',
        },
    )
    box = ToolBox(tmp_path)
    calls = [
        {"name": "meet", "arguments": {"who": "b"}},
        {"name": "meet", "arguments": {"who": "a"}},
    ]
    results = await asyncio.wait_for(box.call_tools_parallel("m", calls), timeout=5)
    assert results == ["b", "a"]


async def test_call_tools_parallel_raises_first_failure_after_all_ran(package: Path) -> None:
    box = ToolBox(package)
    calls = [{"name": "echo", "arguments": {"n": 1}}, {"name": "fail", "arguments": {"id": 2}}]
    with pytest.raises(ToolError, match="no such order: 2"):
        await box.call_tools_parallel("calc", calls)
    with pytest.raises(ToolError, match=r"must be \{name, arguments\}"):
        await box.call_tools("calc", ["add"])


async def test_process_tool_timeout(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "src/tools.py": TOOLS_PY,
            "mcps/t.mcp.yao": '{"transport": "process", "timeout": 0.05, "tools": {"slow": "tools.Slow"}}',
        },
    )
    (slow,) = await ToolBox(tmp_path).tools()
    with pytest.raises(ToolError, match=r"t/slow timed out after 0\.05s"):
        await slow.execute({}, ToolContext(ToolCall("1", slow.name)))


async def test_tool_name_collision_is_reported(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "src/tools.py": TOOLS_PY,
            "mcps/a.b.mcp.yao": '{"transport": "process", "tools": {"add": "tools.Add"}}',
            "mcps/a_b.mcp.yao": '{"transport": "process", "tools": {"add": "tools.Add"}}',
        },
    )
    box = ToolBox(tmp_path, servers=["a.b", "a_b"])
    with pytest.raises(PackageError, match="would both be called 'a_b__add'"):
        await box.tools()


def test_tool_name_rules() -> None:
    assert tool_name("weather", "get_forecast") == "weather__get_forecast"
    assert tool_name("agents.expense.tools", "setup") == "agents_expense_tools__setup"
    assert tool_name("my-server", "do it/now") == "my-server__do_it_now"
    long = tool_name("s" * 40, "t" * 40)
    assert len(long) == 64 and long.startswith("s" * 40 + "__")
    assert long != tool_name("s" * 40, "t" * 39 + "u")


async def test_nothing_is_imported_or_started_before_use(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "src/tools.py": "raise RuntimeError('imported too early')\n",
            "mcps/p.mcp.yao": '{"transport": "process", "tools": {"x": "tools.X"}}',
            "mcps/s.mcp.yao": '{"transport": "stdio", "command": "/nonexistent/server"}',
        },
    )
    box = ToolBox(tmp_path)  # reading the definitions neither imports src/ nor spawns
    with pytest.raises(ToolError, match="tool server 's' could not start"):
        await box.tools(servers=["s"])
    with pytest.raises(PackageError, match="imported too early"):
        await box.tools(servers=["p"])


def test_importing_the_module_imports_no_heavy_library() -> None:
    code = (
        "import sys, agentcli.assistant.tools;"
        "print([m for m in ('mcp', 'jsonschema', 'httpx2', 'anyio') if m in sys.modules])"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("def Hook(ctx):\n    pass\n", True),
        ("async def Hook(ctx):\n    pass\n", True),
        ("from helpers import make\nHook = make()\n", True),
        ("from helpers import Hook\n", True),
        ("try:\n    from fast import Hook\nexcept ImportError:\n    def Hook(ctx): ...\n", True),
        ("if True:\n    from fast import Hook\n", True),
        ("from helpers import *\n", True),  # cannot tell without importing: let it be
        ("def hook(ctx):\n    pass\n", False),
        ("def Other(ctx):\n    Hook = 1\n", False),  # a local, not the module's
        ("x = (\n", True),  # a syntax error is the call's to report, with its line
    ],
)
def test_check_src_function_reads_the_file_without_importing_it(tmp_path, source, found):
    from agentcli.assistant.tools import check_src_function
    from agentcli.errors import PackageError

    src = tmp_path / "src"
    src.mkdir()
    (src / "hooks.py").write_text("raise SystemExit('imported!')\n" + source)
    if found:
        check_src_function(src, "hooks.Hook", path=tmp_path / "package.yao")
    else:
        with pytest.raises(PackageError, match=r"src/hooks\.py has no function 'Hook'"):
            check_src_function(src, "hooks.Hook", path=tmp_path / "package.yao")
    with pytest.raises(PackageError, match=r"module file src/nope\.py not found"):
        check_src_function(src, "nope.Hook", path=tmp_path / "package.yao")

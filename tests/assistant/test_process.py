"""Process(): one resolver for hooks (``ctx.process``, ``from agentcli import process``),
``transport: process`` tools (with ``x-process-args`` and ``.out.yao``) and eval hooks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.assistant.process import map_process_args, process
from agentcli.assistant.session import AssistantRegistry, RequestOptions
from agentcli.assistant.state import StateDir
from agentcli.errors import PackageError, ToolError
from tests.assistant.data.models import CUSTOMER, ORDER, write_models

ROOT = Path(__file__).resolve().parents[2]

TOOLS = {
    "transport": "process",
    "tools": {
        "list_orders": "models.agents.shop.order.Paginate",
        "get_order": "models.agents.shop.order.Find",
        "own_model": "models.order.Get",
        "count": "scripts.stats.Count",
        "broken": "scripts.stats.Broken",
        "remote": "agents.helper.util.Echo",
    },
}
SCHEMES = {
    "list_orders.in.yao": {
        "type": "object",
        "properties": {"wheres": {"type": "array"}, "page": {"type": "integer"}},
        "x-process-args": [":arguments", "$args.page", 1],
    },
    "get_order.in.yao": {
        "type": "object",
        "properties": {"order": {"type": "object"}},
        "x-process-args": ["$args.order.id", {"withs": {"customer": {}}}],
    },
    "broken.out.yao": {"type": "object", "required": ["count"]},
    "count.out.yao": {"type": "object", "required": ["count"]},
}
STATS = '''
from agentcli import process


def Count(arguments):
    """Count the orders through Process from a sync tool."""
    return {"count": process("models.agents.shop.order.Paginate", {}, 1, 1)["total"]}


def Broken(arguments):
    return {"total": 1}
'''
HOOKS = """
from agentcli import process


async def Create(ctx, messages):
    first = await ctx.process("models.agents.shop.order.Find", 1)
    also = await process("scripts.stats.Count", {})
    ctx.memory.user.set("seen", [first["item"], also["count"]])
    return None
"""
SCRIPTED = """rules:
  - when: {user: list}
    call: {name: list_orders, arguments: {wheres: [{column: item, value: mug}], page: 1}}
  - when: {user: broken}
    call: {name: broken, arguments: {}}
  - when: {tool_result: list_orders}
    say: "{{ result.total }} of {{ result.pagesize }}"
  - say: done
"""


@pytest.fixture
async def registry(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    root = tmp_path / "assistants"
    shop = write_models(root / "shop", customer=CUSTOMER, order=ORDER)
    (shop / "package.yao").write_text('{"name": "Shop", "connector": "scripted"}')
    (shop / "scripted.yml").write_text(SCRIPTED)
    (shop / "mcps" / "mapping" / "shop" / "schemes").mkdir(parents=True)
    (shop / "mcps" / "shop.mcp.yao").write_text(json.dumps(TOOLS))
    for name, body in SCHEMES.items():
        (shop / "mcps" / "mapping" / "shop" / "schemes" / name).write_text(json.dumps(body))
    (shop / "src").mkdir()
    (shop / "src" / "stats.py").write_text(STATS)
    helper = root / "helper"
    (helper / "src").mkdir(parents=True)
    (helper / "package.yao").write_text('{"name": "Helper", "connector": "echo"}')
    (helper / "src" / "util.py").write_text(
        "def Echo(args, ctx=None):\n    return {'echo': args}\n"
    )
    registry = AssistantRegistry(root, cwd=tmp_path, state=StateDir(tmp_path / "state", "dir"))
    orders = registry.get("shop").processes
    await orders.run("models.agents.shop.customer.Create", [{"name": "Ada", "email": "a@x"}])
    for item in ("mug", "mug", "pan"):
        row = {"customer_id": 1, "item": item, "total": 5}
        await orders.run("models.agents.shop.order.Create", [row])
    yield registry
    await registry.aclose()


def test_x_process_args_map_arguments_as_yao_does():
    arguments = {"id": 7, "order": {"id": 3}}
    assert map_process_args(None, arguments) == [arguments]
    assert map_process_args([":arguments"], arguments) == [arguments]
    assert map_process_args(["$args.id", ":arguments"], arguments) == [7, arguments]
    assert map_process_args(["$args.order.id", "$args.nope", {"a": 1}], arguments) == [
        3,
        None,
        {"a": 1},
    ]


async def test_process_tools_call_model_methods_with_mapped_arguments(registry):
    box = registry.get("shop").toolbox
    page = await box.call_tool(
        "shop", "list_orders", {"wheres": [{"column": "item", "value": "mug"}], "page": 2}
    )
    assert (page["total"], page["page"], page["pagesize"], [r["id"] for r in page["data"]]) == (
        2,
        2,
        1,
        [2],
    )
    found = await box.call_tool("shop", "get_order", {"order": {"id": 3}})
    assert found["item"] == "pan" and found["customer"]["name"] == "Ada"
    own = await box.call_tool("shop", "own_model", {"wheres": [{"column": "item", "value": "pan"}]})
    assert [r["id"] for r in own] == [3]
    assert await box.call_tool("shop", "count", {}) == {"count": 3}
    assert await box.call_tool("shop", "remote", {"x": 1}) == {"echo": {"x": 1}}


async def test_a_result_that_breaks_its_out_schema_is_an_error_result_in_the_trace(registry):
    with pytest.raises(
        ToolError, match=r"broken returned a result that does not match broken\.out\.yao"
    ):
        await registry.get("shop").toolbox.call_tool("shop", "broken", {})
    reply = await registry.get("shop").respond("broken please")
    (call,) = reply.tool_calls
    assert call.tool == "broken" and "does not match broken.out.yao" in (call.error or "")
    assert "'count' is a required property" in call.error


async def test_a_model_sees_what_the_tool_answered(registry):
    reply = await registry.get("shop").respond("list mugs")
    assert reply.text == "2 of 1"  # Paginate(arguments, page=1, pagesize=1)


async def test_hooks_call_process_through_ctx_and_the_module_function(registry, tmp_path):
    shop = registry.get("shop")
    (shop.package.path / "src" / "index.py").write_text(HOOKS)
    from agentcli.assistant.hooks import Hooks

    shop.hooks = Hooks.load(shop.id, shop.package.path)
    await shop.respond("hello", RequestOptions(user_id="ada"))
    from agentcli.assistant.memory import Namespace

    assert Namespace(registry.memory_store, "user", "ada").get("seen") == ["mug", 3]


async def test_unknown_names_are_package_errors_naming_what_there_is(registry):
    processes = registry.get("shop").processes
    with pytest.raises(
        PackageError,
        match=r"no data model 'agents.shop.invoice' \(models: agents.shop.customer, agents.shop.order\)",
    ):
        processes.resolve("models.agents.shop.invoice.Get")
    with pytest.raises(PackageError, match="has no method 'Fetch'"):
        processes.resolve("models.agents.shop.order.Fetch")
    with pytest.raises(PackageError, match="no assistant 'nobody'"):
        processes.resolve("agents.nobody.util.Echo")
    with pytest.raises(PackageError, match=r"module file src/missing\.py not found"):
        processes.resolve("scripts.missing.Run")


def test_process_outside_a_running_assistant_says_so():
    with pytest.raises(ToolError, match="no assistant is running here"):
        process("models.agents.shop.order.Get")


async def test_out_yao_checks_the_results_of_a_real_stdio_mcp_server(tmp_path):
    import shutil

    from agentcli.assistant.tools import ToolBox

    weather = ROOT / "assistants" / "weather"
    package = Path(shutil.copytree(weather, tmp_path / "weather"))
    schemes = package / "mcps" / "mapping" / "weather" / "schemes"
    schemes.mkdir(parents=True)
    (schemes / "get_forecast.out.yao").write_text('{"type": "object", "required": ["pollen"]}')
    async with ToolBox(package) as box:
        with pytest.raises(
            ToolError,
            match=r"does not match get_forecast\.out\.yao at \$: 'pollen' is a required property",
        ):
            await box.call_tool("weather", "get_forecast", {"city": "Paris"})


def test_x_process_args_must_be_a_list(tmp_path):
    from agentcli.assistant.mcps import load_tool_servers

    package = tmp_path / "pkg"
    (package / "mcps" / "mapping" / "t" / "schemes").mkdir(parents=True)
    (package / "mcps" / "t.mcp.yao").write_text('{"transport": "process", "tools": {"a": "x.A"}}')
    bad = package / "mcps" / "mapping" / "t" / "schemes" / "a.in.yao"
    bad.write_text('{"type": "object", "x-process-args": ":arguments"}')
    with pytest.raises(PackageError, match=r"a\.in\.yao: `x-process-args` must be a list"):
        load_tool_servers(package)


def test_a_scope_keeps_a_request_ctx_weakly_and_any_other_value_as_it_is():
    import gc

    from agentcli.assistant.process import current_processes, processes_scope

    class Ctx:
        pass

    import contextvars
    import weakref

    marker, ctx = object(), Ctx()
    alive = weakref.ref(ctx)
    with processes_scope(marker, ctx):  # type: ignore[arg-type]
        found = current_processes()
        assert found is not None and found[1] is ctx
        copied = contextvars.copy_context()  # as every task the request starts does
    del ctx, found
    gc.collect()
    assert alive() is None  # a task's copy of the context did not keep the ctx alive
    assert copied.run(current_processes) == (marker, None)
    with processes_scope(marker, {"plain": 1}):  # type: ignore[arg-type]
        assert current_processes() == (marker, {"plain": 1})
    assert current_processes() is None

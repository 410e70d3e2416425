"""call_tool_function: sync tools run in a thread of their own (agentcli/threads.py), so
many blocking tools at once never queue behind asyncio's small shared pool (at most 32
threads, 6 on 2 cores)."""

from __future__ import annotations

import asyncio
import threading

from agentcli.runtime.tools import call_tool_function


async def test_forty_blocking_sync_tools_all_run_at_once():
    barrier = threading.Barrier(40, timeout=10)  # passes only if all 40 wait together

    def tool(arguments):
        barrier.wait()
        return arguments["n"], threading.current_thread().name

    results = await asyncio.gather(*(call_tool_function(tool, {"n": i}, None) for i in range(40)))
    assert [n for n, _ in results] == list(range(40))
    assert {name for _, name in results} == {"agentcli-tool"}


async def test_a_sync_tool_gets_ctx_only_when_it_asks_for_it():
    def plain(arguments):
        return arguments

    def with_ctx(arguments, ctx):
        return arguments, ctx

    assert await call_tool_function(plain, {"a": 1}, "services") == {"a": 1}
    assert await call_tool_function(with_ctx, {"a": 1}, "services") == ({"a": 1}, "services")


async def test_an_unhashable_callable_object_is_a_tool_function_too():
    class Handler:
        __hash__ = None  # e.g. a dataclass with eq

        def __call__(self, arguments, ctx):
            return arguments["n"], ctx

    assert await call_tool_function(Handler(), {"n": 1}, "services") == (1, "services")

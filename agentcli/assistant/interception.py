"""The one place a tool call can be answered other than by its tool: the ``ToolInterceptor``
of the current task (an eval case's stubs and faults), which the ``ToolBox`` consults on
every call — the model's calls of process and MCP tools and a hook's ``ctx.mcp`` calls alike.

Like cassettes it is per task: ``use(interceptor)`` makes it the one of the current task and
the tasks it starts (a case's hooks, its agent and a sync hook's ``ctx.mcp`` calls), so
cases running at once each have their own. It sits outside the cassette: a stubbed call
is neither recorded nor replayed, and ``live`` is the call as it would run without it
(through the cassette, if one is active).

A call it answers for the model comes back as a ``ToolResult`` whose ``details`` mark it
(``STUBBED``, ``FAULT``): the reply's ``ToolCall`` carries the mark into the trace. A
``ctx.mcp`` call's answer is the plain value (or a raised ``ToolError``), so the interceptor
marks the call itself instead (``InterceptedCall.marks``): the tool box then lists a stubbed
one among the reply's tool calls, where trajectory and ``tool_called`` assertions see it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["FAULT", "STUBBED", "InterceptedCall", "ToolInterceptor", "active", "use"]

# Keys of ToolResult.details that mark a call: answered by a stub, or failed by a fault.
STUBBED = "stubbed"
FAULT = "fault"

_ACTIVE: ContextVar[ToolInterceptor | None] = ContextVar("agentcli_interceptor", default=None)


@dataclass(frozen=True, slots=True)
class InterceptedCall:
    """One tool call as the interceptor sees it: the server, the bare tool name, the
    arguments, whether a failure raises (``ctx.mcp``) or is an error result (the model's
    call), and the server's timeout (what a timeout says). ``marks`` is what the
    interceptor did to a ``raising`` call (``{STUBBED: True}``, ``{FAULT: "malformed"}``),
    whose answer carries no details of its own."""

    server: str
    tool: str
    arguments: dict[str, Any]
    raising: bool
    timeout: float | None = None
    marks: dict[str, Any] = field(default_factory=dict)


class ToolInterceptor(Protocol):
    """Answers a tool call, or has ``live()`` answer it."""

    async def call(self, call: InterceptedCall, live: Callable[[], Awaitable[Any]]) -> Any:
        """The call's outcome: a value (or ``ToolResult``), or a raised ``ToolError`` for a
        ``raising`` call."""
        ...


def active() -> ToolInterceptor | None:
    """The interceptor of the current task, if any."""
    return _ACTIVE.get()


@contextlib.contextmanager
def use(interceptor: ToolInterceptor | None) -> Iterator[None]:
    """Make ``interceptor`` the one of this task (and the tasks it starts)."""
    token = _ACTIVE.set(interceptor)
    try:
        yield
    finally:
        _ACTIVE.reset(token)

"""The value types of one request to an assistant: ``RequestOptions`` in, ``Reply`` out,
``ToolCall`` for each tool call of the turn (the same type the eval results carry)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentcli.models.base import Usage

if TYPE_CHECKING:
    from agentcli.assistant.context import OutputMessage
    from agentcli.assistant.sandbox.protocol import Sandbox
    from agentcli.runtime.agent import TurnResult
    from agentcli.runtime.events import Event, TurnReason

__all__ = ["Reply", "RequestOptions", "ToolCall"]


@dataclass(slots=True)
class RequestOptions:
    """How to run a request; ``connector`` is the caller's override (CLI ``-c``, else the
    case's ``options.connector``). ``on_event`` sees the agent's events, ``on_output`` the
    messages hooks send (``ctx.send``)."""

    connector: str | None = None
    locale: str | None = None
    user_id: str = ""
    team_id: str = ""
    chat_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    authorized: dict[str, Any] = field(default_factory=dict)
    skip: dict[str, Any] = field(default_factory=dict)
    mode: str | None = None
    max_steps: int | None = None  # the caller's limit (CLI, case); None: the package's
    on_event: Callable[[Event], object] | None = None
    on_output: Callable[[OutputMessage], object] | None = None
    # A workspace the caller lends the request as its ctx.sandbox (eval: the case's, seeded
    # and asserted on); the request does not remove it. None: the package's spec decides.
    sandbox: Sandbox | None = None


@dataclass(slots=True)
class ToolCall:
    """One tool call of a turn, as replies, traces and reports show it: the bare tool name,
    its server, the arguments and the result or error."""

    id: str = ""
    server: str = ""
    tool: str = ""
    arguments: Any = None
    result: Any = None
    error: str | None = None
    error_type: str | None = None  # the exception class of a tool that raised
    stubbed: bool = False  # answered by a stub of the case (tools.stubs), not the tool
    fault: str | None = None  # the kind of fault injected into it (--faults, tools.faults)

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``id, server, tool, arguments, result, error[, error_type][, stubbed]
        [, fault]`` (the marks only when set)."""
        data = {
            "id": self.id,
            "server": self.server,
            "tool": self.tool,
            "arguments": self.arguments,
            "result": self.result,
            "error": self.error,
        }
        if self.error_type is not None:
            data["error_type"] = self.error_type
        if self.stubbed:
            data["stubbed"] = True
        if self.fault is not None:
            data["fault"] = self.fault
        return data


@dataclass(slots=True)
class Reply:
    """What one request produced: ``output`` is the Next hook's data when it returned some,
    else the final assistant text; ``sent`` the messages hooks sent; ``trace`` the trace
    nodes hooks and tools recorded."""

    output: Any
    text: str
    status: TurnReason
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    next: Any = None
    error: str | None = None
    error_kind: str | None = None
    trace: list[dict[str, Any]] = field(default_factory=list)
    sent: list[dict[str, Any]] = field(default_factory=list)
    assistant_id: str = ""
    connector: str = ""
    turn: TurnResult | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form (without the runtime's turn object)."""
        return {
            "assistant_id": self.assistant_id,
            "connector": self.connector,
            "status": self.status,
            "output": self.output,
            "text": self.text,
            "next": self.next,
            "tool_calls": [call.to_dict() for call in self.tool_calls],
            "usage": self.usage.to_dict(),
            "error": self.error,
            "error_kind": self.error_kind,
            "sent": self.sent,
            "trace": self.trace,
        }

"""The tool world of one case run: its stubs answer the calls they match, unmatched calls
run the real tool (or fail, ``unmatched: error``), and a fault plan makes a seeded fraction
of the calls fail. It is the ``ToolInterceptor`` the runner makes active for the case
(``agentcli.assistant.interception``), so it sees the model's calls of process and MCP
tools and the hooks' ``ctx.mcp`` calls alike.

Whether a call fails, and how, depends only on the seed, the case id, the run and the call
itself: its tool, its arguments and how many times the same call was made before in the
run (its index among its equals). Each decision comes from a ``random.Random`` seeded with
that text (hashed with SHA-512 by ``random``), never the global generator, so the same seed
fails the same calls in any process, under any ``--parallel`` and whatever order the calls
of one step happen to start in.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Awaitable, Callable
from typing import Any

from agentcli.assistant.interception import FAULT, STUBBED, InterceptedCall
from agentcli.assistant.request import ToolCall
from agentcli.errors import ToolError
from agentcli.eval.cases.world import CaseTools, ToolStub
from agentcli.eval.checks.matching import call_names, match_value
from agentcli.faults import FaultKind, FaultPlan
from agentcli.jsonsafe import json_safe
from agentcli.runtime.tools import ToolResult, result_text

__all__ = ["ToolWorld", "fault_for", "garbled", "world_for"]

# Why a call's answer is an error (the trace's error_type): no stub matched it.
UNMATCHED_ERROR = "UnmatchedToolCall"


def world_for(
    tools: CaseTools | None, run_faults: FaultPlan | None, case_id: str, run: int | None
) -> ToolWorld | None:
    """The world of a case run (its tools over the run's ``--faults``), or None when it
    changes nothing: the case then runs without an interceptor."""
    faults = tools.faults if tools is not None and tools.faults is not None else run_faults
    if faults is not None and not faults.active:
        faults = None
    if faults is None and (tools is None or (not tools.stubs and tools.unmatched != "error")):
        return None
    return ToolWorld(tools or CaseTools(), faults, case_id, run or 1)


def fault_for(plan: FaultPlan, case_id: str, run: int, call: str) -> FaultKind | None:
    """The fault ``call`` (a text naming one call of the run) gets under ``plan`` (None:
    it runs)."""
    generator = random.Random(f"{plan.seed}:{case_id}:{run}:{call}")
    if generator.random() >= plan.rate:
        return None
    return plan.kinds[generator.randrange(len(plan.kinds))]


def garbled(value: Any) -> str:
    """A result as a connection cut off mid-answer leaves it: its text cut in half (never
    valid JSON for an object or list, and never the value the schema promised)."""
    text = result_text(json_safe(value))
    return text[: len(text) // 2]


class ToolWorld:
    """The interceptor of one case run (a fresh one for each run and each retry)."""

    def __init__(self, tools: CaseTools, faults: FaultPlan | None, case_id: str, run: int) -> None:
        self.tools = tools
        self.faults = faults
        self.case_id = case_id
        self.run = run
        self._made: dict[str, int] = {}  # each call (tool and arguments): times made
        self._spent: set[int] = set()  # the ``once`` stubs that have answered

    async def call(self, call: InterceptedCall, live: Callable[[], Awaitable[Any]]) -> Any:
        """Answer ``call`` by its stub, a fault, an unmatched error, or ``live()``."""
        fault = self._fault(call) if self.faults is not None else None
        if fault is not None and fault != "malformed":
            return _failure(call, _fault_message(call, fault), {FAULT: fault})
        stub = self.stub_for(call)
        if stub is not None:
            outcome = await self._stubbed(call, stub)
        elif self.tools.unmatched == "error":
            message = (
                f"no stub of this case matches {call.server}/{call.tool}"
                f" {json.dumps(json_safe(call.arguments), ensure_ascii=False)}"
                " (tools.unmatched: error)"
            )
            return _failure(call, message, {"error_type": UNMATCHED_ERROR})
        else:
            outcome = await live()
        return _malformed(call, outcome) if fault == "malformed" else outcome

    def _fault(self, call: InterceptedCall) -> FaultKind | None:
        """The fault this call gets: decided by the call and its index among its equals."""
        assert self.faults is not None
        arguments = json.dumps(json_safe(call.arguments), sort_keys=True, ensure_ascii=False)
        key = f"{call.server}/{call.tool}:{arguments}"
        index = self._made.get(key, 0)
        self._made[key] = index + 1
        return fault_for(self.faults, self.case_id, self.run, f"{key}:{index}")

    def stub_for(self, call: InterceptedCall) -> ToolStub | None:
        """The first stub that answers ``call`` (a ``once`` stub only the first time)."""
        names: set[str] | None = None  # every name the call answers to, made when needed
        for position, stub in enumerate(self.tools.stubs):
            if position in self._spent:
                continue
            if stub.name != call.tool:
                if names is None:
                    names = call_names(ToolCall(server=call.server, tool=call.tool))
                if stub.name not in names:
                    continue
            if stub.has_arguments and not match_value(call.arguments, stub.arguments):
                continue
            if stub.once:
                self._spent.add(position)
            return stub
        return None

    async def _stubbed(self, call: InterceptedCall, stub: ToolStub) -> Any:
        """The stub's answer, after its delay."""
        if stub.delay:
            await asyncio.sleep(stub.delay)
        call.marks[STUBBED] = True  # a ctx.mcp call's answer is plain: the call is marked
        if stub.error is not None:
            return _failure(call, stub.error, {STUBBED: True})
        if call.raising:
            return stub.result
        return ToolResult("", call.tool, stub.result, details={STUBBED: True})


def _failure(call: InterceptedCall, message: str, details: dict[str, Any]) -> Any:
    """A failed call: raised for ``ctx.mcp``, an error result (marked) for the model."""
    if call.raising:
        raise ToolError(message)
    return ToolResult("", call.tool, message, is_error=True, details=details)


def _fault_message(call: InterceptedCall, fault: FaultKind) -> str:
    """What an injected timeout or error says (as the real failure would)."""
    where = f"{call.server}/{call.tool}" if call.server else call.tool
    if fault == "timeout":
        after = f" after {call.timeout:g}s" if call.timeout else ""
        return f"{where} timed out{after}"
    return f"{where} failed: service unavailable"


def _malformed(call: InterceptedCall, outcome: Any) -> Any:
    """The call's outcome garbled (a failed call stays as it failed), marked."""
    if isinstance(outcome, ToolResult):
        if outcome.is_error:
            return outcome
        outcome.content = garbled(outcome.content)
        outcome.details[FAULT] = "malformed"
        return outcome
    if call.raising:
        call.marks[FAULT] = "malformed"
        return garbled(outcome)
    return ToolResult("", call.tool, garbled(outcome), details={FAULT: "malformed"})

"""How one case becomes a result: the ``CaseExecutor`` protocol and what its three
implementations share.

An executor plays a case against the assistant and judges it — single-turn
(``single_turn``), a simulated conversation (``dynamic``), a script test function
(``scripts``). It does not know the runner: scheduling, retries, Before/After hooks,
captured output, fail-fast and the order of results are the runner's. The runner decides
the timeout; the executor honours it where its own work starts and ends, because only it
knows what a half-finished case leaves to report.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Protocol

from agentcli.assistant.sandbox import merge_spec, open_sandbox
from agentcli.eval.checks.assertions import AssertionEnv, Subject
from agentcli.eval.results.model import CaseResult, Trace
from agentcli.eval.run.services import HookRunner, judge_with_agent
from agentcli.eval.run.state_fixtures import RunState
from agentcli.jsonsafe import json_safe

if TYPE_CHECKING:
    from agentcli.assistant.request import Reply, ToolCall
    from agentcli.assistant.sandbox import Sandbox
    from agentcli.assistant.session import Assistant, AssistantRegistry
    from agentcli.assistant.tools import ToolBox
    from agentcli.eval.cases.model import Case
    from agentcli.eval.run.runner import EvalConfig

__all__ = [
    "CaseExecutor",
    "JudgingExecutor",
    "assertion_env",
    "case_sandbox",
    "elapsed_ms",
    "error_result",
    "judges_steps",
    "step_limit_message",
    "trace_of",
]

# Assertions that judge how a turn ended: with one of them a turn cut at the step limit is
# theirs to pass or fail, not failed outright.
STEP_ASSERTIONS = frozenset(("steps", "stop_reason"))
_LAST_CALLS = 3  # tool calls named in the step-limit message


class CaseExecutor(Protocol):
    """Plays one run of a case into its result (hooks and retries are the caller's)."""

    async def execute(
        self, case: Case, run: int | None, *, started: float, timeout: float
    ) -> CaseResult:
        """The result of ``case`` (``run`` of ``--runs``), timed from ``started``
        (``time.perf_counter``), the agent's part bounded by ``timeout`` seconds."""
        ...


class JudgingExecutor:
    """An executor of case-file cases: it talks to the run's assistant as ``config`` says
    and judges through ``env``."""

    def __init__(self, config: EvalConfig, env: AssertionEnv) -> None:
        self.config = config
        self.env = env


def assertion_env(
    registry: AssistantRegistry,
    hooks: HookRunner,
    tools: ToolBox | None = None,
    *,
    assistant: Assistant | None = None,
) -> AssertionEnv:
    """What assertions and checkpoints may call: the LLM judge, ``script`` functions, the
    schemas of the tools in ``tools`` (the assistant under test's) and the run's state."""

    async def judge(
        use: str, criteria: Any, subject: Subject, options: dict[str, Any]
    ) -> dict[str, Any]:
        return await judge_with_agent(
            registry, use, criteria, subject.output, subject.input, options
        )

    async def tool_schema(call: ToolCall) -> dict[str, Any] | None:
        # The tools were listed to run the case: this reads the toolbox's cache.
        if tools is None or call.server not in tools.specs:
            return None
        listed = await tools.list_tools(call.server)
        schema = next((t["input_schema"] for t in listed if t["name"] == call.tool), None)
        return schema if isinstance(schema, dict) else None

    state = RunState(registry, assistant) if assistant is not None else None
    return AssertionEnv(judge=judge, script=hooks.resolve, tool_schema=tool_schema, state=state)


@asynccontextmanager
async def case_sandbox(config: EvalConfig, case: Case) -> AsyncIterator[Sandbox | None]:
    """The case's workspace, seeded, when it or its package asks for one (None else):
    lent to every request of the case, read by its file assertions, then removed unless
    ``--keep-sandboxes``. A backend that cannot run here raises SandboxError."""
    spec = merge_spec(config.assistant.package.sandbox, case.sandbox)
    if spec is None:
        yield None
        return
    sandbox = await open_sandbox(spec)
    try:
        yield sandbox
    finally:
        if not config.keep_sandboxes:
            sandbox.remove()


def kept_sandbox(config: EvalConfig, sandbox: Sandbox | None) -> str | None:
    """The workdir to record in the result: only a kept one (a removed one is gone)."""
    return str(sandbox.workdir) if sandbox is not None and config.keep_sandboxes else None


def error_result(case: Case, run: int | None, message: str, started: float) -> CaseResult:
    """A case that could not be judged: ``error`` with ``message``."""
    return CaseResult(
        id=case.id,
        status="error",
        input=case.input,
        expected=case.expected,
        duration_ms=elapsed_ms(started),
        error=message,
        metadata=case.metadata or {},
        run=run,
    )


def elapsed_ms(started: float) -> float:
    """Milliseconds since ``started`` (``time.perf_counter``), to the microsecond."""
    return round((time.perf_counter() - started) * 1000, 3)


def trace_of(reply: Reply) -> Trace:
    """The report trace of an assistant reply: its tool calls and usage are the trace's
    (the reply is the case's own; nothing else holds it)."""
    # What user code returned (tool results, Next data, trace nodes) as plain JSON: a value
    # inside itself or too deep for the writers must not cost the results file.
    for call in reply.tool_calls:
        call.arguments = json_safe(call.arguments)
        call.result = json_safe(call.result)
    return Trace(
        completion=reply.text,
        tool_calls=reply.tool_calls,
        next=json_safe(reply.next),
        usage=reply.usage,
        logs=json_safe(reply.trace) or None,
        sent=json_safe(reply.sent) or None,
        steps=reply.turn.steps if reply.turn is not None else None,
        stop_reason=reply.status,
    )


def step_limit_message(trace: Trace) -> str:
    """Why a turn cut at ``max_steps`` failed: how many model calls it made and the last
    tool calls, which show where the agent was going."""
    steps = trace.steps or 0
    text = f"stopped at the step limit after {steps} model call{'s' if steps != 1 else ''}"
    text += " (max_steps) before answering"
    calls = [call.tool for call in trace.tool_calls]
    if len(calls) > _LAST_CALLS:
        text += f"; the last {_LAST_CALLS} of {len(calls)} tool calls: "
        text += ", ".join(calls[-_LAST_CALLS:])
    elif calls:
        text += "; tool calls: " + ", ".join(calls)
    return text


def judges_steps(case: Case) -> bool:
    """Whether the case asserts on how its turns end (``steps``, ``stop_reason``)."""
    return any(a.type in STEP_ASSERTIONS for a in case.effective_assertions())

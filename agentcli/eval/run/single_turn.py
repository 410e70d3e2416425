"""The single-turn executor: send a case's messages once, assert on the reply."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from agentcli.errors import AgentCliError, SandboxError
from agentcli.eval.checks.assertions import Subject, evaluate, output_under_test
from agentcli.eval.results.model import AssertionResult, CaseResult, Trace
from agentcli.eval.run.attribution import of_exception, of_kind
from agentcli.eval.run.executor import (
    JudgingExecutor,
    case_sandbox,
    elapsed_ms,
    error_result,
    judges_steps,
    kept_sandbox,
    step_limit_message,
    trace_of,
)
from agentcli.models.retry import RETRY_LOG

if TYPE_CHECKING:
    from agentcli.assistant.sandbox import Sandbox
    from agentcli.eval.cases.model import Case

__all__ = ["SingleTurnExecutor"]


class SingleTurnExecutor(JudgingExecutor):
    """One request to the assistant, then the case's assertions on what it answered."""

    async def execute(
        self, case: Case, run: int | None, *, started: float, timeout: float
    ) -> CaseResult:
        """Send, then judge, in the case's sandbox when it has one."""
        if case.sandbox is None and self.config.assistant.package.sandbox is None:
            return await self._execute(case, run, started, timeout, None)  # the common case
        try:
            async with case_sandbox(self.config, case) as sandbox:
                result = await self._execute(case, run, started, timeout, sandbox)
                result.sandbox = kept_sandbox(self.config, sandbox)
                return result
        except SandboxError as error:  # the sandbox could not be made
            return error_result(case, run, str(error), started)

    async def _execute(
        self, case: Case, run: int | None, started: float, timeout: float, sandbox: Sandbox | None
    ) -> CaseResult:
        """Send, then judge: the send is bounded by ``timeout``, the judging is not."""
        options = self.config.request_options(case, run)
        options.sandbox = sandbox
        conversation = self.config.assistant.conversation(options)
        retries: list[dict[str, Any]] = []
        RETRY_LOG.set(retries)  # this task's model calls record their retries here
        try:
            async with asyncio.timeout(timeout):
                reply = await conversation.send(case.build_messages())
        except TimeoutError:
            result = error_result(case, run, f"timed out after {timeout:g}s", started)
            result.status = "timeout"
            if retries:
                result.trace = Trace(retries=retries)
            return result
        except AgentCliError as error:  # a hook's failure (HookError) among them
            result = error_result(case, run, str(error), started)
            result.attribution = of_exception(error)
            return result
        duration_ms = elapsed_ms(started)
        trace = trace_of(reply)
        trace.retries = retries or None
        if reply.status in ("failed", "aborted"):
            reason = reply.error or f"turn {reply.status}"
            if reply.error_kind:
                reason = f"[{reply.error_kind}] {reason}"
            result = error_result(case, run, reason, started)
            result.trace = trace
            result.output = output_under_test(trace)
            result.attribution = of_kind(reply.error_kind)
            return result
        workdir = sandbox.workdir if sandbox is not None else None
        subject = Subject.from_trace(
            trace, duration_ms=duration_ms, input=case.input, sandbox=workdir
        )
        assertions = await evaluate(case.effective_assertions(), subject, self.env)
        passed = all(a.passed for a in assertions)
        unfinished = None
        if reply.status == "max_steps" and not judges_steps(case):
            # The agent ran out of its step budget: its failure, not the harness's
            # (docs/eval.md, "Step limits"), unless the case judges the limit itself.
            passed, unfinished = False, step_limit_message(trace)
        return CaseResult(
            id=case.id,
            status="passed" if passed else "failed",
            input=case.input,
            output=subject.output,
            expected=case.expected,
            duration_ms=duration_ms,
            error=unfinished or _first_failure(assertions),
            assertions=assertions,
            trace=trace,
            metadata=case.metadata or {},
            run=run,
        )


def _first_failure(assertions: list[AssertionResult]) -> str | None:
    """The message of the first assertion that failed."""
    for assertion in assertions:
        if not assertion.passed:
            return assertion.message
    return None

"""Dynamic (simulator-driven) cases: a conversation between the target assistant and a
simulated user, judged by checkpoints (SPEC 5.5).

Turn 1 sends the case's ``input`` (or, without one, the simulator's first message); every
later user message comes from the simulator assistant, which receives ``{persona, goal,
conversation, turn_number, max_turns, checkpoints_reached, checkpoints_pending, extra}`` and
answers ``{message, goal_achieved, reasoning}`` (fenced, bare or inside prose; plain text is
taken as the message). After each agent turn the pending checkpoints whose ``after``
dependencies are reached are asserted, in declaration order, on that turn's output and tool
calls, so a checkpoint can be reached in the same turn as the one it waits for.

The case passes once every required checkpoint is reached; it fails when ``max_turns`` pass
or the simulator declares the goal achieved first; it errors when the agent or the simulator
does. The case timeout covers the whole conversation and cancels the call in flight.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentcli.choices import Attribution
from agentcli.errors import AgentCliError, ConfigError, SandboxError
from agentcli.eval.cases.inputs import messages_text
from agentcli.eval.cases.load import CaseInfo
from agentcli.eval.cases.model import Case, Checkpoint
from agentcli.eval.checks.assertions import AssertionEnv, Subject, evaluate, output_under_test
from agentcli.eval.checks.matching import extract_json, output_text
from agentcli.eval.results.model import (
    AssertionResult,
    CaseResult,
    CheckpointState,
    Status,
    ToolCall,
    Trace,
    Turn,
    Usage,
)
from agentcli.eval.run.attribution import of_assertions, of_exception, of_kind
from agentcli.eval.run.executor import (
    JudgingExecutor,
    case_sandbox,
    error_result,
    kept_sandbox,
    step_limit_message,
    trace_of,
)
from agentcli.eval.run.services import ask_helper

if TYPE_CHECKING:
    from agentcli.assistant.conversation import Conversation
    from agentcli.assistant.sandbox import Sandbox
    from agentcli.assistant.session import AssistantRegistry
    from agentcli.eval.run.runner import EvalConfig

__all__ = [
    "DynamicExecutor",
    "SimulatorReply",
    "check_simulators",
    "parse_simulator_reply",
    "simulator_id",
    "simulator_request",
]

_SIMULATOR_KEYS = ("message", "goal_achieved", "reasoning")


@dataclass(slots=True)
class SimulatorReply:
    """The simulated user's next move."""

    message: str
    goal_achieved: bool = False
    reasoning: str = ""


def parse_simulator_reply(answer: Any) -> SimulatorReply:
    """Read a simulator answer: a JSON object (fenced, bare or inside prose) with ``message``,
    ``goal_achieved`` and ``reasoning``; other text is the message itself. Raises ValueError
    for an empty answer or a JSON answer without a usable ``message``."""
    if isinstance(answer, dict):
        return _from_object(answer)
    text = output_text(answer).strip()
    if not text:
        raise ValueError("simulator returned an empty message")
    try:
        data = extract_json(text)
    except ValueError:
        return SimulatorReply(message=text)
    if isinstance(data, dict) and any(key in data for key in _SIMULATOR_KEYS):
        return _from_object(data)
    if _is_only_json(text):
        raise ValueError(
            'simulator answered JSON without a "message": expected '
            '{"message": str, "goal_achieved": bool, "reasoning": str}, got ' + _clip(text)
        )
    return SimulatorReply(message=text)  # prose that merely mentions some JSON


def _from_object(data: dict[str, Any]) -> SimulatorReply:
    goal = data.get("goal_achieved", False)
    if isinstance(goal, str):
        goal = goal.strip().lower() == "true"
    message = data.get("message")
    if message is None or (isinstance(message, str) and not message.strip()):
        if goal is True:
            return SimulatorReply(message="", goal_achieved=True, reasoning=_reason(data))
        raise ValueError(f'simulator returned an empty "message": {_clip(json.dumps(data))}')
    if not isinstance(message, str):
        raise ValueError(f'simulator "message" must be text, got {type(message).__name__}')
    return SimulatorReply(message=message, goal_achieved=goal is True, reasoning=_reason(data))


def _reason(data: dict[str, Any]) -> str:
    return str(data.get("reasoning") or "")


def _is_only_json(text: str) -> bool:
    """Whether the whole answer is JSON (bare, or nothing but fenced blocks)."""
    stripped = text.strip()
    if stripped.startswith("```") and stripped.endswith("```"):
        return True
    return stripped[:1] in "{[" and stripped[-1:] in "}]"


def _clip(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def simulator_request(
    case: Case,
    conversation: list[dict[str, Any]],
    turn: int,
    reached: list[str],
    pending: list[str],
) -> dict[str, Any]:
    """The JSON a simulator receives; persona and goal come from ``simulator.options.metadata``
    (when they are strings) and every other metadata key goes to ``extra``; checkpoint ids
    are listed in declaration order."""
    metadata = dict(case.simulator.options.metadata) if case.simulator else {}
    persona = metadata.pop("persona") if isinstance(metadata.get("persona"), str) else None
    goal = metadata.pop("goal") if isinstance(metadata.get("goal"), str) else None
    return {
        "persona": persona,
        "goal": goal,
        "conversation": conversation,
        "turn_number": turn,
        "max_turns": case.max_turns,
        "checkpoints_reached": reached,
        "checkpoints_pending": pending,
        "extra": metadata,
    }


def simulator_id(case: Case, default: str | None) -> str:
    """The simulator of a case: its ``simulator.use``, else ``--simulator``, else the
    shipped ``builtin.simulator``."""
    return _simulator_ref(case.simulator.use if case.simulator is not None else None, default)


def _simulator_ref(use: str | None, default: str | None) -> str:
    from agentcli.builtin import DEFAULT_SIMULATOR

    return (use or default or DEFAULT_SIMULATOR).removeprefix("agents:")


def check_simulators(
    cases: Iterable[CaseInfo],
    default: str | None,
    registry: AssistantRegistry,
    default_source: str | None = None,
) -> None:
    """Before anything runs: the simulator of every dynamic case resolves. ``default_source``
    says where ``default`` came from (``agentcli.yml:4: simulator``), for an error about it."""
    dynamic = [c for c in cases if c.dynamic and not c.skip]
    for ref in sorted({_simulator_ref(c.simulator, default) for c in dynamic}):
        try:
            registry.get(ref)
        except AgentCliError as error:
            by_default = (
                default is not None
                and ref == _simulator_ref(None, default)
                and any(c.simulator is None for c in dynamic)
            )
            where = f"{default_source}: " if default_source and by_default else ""
            raise ConfigError(
                f"{where}simulator {ref!r}: {error.message}", hint=error.hint
            ) from None


class DynamicExecutor(JudgingExecutor):
    """Plays a dynamic case to its end against the simulator named by the case (or
    ``--simulator``), judging checkpoints through ``env``."""

    async def execute(
        self, case: Case, run: int | None, *, started: float, timeout: float
    ) -> CaseResult:
        """The whole conversation is bounded by ``timeout``; a cut-off one reports the
        turns it got through. Every turn shares the case's sandbox, when it has one."""
        try:
            async with case_sandbox(self.config, case) as sandbox:
                dialogue = _Dialogue(self.config, self.env, case, run, sandbox)
                try:
                    async with asyncio.timeout(timeout):
                        status, error = await dialogue.play()
                except TimeoutError:
                    status = "timeout"
                    error = f"timed out after {timeout:g}s during turn {dialogue.turn}"
                    dialogue.abandon("timed out")
                result = dialogue.result(status, error, started)
                result.sandbox = kept_sandbox(self.config, sandbox)
                return result
        except SandboxError as error:  # the sandbox could not be made
            return error_result(case, run, str(error), started)


class _Dialogue:
    """The state of one simulated conversation."""

    def __init__(
        self,
        config: EvalConfig,
        env: AssertionEnv,
        case: Case,
        run: int | None,
        sandbox: Sandbox | None = None,
    ) -> None:
        self.config = config
        self.sandbox = sandbox
        self.env = env
        self.case = case
        self.run = run
        self.turn = 0
        self.turns: list[Turn] = []
        self.points = [CheckpointState(c.id, required=c.required) for c in case.checkpoints]
        self.transcript: list[dict[str, Any]] = []
        self.calls: list[ToolCall] = []
        self.usage = Usage()
        self.last: Trace | None = None
        self.output: Any = None
        self._clock = time.perf_counter()
        self._open: Turn | None = None  # the turn in flight, not yet recorded
        self.cause: Attribution | None = None  # who a verdict other than passed is on
        self._judge_trouble = False  # a checkpoint's judge errored or wavered

    # -- the loop ------------------------------------------------------------------------

    async def play(self) -> tuple[Status, str | None]:
        """Run turns until a verdict: ``(status, error)``."""
        case = self.case
        options = self.config.request_options(case, self.run)
        # The chat must remember earlier turns, whatever the case says about history.
        options.skip = {k: v for k, v in options.skip.items() if k != "history"}
        options.sandbox = self.sandbox
        target = self.config.assistant.conversation(options)
        initial = case.build_messages()
        send: str | list[dict[str, Any]]
        for turn in range(1, case.max_turns + 1):
            self.turn = turn
            if turn == 1 and initial:
                said, send = messages_text(case.messages), initial
                reasoning = ""
                self.transcript.extend(_transcript_message(m) for m in case.messages)
            else:
                try:
                    move = await self._simulate(turn)
                except (AgentCliError, ValueError) as error:
                    # Whatever broke it (its model, its JSON contract), the conversation
                    # could not go on because of the simulator.
                    self.cause = "simulator"
                    return "error", f"simulator error at turn {turn}: {_describe(error)}"
                if move.goal_achieved:
                    return self._goal_achieved(turn)
                said, send, reasoning = move.message, move.message, move.reasoning
                self.transcript.append({"role": "user", "content": said})
            verdict = await self._agent_turn(target, turn, said, send, reasoning)
            if verdict is not None:
                return verdict
            if all(p.reached for p in self.points if p.required):
                return "passed", None
        pending = ", ".join(self._pending(required_only=True))
        self.cause = "judge" if self._judge_trouble else "agent"
        return (
            "failed",
            f"max turns ({case.max_turns}) reached; required checkpoints not reached: {pending}",
        )

    def _goal_achieved(self, turn: int) -> tuple[Status, str | None]:
        pending = self._pending(required_only=True)
        if not pending:
            return "passed", None
        self.cause = "simulator"  # it declared success the checkpoints do not show
        return "failed", (
            f"the simulator declared the goal achieved at turn {turn} before the required "
            f"checkpoints were reached: {', '.join(pending)}"
        )

    async def _simulate(self, turn: int) -> SimulatorReply:
        case = self.case
        ref = simulator_id(case, self.config.simulator)
        sim_options = case.simulator.options if case.simulator else None
        simulator = self.config.registry.get(ref)
        request = simulator_request(
            case,
            list(self.transcript),
            turn,
            [p.id for p in self.points if p.reached],
            self._pending(required_only=False),
        )
        reply = await ask_helper(
            simulator,
            "simulator",
            request,
            chat_id=f"simulator-{case.id}",
            connector=sim_options.connector if sim_options else None,
        )
        if reply.status in ("failed", "aborted") or reply.error:
            raise ValueError(reply.error or f"the simulator's turn {reply.status}")
        answer = reply.next if isinstance(reply.next, dict) else (reply.text or reply.output)
        return parse_simulator_reply(answer)

    async def _agent_turn(
        self,
        target: Conversation,
        turn: int,
        said: str,
        send: str | list[dict[str, Any]],
        reasoning: str,
    ) -> tuple[Status, str | None] | None:
        """One agent turn, recorded and checked; a verdict when the conversation must end."""
        clock = self._clock = time.perf_counter()
        record = self._open = Turn(turn=turn, input=said)
        self.turns.append(record)
        try:
            reply = await target.send(send)
        except AgentCliError as error:
            self._record(record, None, clock, error=error.message)
            self.cause = of_exception(error)
            return "error", f"agent error at turn {turn}: {error.message}"
        trace = trace_of(reply)
        self._record(record, trace, clock, reasoning=reasoning)
        if reply.status in ("failed", "aborted"):
            record.error = reply.error or f"turn {reply.status}"
            self.cause = of_kind(reply.error_kind)
            return "error", f"agent error at turn {turn}: {record.error}"
        if reply.status == "max_steps":
            record.error = step_limit_message(trace)
            self.cause = "agent"
            return "failed", f"agent turn {turn} {record.error}"
        subject = _turn_subject(trace, said, record.duration_ms, self.calls)
        subject.sandbox = self.sandbox.workdir if self.sandbox is not None else None
        record.checkpoints_reached = await self._check(turn, subject)
        return None

    def _record(
        self,
        record: Turn,
        trace: Trace | None,
        clock: float,
        *,
        error: str | None = None,
        reasoning: str = "",
    ) -> None:
        """Fill a turn's record; remember what the agent said for the result and simulator."""
        output = output_under_test(trace) if trace is not None else None
        record.output = output
        if trace is not None:
            record.content, record.tool_calls, record.next = (
                trace.completion,
                trace.tool_calls,
                trace.next,
            )
        record.checkpoints_reached = []
        record.duration_ms = round((time.perf_counter() - clock) * 1000, 3)
        record.reasoning, record.error = reasoning, error or None
        self._open = None
        if trace is None:
            return
        self.last, self.output = trace, output
        self.calls.extend(trace.tool_calls)
        self.usage = self.usage + trace.usage
        calls = [_call_dict(c) for c in trace.tool_calls]
        said: dict[str, Any] = {"role": "assistant", "content": output_text(output)}
        self.transcript.append({**said, "tool_calls": calls} if calls else said)

    def abandon(self, error: str) -> None:
        """Close the turn that was in flight when the conversation was cut short."""
        if self._open is not None:
            self._record(self._open, None, self._clock, error=error)

    # -- checkpoints ---------------------------------------------------------------------

    async def _check(self, turn: int, subject: Subject) -> list[str]:
        """Assert the eligible pending checkpoints in declaration order; the ids reached."""
        reached: list[str] = []
        for checkpoint, state in zip(self.case.checkpoints, self.points, strict=True):
            if state.reached or not self._ready(checkpoint):
                continue
            results = await evaluate(checkpoint.assert_, subject, self.env)
            passed = all(r.passed for r in results)
            if not passed and of_assertions(results) == "judge":
                self._judge_trouble = True
            state.passed = passed
            state.message = _message(results, passed)
            judge = _judge_details(checkpoint, results, subject)
            if judge is not None:
                state.agent_validation = judge
            if passed:
                state.reached, state.reached_at_turn = True, turn
                reached.append(checkpoint.id)
        return reached

    def _ready(self, checkpoint: Checkpoint) -> bool:
        done = {p.id for p in self.points if p.reached}
        return all(dep in done for dep in checkpoint.after)

    def _pending(self, *, required_only: bool) -> list[str]:
        return [p.id for p in self.points if not p.reached and (p.required or not required_only)]

    # -- the result ----------------------------------------------------------------------

    def result(self, status: Status, error: str | None, started: float) -> CaseResult:
        """The case result with its turns and checkpoint states."""
        case = self.case
        trace = None
        if self.last is not None:
            trace = Trace(
                completion=self.last.completion,
                tool_calls=list(self.calls),
                next=self.last.next,
                usage=self.usage,
            )
        return CaseResult(
            id=case.id,
            status=status,
            input=case.input,
            output=self.output,
            attribution=None if status == "passed" else self.cause,
            duration_ms=round((time.perf_counter() - started) * 1000, 3),
            error=error,
            trace=trace,
            metadata=case.metadata or {},
            run=self.run,
            turns=self.turns,
            checkpoints=self.points,
        )


def _call_dict(call: ToolCall) -> dict[str, Any]:
    return {
        "tool": call.tool,
        "arguments": call.arguments,
        "result": call.result,
        "error": call.error,
    }


def _transcript_message(message: dict[str, Any]) -> dict[str, Any]:
    """An initial case message as the simulator sees it (text only, files left out)."""
    return {
        "role": message.get("role", "user"),
        "content": messages_text([{**message, "role": "user"}]),
    }


def _turn_subject(
    trace: Trace, said: str, duration_ms: float, conversation_calls: list[ToolCall]
) -> Subject:
    """What a turn's checkpoints look at: the output, plus the ``message`` of tool results
    in the text, and only this turn's tool calls (the conversation's beside them)."""
    output = output_under_test(trace)
    text = output_text(output)
    for call in trace.tool_calls:
        note = call.result.get("message") if isinstance(call.result, dict) else None
        if isinstance(note, str) and note and note not in text:
            text = f"{text}\n{note}" if text else note
    return Subject(
        output=output,
        text=text,
        tool_calls=list(trace.tool_calls),
        duration_ms=duration_ms,
        usage=trace.usage,
        input=said,
        steps=trace.steps,
        stop_reason=trace.stop_reason,
        conversation_calls=list(conversation_calls),
    )


def _message(results: list[AssertionResult], passed: bool) -> str:
    if passed:
        return "; ".join(r.message for r in results if r.message)
    return next((r.message for r in results if not r.passed), "")


def _judge_details(
    checkpoint: Checkpoint, results: list[AssertionResult], subject: Subject
) -> dict[str, Any] | None:
    """``agent_validation`` for a checkpoint judged by an ``agent`` assertion."""
    for assertion, result in zip(checkpoint.assert_, results, strict=True):
        if assertion.type != "agent":
            continue
        verdict = result.verdict
        return {
            "passed": result.passed,
            "reason": (verdict or {}).get("reason") or result.message,
            "criteria": assertion.value,
            "input": subject.text,
            "response": verdict,
        }
    return None


def _describe(error: BaseException) -> str:
    return error.message if isinstance(error, AgentCliError) else str(error)

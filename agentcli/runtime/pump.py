"""The queue pump: runs queued work one turn at a time until nothing is left.

Order of what runs next: deferred sends (the inbox), then -- unless the last turn was
aborted, failed or ended by ``finish_turn`` -- a follow-up batch, then the pending wake.
One pass is framed by ``agent_start`` / ``agent_end``; input that arrives while the
``agent_end`` listeners run starts another pass, so nothing is stranded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.runtime.events import AgentEnd, AgentStart, TurnReason
from agentcli.runtime.messages import Message, new_id, user_message
from agentcli.runtime.queues import PendingTurn, Wake
from agentcli.runtime.turns import Turn, TurnResult

if TYPE_CHECKING:
    from agentcli.runtime.core import AgentCore

__all__ = ["drain", "settle", "wake_opening"]


async def drain(core: AgentCore) -> None:
    """Run everything queued on ``core`` (the agent's loop task)."""
    last: tuple[PendingTurn, TurnResult] | None = None
    try:
        while True:
            await core.emit(AgentStart())
            reason, last = await _run_queued(core)
            await core.emit(AgentEnd(reason=reason))
            # the turn that ended the pass settles after the awaited agent_end listeners
            # (seed 004: prompt() returns once the run has fully settled)
            if last is not None:
                _resolve(*last)
            if not core.inbox and core.wake is None:
                return
    finally:
        if last is not None:
            _resolve(*last)
        while core.inbox:
            settle(core.inbox.popleft(), "agent loop stopped")


async def _run_queued(core: AgentCore) -> tuple[TurnReason, tuple[PendingTurn, TurnResult] | None]:
    reason: TurnReason = "done"
    poll_follow_ups = True
    last: tuple[PendingTurn, TurnResult] | None = None
    while (pending := _next_turn(core, poll_follow_ups)) is not None:
        if last is not None:
            _resolve(*last)  # another turn follows: the earlier one has settled
        turn = Turn(core, pending.turn_id, pending.messages)
        core.current = turn
        try:
            result = await turn.run()
        except BaseException:
            settle(pending, "agent loop stopped")
            raise
        finally:
            core.current = None
        deferred, core.deferred = core.deferred, []
        await core.append(deferred, None)
        reason = result.reason
        poll_follow_ups = reason in ("done", "max_steps") and not turn.ended_by_hook
        last = (pending, result)
    return reason, last


def _resolve(pending: PendingTurn, result: TurnResult) -> None:
    if pending.future is not None and not pending.future.done():
        pending.future.set_result(result)


def _next_turn(core: AgentCore, poll_follow_ups: bool) -> PendingTurn | None:
    if core.inbox:
        return core.inbox.popleft()
    if poll_follow_ups and core.follow_ups:
        return PendingTurn(new_id(), core.follow_ups.take())
    wake, core.wake = core.wake, None
    opening = wake_opening(core, wake) if wake is not None else None
    return PendingTurn(new_id(), opening) if opening is not None else None


def wake_opening(core: AgentCore, wake: Wake) -> list[Message] | None:
    """A wake's opening messages: its prompts merged; else, after an assistant message,
    a queued follow-up batch; else none (the turn opens on history) -- None when there is
    nothing to continue at all."""
    if wake.prompts:
        return [user_message(wake.text())]
    history = core.messages
    if history and history[-1].role == "assistant" and not core.steering:
        batch = core.follow_ups.take()
        if batch:
            return batch
    if core.steering or any(m.role != "system" for m in history):
        return []
    return None


def settle(pending: PendingTurn, reason: str | None) -> None:
    """Resolve a queued turn that will never run as aborted."""
    if pending.future is not None and not pending.future.done():
        pending.future.set_result(
            TurnResult(turn_id=pending.turn_id, reason="aborted", abort_reason=reason)
        )

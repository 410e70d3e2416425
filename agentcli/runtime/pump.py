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
    from agentcli.runtime.agent import Agent

__all__ = ["drain", "settle", "wake_opening"]


async def drain(agent: Agent) -> None:
    """Run everything queued on ``agent`` (the agent's loop task)."""
    try:
        while True:
            await agent._emit(AgentStart())
            reason = await _run_queued(agent)
            await agent._emit(AgentEnd(reason=reason))
            if not agent._inbox and agent._wake is None:
                return
    finally:
        while agent._inbox:
            settle(agent._inbox.popleft(), "agent loop stopped")


async def _run_queued(agent: Agent) -> TurnReason:
    reason: TurnReason = "done"
    poll_follow_ups = True
    while (pending := _next_turn(agent, poll_follow_ups)) is not None:
        turn = Turn(agent, pending.turn_id, pending.messages)
        agent._current = turn
        try:
            result = await turn.run()
        finally:
            agent._current = None
        deferred, agent._deferred = agent._deferred, []
        await agent._append_all(deferred, None)
        reason = result.reason
        poll_follow_ups = reason in ("done", "max_steps") and not turn.ended_by_hook
        if pending.future is not None and not pending.future.done():
            pending.future.set_result(result)
    return reason


def _next_turn(agent: Agent, poll_follow_ups: bool) -> PendingTurn | None:
    if agent._inbox:
        return agent._inbox.popleft()
    if poll_follow_ups and agent._follow_up:
        return PendingTurn(new_id(), agent._follow_up.take())
    wake, agent._wake = agent._wake, None
    opening = wake_opening(agent, wake) if wake is not None else None
    return PendingTurn(new_id(), opening) if opening is not None else None


def wake_opening(agent: Agent, wake: Wake) -> list[Message] | None:
    """A wake's opening messages: its prompts merged; else, after an assistant message,
    a queued follow-up batch; else none (the turn opens on history) -- None when there is
    nothing to continue at all."""
    if wake.prompts:
        return [user_message(wake.text())]
    history = agent.messages
    if history and history[-1].role == "assistant" and not agent._steering:
        batch = agent._follow_up.take()
        if batch:
            return batch
    if agent._steering or any(m.role != "system" for m in history):
        return []
    return None


def settle(pending: PendingTurn, reason: str | None) -> None:
    """Resolve a queued turn that will never run as aborted."""
    if pending.future is not None and not pending.future.done():
        pending.future.set_result(
            TurnResult(turn_id=pending.turn_id, reason="aborted", abort_reason=reason)
        )

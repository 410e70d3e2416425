"""What a case's helpers spend: the judges and the simulator it calls, by role.

The agent's own usage is in its trace; the helpers run through ``ask_helper``, which adds
each reply's usage to the meter of the case it runs in. The meter lives in a context
variable, so judges run concurrently inside the case (tasks copy the context, and with it
the meter) count toward that case and no other.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from agentcli.models.base import Usage

__all__ = ["HELPER_ROLES", "add_helper_usage", "case_spend"]

HELPER_ROLES: dict[str, str] = {"validator": "judge", "simulator": "simulator"}
"""The role a helper's test mode counts under (generators run before any case)."""

_meter: ContextVar[dict[str, Usage] | None] = ContextVar("agentcli_case_spend", default=None)


@contextmanager
def case_spend() -> Iterator[dict[str, Usage]]:
    """Meter the helpers called inside the block: ``{role: usage}``, filled as they reply."""
    spent: dict[str, Usage] = {}
    token = _meter.set(spent)
    try:
        yield spent
    finally:
        _meter.reset(token)


def add_helper_usage(mode: str, usage: Usage) -> None:
    """Count a helper reply's usage toward the case being run (if any)."""
    spent = _meter.get()
    role = HELPER_ROLES.get(mode)
    if spent is None or role is None:
        return
    previous = spent.get(role)
    spent[role] = usage if previous is None else previous + usage

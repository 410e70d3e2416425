"""``Check``, what one checker decided, and ``Checker``, the shape of a checker.

Their own module so that checkers kept outside ``assertions.py`` (``tool_checks``) use them
without importing the registry that imports them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentcli.choices import Attribution
    from agentcli.eval.cases.model import Assertion
    from agentcli.eval.checks.assertions import AssertionEnv, Subject

__all__ = ["Check", "Checker"]


@dataclass(slots=True)
class Check:
    """A checker's raw outcome, before ``negate`` and ``message`` are applied."""

    passed: bool
    message: str
    expected: Any = None
    actual: Any = None
    verdict: dict[str, Any] | None = None
    attribution: Attribution | None = None  # failed on someone else than the agent (judge)


Checker = Callable[["Assertion", "Subject", "AssertionEnv"], "Check | Awaitable[Check]"]

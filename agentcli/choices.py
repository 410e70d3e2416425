"""Narrowing a value to one of a ``Literal``'s strings (statuses, kinds, modes).

A kind is declared once, as a ``Literal`` alias, and its values read from it
(``MODES: tuple[Mode, ...] = get_args(Mode)``); ``one_of`` is how untyped input (JSON, YAML,
a caller's argument) becomes that type: the matching value, or None, so the caller says
what was wrong in its own words.
"""

from __future__ import annotations

from typing import Literal, TypeVar, get_args

__all__ = ["ATTRIBUTIONS", "Attribution", "one_of"]

# Who a failed or errored case result is on (docs/eval.md, "Failure attribution"): the agent
# under test, the simulator of a dynamic case, the LLM judge, the infrastructure (provider,
# network, timeout) or the harness (a hook or script of the package raised).
Attribution = Literal["agent", "simulator", "judge", "infra", "harness"]
ATTRIBUTIONS: tuple[Attribution, ...] = get_args(Attribution)

Choice = TypeVar("Choice", bound=str)


def one_of(value: object, choices: tuple[Choice, ...]) -> Choice | None:
    """The member of ``choices`` equal to ``value``, else None."""
    for choice in choices:
        if value == choice:
            return choice
    return None

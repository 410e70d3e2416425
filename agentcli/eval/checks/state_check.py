"""The ``state`` assertion: the state a case left behind, not what the agent said.

Three forms, one per assertion::

    {"type": "state", "path": "$.user['test-user'].budget", "value": 80}
        JSONPath over memory: {"user"|"team"|"chat": {owner id: {key: value}}}
    {"type": "state", "query": "select count(*) from orders where total = 16", "value": 1}
        SQL over the data models' tables (one row of one column: that value; else the rows)
    {"type": "state", "query": {"model": "order", "wheres": [...]}, "value": 1}
        a model query (``Get``): ``value`` a count, a row (some row matches it, partially),
        or a list of rows (the same number, each matching in order)

Without ``value`` it passes when something is there (a path that matches, a truthy SQL
value or any row). The run's state is read through ``AssertionEnv.state``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from agentcli.eval.checks.matching import compile_path, match_partial, show
from agentcli.eval.checks.outcome import Check, Checker

if TYPE_CHECKING:
    from agentcli.eval.cases.model import Assertion
    from agentcli.eval.checks.assertions import AssertionEnv, Subject

__all__ = ["STATE_CHECKERS", "StateView", "state_rule"]


class StateView(Protocol):
    """What the ``state`` assertion reads: the run's memory and data models."""

    async def memory(self) -> dict[str, Any]:
        """Memory as ``{namespace: {owner: {key: value}}}``."""
        ...

    async def sql(self, query: str) -> list[dict[str, Any]]:
        """The rows of a SQL query over the data models' database."""
        ...

    async def rows(self, model: str, query: dict[str, Any]) -> list[dict[str, Any]]:
        """The rows a model query selects (the model's ``Get``)."""
        ...


def state_rule(a: Assertion) -> str | None:
    """Rule: ``path`` (a JSONPath over memory) or ``query`` (SQL text, or a model query
    with ``model``), not both."""
    if (a.path is None) == (a.query is None):
        return 'state needs "path" (JSONPath over memory) or "query" (SQL or a model query), one of them'
    if a.path is not None:
        try:
            compile_path(a.path)
        except Exception as exc:  # jsonpath-ng raises its own lexer/parser error types
            return f"invalid state path {show(a.path)}: {exc}"
        return None
    if isinstance(a.query, str):
        return None if a.query.strip() else 'state "query" must not be empty'
    assert isinstance(a.query, dict)
    model = a.query.get("model")
    if not isinstance(model, str) or not model:
        return 'a state model query needs "model": "order" (or "agents.<id>.<model>")'
    from agentcli.assistant.data.query import parse_query
    from agentcli.errors import ToolError

    try:
        parse_query({k: v for k, v in a.query.items() if k != "model"}, "state query")
    except ToolError as error:
        return error.message
    if isinstance(a.value, bool):
        return 'state model query "value" is a count, a row or a list of rows'
    return None


async def _state(a: Assertion, s: Subject, env: AssertionEnv) -> Check:
    """The run's state after the case holds what ``value`` says."""
    if env.state is None:
        return Check(False, "the run's state is not available to state assertions here")
    if a.path is not None:
        return await _memory_check(a, env.state)
    if isinstance(a.query, str):
        return await _sql_check(a, env.state, a.query)
    assert isinstance(a.query, dict)
    return await _model_check(a, env.state, a.query)


async def _memory_check(a: Assertion, state: StateView) -> Check:
    assert a.path is not None
    found = [m.value for m in compile_path(a.path).find(await state.memory())]
    where = f"memory {a.path}"
    if not found:
        return Check(False, f"{where}: nothing there", expected=a.value)
    actual = found[0] if len(found) == 1 else found
    if a.value is None:
        return Check(True, f"{where} is {show(actual)}", actual=actual)
    if match_partial(actual, a.value):
        return Check(True, f"{where} is {show(actual)}", a.value, actual)
    return Check(False, f"{where}: expected {show(a.value)}, got {show(actual)}", a.value, actual)


async def _sql_check(a: Assertion, state: StateView, query: str) -> Check:
    rows = await state.sql(query)
    actual: Any = rows
    if len(rows) == 1 and len(rows[0]) == 1:
        actual = next(iter(rows[0].values()))
    where = f"query {show(query)}"
    if a.value is None:
        ok = bool(actual) if not isinstance(actual, list) else bool(rows)
        word = "found" if ok else "found nothing"
        return Check(ok, f"{where} {word}: {show(actual)}", actual=actual)
    if match_partial(actual, a.value) or (
        isinstance(actual, list) and _rows_match(actual, a.value)
    ):
        return Check(True, f"{where} = {show(actual)}", a.value, actual)
    return Check(False, f"{where}: expected {show(a.value)}, got {show(actual)}", a.value, actual)


async def _model_check(a: Assertion, state: StateView, query: dict[str, Any]) -> Check:
    model = str(query["model"])
    rows = await state.rows(model, {k: v for k, v in query.items() if k != "model"})
    where = f"model {model}"
    count = f"{len(rows)} row{'s' if len(rows) != 1 else ''}"
    if a.value is None:
        return Check(bool(rows), f"{where}: {count}", actual=len(rows))
    if isinstance(a.value, int | float):
        ok = len(rows) == a.value
        message = f"{where}: {count}" if ok else f"{where}: expected {a.value} rows, got {count}"
        return Check(ok, message, a.value, len(rows))
    if isinstance(a.value, dict):
        if any(match_partial(row, a.value) for row in rows):
            return Check(True, f"{where}: a row matches {show(a.value)}", a.value)
        return Check(False, f"{where}: no row of {count} matches {show(a.value)}", a.value, rows)
    if _rows_match(rows, a.value):
        return Check(True, f"{where}: the {count} match", a.value)
    return Check(False, f"{where}: expected {show(a.value)}, got {show(rows)}", a.value, rows)


def _rows_match(rows: list[dict[str, Any]], expected: Any) -> bool:
    """As many rows as expected, each matching its expected row partially."""
    return (
        isinstance(expected, list)
        and len(rows) == len(expected)
        and all(match_partial(row, item) for row, item in zip(rows, expected, strict=True))
    )


STATE_CHECKERS: dict[str, Checker] = {"state": _state}

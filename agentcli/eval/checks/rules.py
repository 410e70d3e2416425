"""Load-time rules for assertion values, one per type, so mistakes stop a run before it starts.

Each rule returns the first problem with an assertion's ``value`` / ``path`` / ``use`` /
``script`` as a short message, or ``None``. ``RULES`` maps assertion types to their rule;
types that accept any value (``equals``) have none.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from agentcli.eval.checks.file_checks import FILE_FIELDS, FILE_RULES
from agentcli.eval.checks.matching import compile_path, regex_problems, show, value_problems
from agentcli.eval.checks.state_check import state_rule
from agentcli.eval.checks.tool_checks import COUNT_KEYS
from agentcli.eval.checks.trajectory import ARGUMENTS_MODES, CALL_KEYS, MODES, SCOPES
from agentcli.jsonsafe import JSON_TYPES

if TYPE_CHECKING:
    from agentcli.eval.cases.model import Assertion

__all__ = ["JSON_TYPES", "RULES", "STOP_REASONS", "field_problem"]

# Assertion fields only some types read, with the values they take.
_TRAJECTORY_FIELDS: dict[str, tuple[str, ...]] = {
    "mode": MODES,
    "arguments_mode": ARGUMENTS_MODES,
    "scope": SCOPES,
}
_TOOL_KEYS = ("name", "arguments", *COUNT_KEYS)


def _scalar_value(a: Assertion) -> str | None:
    """Rule: ``value`` is a string (a number would be compared as its Python text: 1.0 is
    not "1", True is "True")."""
    if a.value is None:
        return f'{a.type} needs a "value"'
    if isinstance(a.value, dict | list):
        return f'{a.type} "value" must be a string (use contains_any / contains_all for a list)'
    if not isinstance(a.value, str):
        return f'{a.type} "value" must be a string, got {show(a.value)}; put it in quotes'
    return None


def _list_value(a: Assertion) -> str | None:
    """Rule: ``value`` is a non-empty list of strings."""
    if not isinstance(a.value, list) or not a.value:
        return f'{a.type} "value" must be a non-empty list of strings'
    others = [v for v in a.value if not isinstance(v, str)]
    if others:
        return f'{a.type} "value" items must be strings, got {show(others[0])}; put it in quotes'
    return None


def _regex_value(a: Assertion) -> str | None:
    """Rule: ``value`` is a valid Python regular expression."""
    if not isinstance(a.value, str):
        return 'regex "value" must be a pattern string'
    return next(iter(regex_problems(a.value, prefixed=False)), None)


def _path_value(a: Assertion) -> str | None:
    """Rule: json_path has a parseable ``path``."""
    if not isinstance(a.path, str) or not a.path.strip():
        return 'json_path needs a "path" such as "$.intent" or "items[0].name"'
    try:
        compile_path(a.path)
    except Exception as exc:  # jsonpath-ng raises its own lexer/parser error types
        return f"invalid json_path {show(a.path)}: {exc}"
    return None


def _type_value(a: Assertion) -> str | None:
    """Rule: ``value`` names a JSON type; an optional ``path`` parses."""
    if a.value not in JSON_TYPES:
        return f'type "value" must be one of {", ".join(JSON_TYPES)}'
    return _path_value(a) if a.path is not None else None


def _schema_value(a: Assertion) -> str | None:
    """Rule: is_json's optional ``value`` is a valid JSON Schema."""
    if a.value is None:
        return None
    if not isinstance(a.value, dict | bool):
        return 'is_json "value" must be a JSON Schema object'
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(a.value)
    except SchemaError as exc:
        return f"is_json schema is invalid: {exc.message}"
    return None


def field_problem(a: Assertion) -> str | None:
    """A ``trajectory`` field on another type, or one of them with a value it does not take;
    ``min``/``max`` on another type than ``steps``."""
    if a.query is not None and a.type != "state":
        return f'"query" is only used by state assertions, not {a.type}'
    if (a.minimum is not None or a.maximum is not None) and a.type != "steps":
        key = "min" if a.minimum is not None else "max"
        return f'"{key}" is only used by steps assertions, not {a.type}'
    for key in FILE_FIELDS:
        if getattr(a, key) is not None and a.type != "file":
            return f'"{key}" is only used by file assertions, not {a.type}'
    if a.judge_samples is not None and a.type != "agent":
        return f'"judge_samples" is only used by agent assertions, not {a.type}'
    for key, choices in _TRAJECTORY_FIELDS.items():
        value = getattr(a, key)
        if value is None:
            continue
        if a.type != "trajectory":
            return f'"{key}" is only used by trajectory assertions, not {a.type}'
        if value not in choices:
            return f'trajectory "{key}" must be one of {", ".join(choices)}, got {show(value)}{_hint(value, choices)}'
    return None


def _hint(value: Any, choices: Iterable[str]) -> str:
    """`` (did you mean "x"?)`` for a near miss of one of ``choices``, else ""."""
    close = difflib.get_close_matches(str(value), list(choices), n=1, cutoff=0.6)
    return f' (did you mean "{close[0]}"?)' if close else ""


def _tool_called_value(a: Assertion) -> str | None:
    """Rule: a name, ``{name, arguments?, times? | min?, max?}``, or a non-empty list of those."""
    return _tool_items(a, counts=True)


def _tool_not_called_value(a: Assertion) -> str | None:
    """Rule: a name, ``{name, arguments?}``, or a non-empty list of those."""
    return _tool_items(a, counts=False)


def _tool_items(a: Assertion, *, counts: bool) -> str | None:
    """The first problem with the items of a tool_called / tool_not_called value."""
    items = a.value if isinstance(a.value, list) else [a.value]
    if not items:
        return f'{a.type} "value" must not be an empty list'
    keys = _TOOL_KEYS if counts else ("name", "arguments")
    for item in items:
        if isinstance(item, str) and item:
            continue
        if not (isinstance(item, dict) and isinstance(item.get("name"), str) and item["name"]):
            shapes = '{"name", "arguments"}'
            return f'{a.type} "value" must be a tool name, {shapes}, or a list of them'
        problem = _unknown_key(a.type, item, keys)
        problem = problem or _arguments_problem(a.type, item)
        problem = problem or (_count_problem(item) if counts else None)
        if problem:
            return problem
    return None


def _unknown_key(kind: str, item: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    """An item key outside ``keys``, with a did-you-mean hint."""
    extra = sorted(set(item) - set(keys))
    if not extra:
        return None
    hint = _hint(extra[0], keys) or f" (use {', '.join(keys)})"
    return f"{kind}: unknown key {show(extra[0])}{hint}"


def _arguments_problem(kind: str, item: dict[str, Any]) -> str | None:
    """``arguments`` that are not an object, or hold a bad pattern or matcher."""
    if "arguments" in item and not isinstance(item["arguments"], dict):
        return f'{kind} "arguments" must be an object'
    return next(iter(value_problems(item.get("arguments"))), None)


def _count_problem(item: dict[str, Any]) -> str | None:
    """``times`` with ``min``/``max``, a count that is not a non-negative integer, min > max."""
    given = {key: item[key] for key in COUNT_KEYS if key in item}
    for key, value in given.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            return f'tool_called "{key}" must be a non-negative integer, got {show(value)}'
    if "times" in given and len(given) > 1:
        return 'tool_called: give "times" or "min"/"max", not both'
    low, high = given.get("min", 1 if "max" in given else 0), given.get("max")
    if high is not None and low > high:
        return f'tool_called "min" ({low}) is greater than "max" ({high})'
    return None


def _tool_args_valid_value(a: Assertion) -> str | None:
    """Rule: tool_args_valid takes no value (it checks every call)."""
    if a.value is not None:
        return 'tool_args_valid takes no "value": it checks the arguments of every call'
    return None


def _trajectory_value(a: Assertion) -> str | None:
    """Rule: a list of ``"name"`` or ``{name, arguments?, result?}``; empty only where no
    calls can match (``exact``, ``any_order``, ``subset``)."""
    if not isinstance(a.value, list):
        return (
            'trajectory "value" must be a list of calls ("name" or {"name", "arguments", "result"})'
        )
    if not a.value and a.mode in ("in_order", "superset"):
        return f"an empty trajectory matches every case in mode {a.mode}; use exact for no calls"
    for index, item in enumerate(a.value):
        if isinstance(item, str) and item:
            continue
        if not (isinstance(item, dict) and isinstance(item.get("name"), str) and item["name"]):
            return f'trajectory "value"[{index}] must be a tool name or {{"name", "arguments", "result"}}'
        problem = _unknown_key("trajectory", item, CALL_KEYS) or _arguments_problem(
            "trajectory", item
        )
        problem = problem or next(iter(value_problems(item.get("result"))), None)
        if problem:
            return f'trajectory "value"[{index}]: {problem.removeprefix("trajectory: ")}'
    return None


def _tool_result_value(a: Assertion) -> str | None:
    """Rule: ``{tool, result?}`` with valid ``regex:`` patterns."""
    if not isinstance(a.value, dict) or not isinstance(a.value.get("tool"), str):
        return 'tool_result "value" must be {"tool": name, "result": ...}'
    extra = set(a.value) - {"tool", "result"}
    if extra:
        return f"tool_result: unknown key {show(sorted(extra)[0])} (use tool, result)"
    return next(iter(value_problems(a.value.get("result"))), None)


def _agent_value(a: Assertion) -> str | None:
    """Rule: ``use: agents:<id>`` (``agents:builtin.validator`` when left out) and criteria
    in ``value``."""
    if not isinstance(a.use, str) or not a.use.startswith("agents:") or a.use == "agents:":
        return 'agent assertion "use" must be "agents:<validator id>" (or left out)'
    if a.value in (None, "", {}, []):
        return 'agent assertion needs the criteria in "value"'
    if not isinstance(a.value, str | dict | list):
        return (
            f'agent assertion "value" must be the criteria as text (or an object or list),'
            f" got {show(a.value)}; put it in quotes"
        )
    return None


def _script_value(a: Assertion) -> str | None:
    """Rule: ``script: <file>.<Func>``."""
    if not isinstance(a.script, str) or not re.fullmatch(r"[\w./-]+\.[A-Za-z_]\w*", a.script):
        return 'script assertion needs "script": "<file>.<Func>" (e.g. "checks.Validate")'
    return None


def _limit_value(a: Assertion) -> str | None:
    """Rule: ``value`` is a non-negative number."""
    value = a.value
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return f'{a.type} "value" must be a non-negative number'
    return None


def _steps_value(a: Assertion) -> str | None:
    """Rule: ``min`` and/or ``max`` bound the model calls, in order."""
    if a.minimum is None and a.maximum is None:
        return 'steps needs "min" and/or "max" (the model calls a turn may make)'
    if a.minimum is not None and a.maximum is not None and a.minimum > a.maximum:
        return f'steps "min" ({a.minimum}) is more than "max" ({a.maximum})'
    return None


# How a turn ends (the runtime's TurnReason): "done" when it answered.
STOP_REASONS = ("done", "max_steps", "failed", "aborted")


def _stop_reason_value(a: Assertion) -> str | None:
    """Rule: ``value`` is a stop reason or a non-empty list of them."""
    wanted = a.value if isinstance(a.value, list) else [a.value]
    unknown = [w for w in wanted if w not in STOP_REASONS]
    if not wanted or unknown:
        got = show(unknown[0]) if unknown else "an empty list"
        return (
            f'stop_reason "value" must be one of {", ".join(STOP_REASONS)} (or a list); got {got}'
        )
    return None


RULES: dict[str, Callable[[Assertion], str | None]] = {
    "contains": _scalar_value,
    "not_contains": _scalar_value,
    "icontains": _scalar_value,
    "contains_any": _list_value,
    "contains_all": _list_value,
    "starts_with": _scalar_value,
    "regex": _regex_value,
    "json_path": _path_value,
    "type": _type_value,
    "is_json": _schema_value,
    "tool_called": _tool_called_value,
    "tool_not_called": _tool_not_called_value,
    "tool_args_valid": _tool_args_valid_value,
    "trajectory": _trajectory_value,
    "tool_result": _tool_result_value,
    "agent": _agent_value,
    "script": _script_value,
    "latency": _limit_value,
    "cost": _limit_value,
    "tokens": _limit_value,
    "steps": _steps_value,
    "stop_reason": _stop_reason_value,
    **FILE_RULES,
    "state": state_rule,
}

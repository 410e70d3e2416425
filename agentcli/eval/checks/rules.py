"""Load-time rules for assertion values, one per type, so mistakes stop a run before it starts.

Each rule returns the first problem with an assertion's ``value`` / ``path`` / ``use`` /
``script`` as a short message, or ``None``. ``RULES`` maps assertion types to their rule;
types that accept any value (``equals``) have none.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from agentcli.eval.checks.matching import compile_path, regex_problems, show
from agentcli.jsonsafe import JSON_TYPES

if TYPE_CHECKING:
    from agentcli.eval.cases.model import Assertion

__all__ = ["JSON_TYPES", "RULES", "STOP_REASONS"]


def _scalar_value(a: Assertion) -> str | None:
    """Rule: ``value`` is a string (or number/boolean, compared as text)."""
    if a.value is None:
        return f'{a.type} needs a "value"'
    if isinstance(a.value, dict | list):
        return f'{a.type} "value" must be a string (use contains_any / contains_all for a list)'
    return None


def _list_value(a: Assertion) -> str | None:
    """Rule: ``value`` is a non-empty list of strings."""
    if not isinstance(a.value, list) or not a.value:
        return f'{a.type} "value" must be a non-empty list of strings'
    if any(isinstance(v, dict | list) or v is None for v in a.value):
        return f'{a.type} "value" items must be strings'
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


def _tool_called_value(a: Assertion) -> str | None:
    """Rule: a name, ``{name, arguments?}``, or a non-empty list of those."""
    items = a.value if isinstance(a.value, list) else [a.value]
    if not items:
        return 'tool_called "value" must not be an empty list'
    for item in items:
        if isinstance(item, str) and item:
            continue
        if isinstance(item, dict) and isinstance(item.get("name"), str) and item["name"]:
            extra = set(item) - {"name", "arguments"}
            if extra:
                return f"tool_called: unknown key {show(sorted(extra)[0])} (use name, arguments)"
            if "arguments" in item and not isinstance(item["arguments"], dict):
                return 'tool_called "arguments" must be an object'
            problem = next(iter(regex_problems(item.get("arguments"))), None)
            if problem:
                return problem
            continue
        return 'tool_called "value" must be a tool name, {"name", "arguments"}, or a list of them'
    return None


def _tool_result_value(a: Assertion) -> str | None:
    """Rule: ``{tool, result?}`` with valid ``regex:`` patterns."""
    if not isinstance(a.value, dict) or not isinstance(a.value.get("tool"), str):
        return 'tool_result "value" must be {"tool": name, "result": ...}'
    extra = set(a.value) - {"tool", "result"}
    if extra:
        return f"tool_result: unknown key {show(sorted(extra)[0])} (use tool, result)"
    return next(iter(regex_problems(a.value.get("result"))), None)


def _agent_value(a: Assertion) -> str | None:
    """Rule: ``use: agents:<id>`` and criteria in ``value``."""
    if not isinstance(a.use, str) or not a.use.startswith("agents:") or a.use == "agents:":
        return 'agent assertion needs "use": "agents:<validator id>"'
    if a.value in (None, "", {}, []):
        return 'agent assertion needs the criteria in "value"'
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
    "tool_result": _tool_result_value,
    "agent": _agent_value,
    "script": _script_value,
    "latency": _limit_value,
    "cost": _limit_value,
    "tokens": _limit_value,
    "steps": _steps_value,
    "stop_reason": _stop_reason_value,
}

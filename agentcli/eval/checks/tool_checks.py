"""The checkers that look at a case's tool calls: ``tool_called`` (with call counts),
``tool_not_called``, ``tool_args_valid`` and ``trajectory``; ``TOOL_CHECKERS`` maps each
type to its checker for the registry in ``assertions.py``.

They read the calls where every assertion does, ``Subject.tool_calls`` (the case's calls;
in a dynamic case's checkpoint, the turn's). ``trajectory`` reads the whole conversation's
(``Subject.conversation_calls``) unless ``scope: turn``.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from agentcli.eval.checks.matching import match_partial, show, tool_name_matches
from agentcli.eval.checks.outcome import Check, Checker
from agentcli.eval.checks.trajectory import (
    ARGUMENTS_MODES,
    DEFAULT_ARGUMENTS_MODE,
    DEFAULT_MODE,
    MODES,
    SCOPES,
    ExpectedCall,
    match_trajectory,
)
from agentcli.words import counted as _count

if TYPE_CHECKING:
    from agentcli.eval.cases.model import Assertion
    from agentcli.eval.checks.assertions import AssertionEnv, Subject
    from agentcli.eval.results.model import ToolCall

__all__ = ["COUNT_KEYS", "TOOL_CHECKERS", "ToolSpec"]

COUNT_KEYS = ("times", "min", "max")
_Choice = TypeVar("_Choice", bound=str)
_EXPECTED_CACHE: dict[int, tuple[Any, tuple[Any, ...], list[ExpectedCall]]] = {}
_EXPECTED_CACHE_SIZE = 256
_VALIDATORS: dict[int, tuple[Any, Any]] = {}  # id(schema) -> (schema, its validator)


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One item of a ``tool_called`` / ``tool_not_called`` value: a name, the arguments the
    call must have (partially), and how many such calls there may be."""

    name: str
    arguments: dict[str, Any] | None = None
    low: int = 1
    high: int | None = None
    counted: bool = False

    @classmethod
    def of(cls, item: str | dict[str, Any]) -> ToolSpec:
        """From ``"name"`` or ``{name, arguments?, times? | min?, max?}``."""
        if isinstance(item, str):
            return cls(item)
        times, low, high = item.get("times"), item.get("min"), item.get("max")
        if times is not None:
            low = high = times
        return cls(
            item["name"],
            item.get("arguments"),
            1 if low is None else low,
            high,
            counted=any(key in item for key in COUNT_KEYS),
        )

    def matches(self, call: ToolCall) -> bool:
        """The call is of this tool, with the arguments (if any) matching partially."""
        return tool_name_matches(call, self.name) and (
            self.arguments is None or match_partial(call.arguments, self.arguments)
        )

    def bounds(self) -> str:
        """``exactly 2 times``, ``at least 1 time``, ``between 1 and 3 times``."""
        if self.high is None:
            return f"at least {_times(self.low)}"
        if self.low == self.high:
            return f"exactly {_times(self.low)}"
        return f"between {self.low} and {_times(self.high)}"

    def holds(self, count: int) -> bool:
        """The count is within the bounds."""
        return count >= self.low and (self.high is None or count <= self.high)

    def described(self) -> str:
        """``tool "x"`` or ``tool "x" with arguments {...}``."""
        where = f" with arguments {show(self.arguments)}" if self.arguments is not None else ""
        return f"tool {show(self.name)}{where}"


def _specs(value: Any) -> list[ToolSpec]:
    """The items of a ``tool_called`` / ``tool_not_called`` value."""
    return [ToolSpec.of(item) for item in (value if isinstance(value, list) else [value])]


def _tool_called(a: Assertion, s: Subject, env: AssertionEnv) -> Check:
    """A tool named by ``value`` was called (with matching arguments, as often as counted)."""
    specs = _specs(a.value)
    if any(spec.counted for spec in specs):
        return _counted(a, s, specs)
    called = [c.tool for c in s.tool_calls]
    if not called:
        return Check(False, "expected a tool call, but no tools were called", expected=a.value)
    near_miss = ""
    for spec in specs:
        for call in s.tool_calls:
            if not tool_name_matches(call, spec.name):
                continue
            if spec.arguments is None or match_partial(call.arguments, spec.arguments):
                return Check(True, f"tool {show(spec.name)} was called", a.value, called)
            near_miss = near_miss or (
                f"tool {show(spec.name)} was called, but not with arguments "
                f"{show(spec.arguments)}; got {show(call.arguments)}"
            )
    if near_miss:
        return Check(False, near_miss, a.value, called)
    names = [spec.name for spec in specs]
    target = f"tool {show(names[0])}" if len(names) == 1 else f"one of tools {show(names)}"
    return Check(False, f"expected {target} to be called; called: {show(called)}", a.value, called)


def _counted(a: Assertion, s: Subject, specs: list[ToolSpec]) -> Check:
    """``tool_called`` with ``times`` / ``min`` / ``max``: one item's count is in its bounds."""
    called = [c.tool for c in s.tool_calls]
    counts = [sum(1 for call in s.tool_calls if spec.matches(call)) for spec in specs]
    for spec, count in zip(specs, counts, strict=True):
        if spec.holds(count):
            message = f"{spec.described()} was called {_times(count)} ({spec.bounds()})"
            return Check(True, message, a.value, called)
    spec, count = specs[0], counts[0]
    message = (
        f"expected {spec.described()} to be called {spec.bounds()}, "
        f"but it was called {_times(count)}"
    )
    if spec.arguments is not None:
        by_name = sum(1 for call in s.tool_calls if tool_name_matches(call, spec.name))
        message += f" ({_times(by_name)} with any arguments)"
    if len(specs) > 1:
        message += "; no other item of the list holds either"
    return Check(False, message, a.value, called)


def _tool_not_called(a: Assertion, s: Subject, env: AssertionEnv) -> Check:
    """No call matches any item of ``value`` (a name, ``{name, arguments?}``, or a list)."""
    specs = _specs(a.value)
    called = [c.tool for c in s.tool_calls]
    for index, call in enumerate(s.tool_calls, 1):
        for spec in specs:
            if spec.matches(call):
                message = (
                    f"expected {spec.described()} not to be called, but call {index} was "
                    f"{call.tool} {show(call.arguments)}"
                )
                return Check(False, message, a.value, called)
    if len(specs) == 1:
        return Check(True, f"{specs[0].described()} was not called", a.value, called)
    return Check(True, f"none of {_count(len(specs), 'tool')} was called", a.value, called)


async def _tool_args_valid(a: Assertion, s: Subject, env: AssertionEnv) -> Check:
    """Every call's arguments satisfy its tool's JSON Schema (as the package declares it)."""
    calls = s.tool_calls
    if not calls:
        return Check(True, "no tool was called")
    if env.tool_schema is None:
        return Check(False, "no tool schemas are available to check the arguments against")
    problems = []
    for index, call in enumerate(calls, 1):
        problem = _schema_problem(await env.tool_schema(call), call.arguments)
        if problem:
            problems.append(f"call {index} {call.tool} {show(call.arguments)}: {problem}")
    if not problems:
        return Check(
            True, f"the arguments of {_count(len(calls), 'tool call')} match their schemas"
        )
    more = f" (and {_count(len(problems) - 1, 'more invalid call')})" if len(problems) > 1 else ""
    return Check(False, problems[0] + more, actual=problems)


def _schema_problem(schema: dict[str, Any] | None, arguments: Any) -> str | None:
    """Why ``arguments`` do not satisfy ``schema`` (up to three errors), or None."""
    if schema is None:
        return "no schema is known for this tool (it is not a tool of the package)"
    entry = _VALIDATORS.get(id(schema))
    if entry is None or entry[0] is not schema:
        from jsonschema import Draft202012Validator

        entry = _VALIDATORS[id(schema)] = (schema, Draft202012Validator(schema))
    errors = sorted(entry[1].iter_errors(arguments), key=lambda e: list(map(str, e.path)))
    parts = []
    for error in errors[:3]:
        where = ".".join(str(p) for p in error.path)
        parts.append(f"{where}: {error.message}" if where else error.message)
    return "; ".join(parts) or None


def _trajectory(a: Assertion, s: Subject, env: AssertionEnv) -> Check:
    """The calls match the expected calls in ``value`` as ``mode`` says."""
    expected = _expected_calls(a.value)
    scope = _choice(a.scope, SCOPES, "all", "scope")
    calls = s.tool_calls
    if scope == "all" and s.conversation_calls is not None:
        calls = s.conversation_calls
    outcome = match_trajectory(
        expected,
        calls,
        _choice(a.mode, MODES, DEFAULT_MODE, "mode"),
        _choice(a.arguments_mode, ARGUMENTS_MODES, DEFAULT_ARGUMENTS_MODE, "arguments_mode"),
    )
    return Check(outcome.passed, outcome.message, a.value, [c.tool for c in calls])


def _expected_calls(value: Any) -> list[ExpectedCall]:
    """The expected calls of a ``trajectory`` value, parsed once per value (a case file's
    assertion is checked again on every run of its case; parsing 50 calls costs more than
    matching them)."""
    cached = _EXPECTED_CACHE.get(id(value))
    if cached is not None and cached[0] is value and _same_items(cached[1], value):
        return cached[2]
    if not isinstance(value, list):
        raise ValueError('trajectory "value" must be a list of calls')
    calls = [ExpectedCall.of(item) for item in value]
    if len(_EXPECTED_CACHE) >= _EXPECTED_CACHE_SIZE:
        _EXPECTED_CACHE.clear()
    # Holding the value keeps its id unique; its items, to see one replaced since.
    _EXPECTED_CACHE[id(value)] = (value, tuple(value), calls)
    return calls


def _same_items(items: tuple[Any, ...], value: list[Any]) -> bool:
    """The list still holds the very items it held."""
    return len(items) == len(value) and all(map(operator.is_, items, value))


def _choice(value: str | None, choices: tuple[_Choice, ...], default: _Choice, key: str) -> _Choice:
    """``value`` as one of ``choices`` (unset: ``default``); raises for any other value."""
    if value is None:
        return default
    for choice in choices:
        if choice == value:
            return choice
    raise ValueError(f'trajectory "{key}" must be one of {", ".join(choices)}, got {show(value)}')


def _times(n: int) -> str:
    return _count(n, "time")


TOOL_CHECKERS: dict[str, Checker] = {
    "tool_called": _tool_called,
    "tool_not_called": _tool_not_called,
    "tool_args_valid": _tool_args_valid,
    "trajectory": _trajectory,
}

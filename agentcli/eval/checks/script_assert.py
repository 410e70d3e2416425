"""The ``t`` of script tests (SPEC 5.8): ``t.log/error/fail/fatal/skip`` and ``t.assert_``.

``assert`` is a Python keyword, so ``t.assert.Equal(...)`` cannot be written in Python
source: the assertions live on ``t.assert_`` (``getattr(t, "assert")`` reaches them too),
with snake_case names (``t.assert_.equal(a, b)``) and the Go-style names of the seed as
aliases (``t.assert_.Equal``, ``getattr(t.assert_, "True")`` ...). An assertion that fails
marks the test failed and records ``{type, passed, message, expected, actual}``; it does not
stop the test (``t.fatal`` does). Each returns whether it passed. An optional last ``msg``
argument is put in front of the failure message.

``t.assert_.agent`` asks a validator assistant; like ``ctx`` services it is awaited in an
``async`` test and called plainly in a sync one (one left un-awaited fails the test).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from agentcli.eval.checks.matching import deep_equal, lookup_path, output_text, show
from agentcli.eval.results.model import AssertionResult
from agentcli.jsonsafe import json_type
from agentcli.patterns import compile_pattern

__all__ = ["ALIASES", "Assert", "StopTest", "T"]

Judge = Callable[[str, Any, dict[str, Any]], Awaitable[dict[str, Any]]]
Bridge = Callable[[Any], Any]


class StopTest(BaseException):
    """Raised by ``t.fatal`` and ``t.skip`` to end a test; a BaseException so a test's own
    ``except Exception`` cannot swallow it."""

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind
        self.reason = reason


class T:
    """The testing handle a ``Test*`` function receives."""

    def __init__(self, name: str, *, judge: Judge | None = None, bridge: Bridge | None = None):
        self.name = name
        self.logs: list[str] = []
        self.errors: list[str] = []
        self.assertions: list[AssertionResult] = []
        self.skipped: str | None = None
        self.awaitables: list[Any] = []  # agent checks handed to an async test to await
        self.assert_ = Assert(self, judge=judge, bridge=bridge)

    def __getattr__(self, name: str) -> Any:
        if name in ("assert", "Assert"):  # getattr(t, "assert"), for code ported from the seed
            return self.assert_
        if name[:1].isupper():  # Yao's t.Log, t.Error, t.Fail ...
            from agentcli.pascal import snake_name

            if snake_name(name) in ("log", "error", "fail", "fatal", "skip"):
                return getattr(self, snake_name(name))
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def finish(self) -> None:
        """After the test: an agent check that was never awaited fails the test (it never ran)."""
        for pending in self.awaitables:
            if inspect.getcoroutinestate(pending) == inspect.CORO_CREATED:
                pending.close()
                self.errors.append(
                    "Agent: t.assert_.agent(...) was not awaited; "
                    "write `await t.assert_.agent(...)` in an async test"
                )

    @property
    def failed(self) -> bool:
        """Whether anything marked the test failed so far."""
        return bool(self.errors)

    def log(self, *args: Any) -> None:
        """Keep a line in the test's logs (shown in the report)."""
        self.logs.append(" ".join(_text(a) for a in args))

    def error(self, *args: Any) -> None:
        """Mark the test failed with a message, and go on."""
        message = " ".join(_text(a) for a in args) or "error"
        self.errors.append(message)
        self.logs.append(f"ERROR: {message}")

    def fail(self, reason: str = "test failed") -> None:
        """Mark the test failed, and go on."""
        self.error(reason)

    def fatal(self, reason: str = "fatal error") -> None:
        """Mark the test failed and stop it here."""
        self.error(reason)
        raise StopTest("fatal", reason)

    def skip(self, reason: str = "") -> None:
        """Stop the test here and report it skipped (unless it already failed)."""
        self.skipped = reason or "skipped"
        self.logs.append(f"SKIP: {self.skipped}")
        raise StopTest("skip", self.skipped)


class Assert:
    """``t.assert_``: each method records its outcome and returns whether it passed."""

    def __init__(self, t: T, *, judge: Judge | None, bridge: Bridge | None) -> None:
        self._t = t
        self._judge = judge
        self._bridge = bridge

    def _record(
        self,
        method: str,
        passed: bool,
        problem: str,
        msg: str | None,
        expected: Any = None,
        actual: Any = None,
    ) -> bool:
        message = "" if passed else f"{method}: {problem}"
        if msg and not passed:
            message = f"{msg} ({message})"
        self._t.assertions.append(
            AssertionResult(
                type=method,
                passed=passed,
                message=message,
                expected=_jsonable(expected),
                actual=_jsonable(actual),
            )
        )
        if not passed:
            self._t.errors.append(message)
        return passed

    def true(self, value: Any, msg: str | None = None) -> bool:
        """``value`` is truthy."""
        return self._record(
            "True", bool(value), f"expected a true value, got {show(value)}", msg, True, value
        )

    def false(self, value: Any, msg: str | None = None) -> bool:
        """``value`` is falsy."""
        return self._record(
            "False", not value, f"expected a false value, got {show(value)}", msg, False, value
        )

    def equal(self, actual: Any, expected: Any, msg: str | None = None) -> bool:
        """Deep JSON equality (key order ignored, 1 == 1.0)."""
        ok = deep_equal(actual, expected)
        return self._record(
            "Equal", ok, f"expected {show(expected)}, actual {show(actual)}", msg, expected, actual
        )

    def not_equal(self, actual: Any, expected: Any, msg: str | None = None) -> bool:
        """Not deeply equal."""
        ok = not deep_equal(actual, expected)
        return self._record(
            "NotEqual", ok, f"expected a value other than {show(expected)}", msg, expected, actual
        )

    def nil(self, value: Any, msg: str | None = None) -> bool:
        """``value`` is None."""
        return self._record(
            "Nil", value is None, f"expected None, got {show(value)}", msg, None, value
        )

    def not_nil(self, value: Any, msg: str | None = None) -> bool:
        """``value`` is not None."""
        return self._record(
            "NotNil", value is not None, "expected a value, got None", msg, "not None", value
        )

    def contains(self, container: Any, item: Any, msg: str | None = None) -> bool:
        """A substring of a string, an item of a list, or a key of a dict."""
        ok = _contains(container, item)
        return self._record(
            "Contains",
            ok,
            f"expected {show(container)} to contain {show(item)}",
            msg,
            item,
            container,
        )

    def not_contains(self, container: Any, item: Any, msg: str | None = None) -> bool:
        """The opposite of ``contains``."""
        ok = not _contains(container, item)
        return self._record(
            "NotContains",
            ok,
            f"expected {show(container)} not to contain {show(item)}",
            msg,
            item,
            container,
        )

    def len(self, value: Any, length: int, msg: str | None = None) -> bool:
        """``len(value) == length``."""
        try:
            actual = len(value)
        except TypeError:
            return self._record(
                "Len", False, f"{type(value).__name__} value has no length", msg, length, None
            )
        return self._record(
            "Len",
            actual == length,
            f"expected length {length}, actual {actual}",
            msg,
            length,
            actual,
        )

    def greater(self, a: Any, b: Any, msg: str | None = None) -> bool:
        """``a > b``."""
        return self._compare("Greater", a, b, ">", msg)

    def greater_or_equal(self, a: Any, b: Any, msg: str | None = None) -> bool:
        """``a >= b``."""
        return self._compare("GreaterOrEqual", a, b, ">=", msg)

    def less(self, a: Any, b: Any, msg: str | None = None) -> bool:
        """``a < b``."""
        return self._compare("Less", a, b, "<", msg)

    def less_or_equal(self, a: Any, b: Any, msg: str | None = None) -> bool:
        """``a <= b``."""
        return self._compare("LessOrEqual", a, b, "<=", msg)

    def _compare(self, method: str, a: Any, b: Any, op: str, msg: str | None) -> bool:
        checks = {
            ">": lambda: a > b,
            ">=": lambda: a >= b,
            "<": lambda: a < b,
            "<=": lambda: a <= b,
        }
        try:
            ok = bool(checks[op]())
        except TypeError:
            problem = f"cannot compare {type(a).__name__} {op} {type(b).__name__}"
            return self._record(method, False, problem, msg, b, a)
        return self._record(method, ok, f"expected {show(a)} {op} {show(b)}", msg, b, a)

    def error(self, value: Any, msg: str | None = None) -> bool:
        """``value`` is an error (not None)."""
        return self._record(
            "Error",
            value is not None,
            "expected an error, got None",
            msg,
            "an error",
            _error_text(value),
        )

    def no_error(self, value: Any, msg: str | None = None) -> bool:
        """``value`` is None (no error)."""
        return self._record(
            "NoError",
            value is None,
            f"expected no error, got {_error_text(value)}",
            msg,
            None,
            _error_text(value),
        )

    def panic(self, function: Callable[[], Any], msg: str | None = None) -> bool:
        """Calling ``function()`` raises."""
        raised = _raises(function)
        problem = "expected the function to raise, but it returned" if raised is None else ""
        return self._record("Panic", raised is not None, problem, msg, "an exception", raised)

    def no_panic(self, function: Callable[[], Any], msg: str | None = None) -> bool:
        """Calling ``function()`` does not raise."""
        raised = _raises(function)
        return self._record(
            "NoPanic", raised is None, f"expected no exception, got {raised}", msg, None, raised
        )

    def match(self, value: Any, pattern: str, msg: str | None = None) -> bool:
        """``re.search(pattern, str(value))`` finds a match (searched within the time bound
        of user patterns, :mod:`agentcli.patterns`)."""
        ok = compile_pattern(pattern).search(output_text(value)) is not None
        return self._record(
            "Match", ok, f"expected {show(value)} to match /{pattern}/", msg, pattern, value
        )

    def not_match(self, value: Any, pattern: str, msg: str | None = None) -> bool:
        """``re.search(pattern, str(value))`` finds nothing (within the time bound)."""
        ok = compile_pattern(pattern).search(output_text(value)) is None
        return self._record(
            "NotMatch", ok, f"expected {show(value)} not to match /{pattern}/", msg, pattern, value
        )

    def type(self, value: Any, name: Any, msg: str | None = None) -> bool:
        """The type of ``value``: a JSON name (string number boolean array object null
        function), a Python type name (``dict``), or a Python type."""
        actual = "function" if callable(value) and not isinstance(value, type) else json_type(value)
        if isinstance(name, type):
            ok, wanted = isinstance(value, name), name.__name__
        else:
            ok, wanted = name in (actual, type(value).__name__), str(name)
        return self._record(
            "Type", ok, f"expected type {wanted}, actual {actual}", msg, wanted, actual
        )

    def json_path(self, value: Any, path: str, expected: Any, msg: str | None = None) -> bool:
        """The value at ``path`` (JSONPath; ``a.b[0]`` or ``$.a``) deep-equals ``expected``."""
        found, actual = lookup_path(value, path)
        if not found:
            return self._record("JSONPath", False, f"{path}: {actual}", msg, expected, None)
        ok = deep_equal(actual, expected)
        return self._record(
            "JSONPath",
            ok,
            f"{path}: expected {show(expected)}, actual {show(actual)}",
            msg,
            expected,
            actual,
        )

    def agent(self, response: Any, agent_id: str, options: dict[str, Any] | None = None) -> Any:
        """A validator assistant judges ``response`` against ``options["criteria"]``
        (``{criteria, metadata, connector}``); await it in an async test."""
        return self._bridge_call(self._agent(response, agent_id, dict(options or {})))

    async def _agent(self, response: Any, agent_id: str, options: dict[str, Any]) -> bool:
        criteria = options.get("criteria")
        if self._judge is None:
            return self._record("Agent", False, "no validator is available", None, criteria)
        try:
            verdict = await self._judge(agent_id, response, options)
        except Exception as error:
            return self._record(
                "Agent", False, f"validator {agent_id} failed: {error}", None, criteria
            )
        passed = bool(verdict.get("passed"))
        reason = str(verdict.get("reason") or "")
        problem = f"{agent_id} judged the response as failing {show(criteria)}: {reason}"
        ok = self._record("Agent", passed, problem, None, criteria, response)
        self._t.assertions[-1].verdict = verdict
        if passed and reason:
            self._t.assertions[-1].message = reason
        return ok

    def _bridge_call(self, coroutine: Any) -> Any:
        value = coroutine if self._bridge is None else self._bridge(coroutine)
        if inspect.iscoroutine(value):
            self._t.awaitables.append(value)
        return value


ALIASES = {
    "True": "true",
    "False": "false",
    "Equal": "equal",
    "NotEqual": "not_equal",
    "Nil": "nil",
    "NotNil": "not_nil",
    "Contains": "contains",
    "NotContains": "not_contains",
    "Len": "len",
    "Greater": "greater",
    "GreaterOrEqual": "greater_or_equal",
    "Less": "less",
    "LessOrEqual": "less_or_equal",
    "Error": "error",
    "NoError": "no_error",
    "Panic": "panic",
    "NoPanic": "no_panic",
    "Match": "match",
    "NotMatch": "not_match",
    "Type": "type",
    "JSONPath": "json_path",
    "Agent": "agent",
}
"""Go-style names of the seed -> the snake_case methods."""

for _go_name, _method in ALIASES.items():
    setattr(Assert, _go_name, getattr(Assert, _method))


def _contains(container: Any, item: Any) -> bool:
    if isinstance(container, str):
        return output_text(item) in container
    if isinstance(container, dict):
        return item in container
    if isinstance(container, list | tuple | set | frozenset):
        return any(deep_equal(element, item) for element in container)
    return output_text(item) in output_text(container)


def _raises(function: Callable[[], Any]) -> str | None:
    """``Type: message`` of what ``function()`` raised, else None."""
    try:
        value = function()
    except Exception as error:
        return f"{type(error).__name__}: {error}"
    if inspect.iscoroutine(value):
        value.close()  # an async function is not run here: only its call is checked
    return None


def _error_text(value: Any) -> Any:
    if isinstance(value, BaseException):
        return f"{type(value).__name__}: {value}"
    return value


def _text(value: Any) -> str:
    return value if isinstance(value, str) else output_text(value)


def _jsonable(value: Any) -> Any:
    """A value a report can hold (JSON types kept, others as text)."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return repr(value)

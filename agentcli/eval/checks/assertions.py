"""The assertion library: one small checker per type, registered in ``ASSERTIONS``.

``evaluate`` runs every assertion of a case (none short-circuits, judges run concurrently)
and keeps each one's own ``AssertionResult``. A checker that raises becomes a failed result
carrying the error. ``negate`` inverts any type, ``message`` replaces the failure message.
``validate_assertion`` checks an assertion when its case file is loaded, so mistakes such as
a bad regex or a typo'd type stop the run before anything executes.
"""

from __future__ import annotations

import asyncio
import difflib
import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.assistant.hooks import call_user_function
from agentcli.choices import Attribution
from agentcli.errors import AgentCliError
from agentcli.eval.checks.file_checks import FILE_CHECKERS
from agentcli.eval.checks.matching import (
    deep_equal,
    extract_json,
    lookup_path,
    match_partial,
    normalize_path,
    output_text,
    parse_json_text,
    show,
    tool_name_matches,
)
from agentcli.eval.checks.outcome import Check, Checker
from agentcli.eval.checks.rules import RULES, field_problem
from agentcli.eval.checks.state_check import STATE_CHECKERS, StateView
from agentcli.eval.checks.tool_checks import TOOL_CHECKERS
from agentcli.eval.results.model import AssertionResult, ToolCall, Trace, Usage
from agentcli.jsonsafe import json_type
from agentcli.patterns import compile_pattern

if TYPE_CHECKING:
    from agentcli.eval.cases.model import Assertion

__all__ = [
    "ASSERTIONS",
    "AssertionEnv",
    "Check",
    "Checker",
    "Judge",
    "ScriptResolver",
    "Subject",
    "ToolSchema",
    "evaluate",
    "output_text",
    "output_under_test",
    "tool_name_matches",
    "validate_assertion",
]


@dataclass(slots=True)
class Subject:
    """What assertions look at: the output under test, its text, tool calls, time and usage.
    ``conversation_calls`` holds every call of a dynamic case's turns so far (``tool_calls``
    only this turn's); None when ``tool_calls`` are the whole case's."""

    output: Any
    text: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    duration_ms: float = 0
    usage: Usage = field(default_factory=Usage)
    input: Any = None
    steps: int | None = None  # model calls of the turn, when known
    stop_reason: str | None = None  # how the turn ended: done, max_steps, ...
    conversation_calls: list[ToolCall] | None = None
    sandbox: Path | None = None  # the case's sandbox workdir, for file assertions

    @classmethod
    def of(
        cls,
        output: Any,
        *,
        tool_calls: Sequence[ToolCall] = (),
        duration_ms: float = 0,
        usage: Usage | None = None,
        input: Any = None,
        steps: int | None = None,
        stop_reason: str | None = None,
        sandbox: Path | None = None,
    ) -> Subject:
        """A subject for ``output``, its text derived with ``output_text``."""
        return cls(
            output=output,
            text=output_text(output),
            tool_calls=list(tool_calls),
            duration_ms=duration_ms,
            usage=usage or Usage(),
            input=input,
            steps=steps,
            stop_reason=stop_reason,
            sandbox=sandbox,
        )

    @classmethod
    def from_trace(
        cls, trace: Trace, *, duration_ms: float, input: Any = None, sandbox: Path | None = None
    ) -> Subject:
        """A subject for a finished case: its output is ``output_under_test(trace)``."""
        return cls.of(
            output_under_test(trace),
            tool_calls=trace.tool_calls,
            duration_ms=duration_ms,
            usage=trace.usage,
            input=input,
            steps=trace.steps,
            stop_reason=trace.stop_reason,
            sandbox=sandbox,
        )


Judge = Callable[[str, Any, Subject, dict[str, Any]], Awaitable[dict[str, Any] | None]]
ScriptResolver = Callable[[str], Callable[..., Any]]
# The JSON Schema of a called tool's arguments, None when the package has no such tool.
ToolSchema = Callable[[ToolCall], Awaitable[dict[str, Any] | None]]


@dataclass(slots=True)
class AssertionEnv:
    """Services the runner injects: an LLM judge for ``agent``, a resolver for ``script``,
    the tools' schemas for ``tool_args_valid``, the run's state for ``state``."""

    judge: Judge | None = None
    script: ScriptResolver | None = None
    tool_schema: ToolSchema | None = None
    state: StateView | None = None


ASSERTIONS: dict[str, Checker] = {**TOOL_CHECKERS, **FILE_CHECKERS, **STATE_CHECKERS}


def _checker(name: str) -> Callable[[Checker], Checker]:
    """Register a checker under ``name``."""

    def register(func: Checker) -> Checker:
        ASSERTIONS[name] = func
        return func

    return register


def output_under_test(trace: Trace) -> Any:
    """Next hook data if any, else the final text, else a summary of the tool results."""
    if trace.next not in (None, "", {}, []):
        return trace.next
    if trace.completion:
        return trace.completion
    if not trace.tool_calls:
        return None
    for call in trace.tool_calls:
        message = call.result.get("message") if isinstance(call.result, dict) else None
        if isinstance(message, str) and message:
            return message
    return " ".join(_tool_summary(call) for call in trace.tool_calls)


def _tool_summary(call: ToolCall) -> str:
    """``[tool: action]``, ``[tool: success|failed|error]`` or ``[tool]`` for one call."""
    if call.error:
        return f"[{call.tool}: error]"
    result = call.result if isinstance(call.result, dict) else {}
    if result.get("action"):
        return f"[{call.tool}: {result['action']}]"
    if isinstance(result.get("success"), bool):
        return f"[{call.tool}: {'success' if result['success'] else 'failed'}]"
    return f"[{call.tool}]"


async def evaluate(
    assertions: Sequence[Assertion], subject: Subject, env: AssertionEnv
) -> list[AssertionResult]:
    """Run every assertion and keep each result. Judges and async scripts run
    concurrently; the synchronous checks finish inline, without a trip through the event
    loop (under ``--parallel`` every such trip waits for all the other ready cases)."""
    started = [_start(a, subject, env) for a in assertions]
    pending = [item for item in started if not isinstance(item, AssertionResult)]
    finished = iter(await asyncio.gather(*pending) if pending else ())
    return [item if isinstance(item, AssertionResult) else next(finished) for item in started]


def _start(
    a: Assertion, subject: Subject, env: AssertionEnv
) -> AssertionResult | Awaitable[AssertionResult]:
    """One assertion's result, or an awaitable of it when its checker is asynchronous."""
    checker = ASSERTIONS.get(a.type)
    try:
        if checker is None:
            raise ValueError(_unknown_type(a.type))
        outcome = checker(a, subject, env)
    except Exception as exc:  # a broken script or judge fails this assertion, not the run
        return _errored(a, exc)
    if inspect.isawaitable(outcome):
        return _finish(a, outcome)
    return _result(a, outcome)


async def _finish(a: Assertion, outcome: Awaitable[Check]) -> AssertionResult:
    try:
        check = await outcome
    except Exception as exc:
        return _errored(a, exc)
    return _result(a, check)


# Whose failure a raising checker is: the judge's (``agent``) or the package's script's; a
# built-in checker that raises on the output judged it failed (the agent's).
_ERRORED_BY: dict[str, Attribution] = {"agent": "judge", "script": "harness"}


def _errored(a: Assertion, exc: Exception) -> AssertionResult:
    """A checker that raised: the assertion fails with the error as its message."""
    error = f"{a.type} assertion error: {_describe(exc)}"
    return AssertionResult(
        type=a.type,
        passed=False,
        message=f"{a.message} ({error})" if a.message else error,
        path=a.path,
        attribution=_ERRORED_BY.get(a.type),
    )


def _result(a: Assertion, check: Check) -> AssertionResult:
    """A checker's outcome with ``negate`` and ``message`` applied."""
    passed = check.passed != a.negate
    message = f"negated: {check.message}" if a.negate else check.message
    extra: dict[str, Any] = {}
    if not passed and a.message:
        # The case's own words lead; the checker's (what it wanted, what it got) are kept
        # beside them, so reports still show why.
        message, extra = a.message, {"detail": message}
    return AssertionResult(
        type=a.type,
        passed=passed,
        message=message,
        expected=check.expected,
        actual=check.actual,
        path=a.path,
        verdict=check.verdict,
        extra=extra,
        attribution=None if passed else check.attribution,
    )


def _describe(exc: BaseException) -> str:
    """An exception as ``Type: message`` (our own errors by their message only)."""
    if isinstance(exc, AgentCliError):
        return exc.message
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _unknown_type(name: str) -> str:
    """``unknown assertion type "x"`` with a did-you-mean hint."""
    close = difflib.get_close_matches(str(name), ASSERTIONS, n=1, cutoff=0.6)
    hint = f' (did you mean "{close[0]}"?)' if close else ""
    return f"unknown assertion type {show(name)}{hint}"


def validate_assertion(a: Assertion) -> str | None:
    """The first problem with an assertion (unknown type, missing/bad value, ...), or None."""
    if a.type not in ASSERTIONS:
        return _unknown_type(a.type)
    if a.path is not None and a.type not in ("json_path", "type", "file", "state"):
        return f'"path" is only used by json_path, type, file and state assertions, not {a.type}'
    problem = field_problem(a)
    if problem:
        return problem
    rule = RULES.get(a.type)
    return rule(a) if rule else None


def _required(a: Assertion, value: str | None) -> str:
    """A field the assertion's type needs (``path``, ``use``, ``script``); unset, it errors."""
    # The case rules reject such an assertion on load; one built in code fails it here, named.
    if value is None:
        raise ValueError(RULES[a.type](a) or f"{a.type} assertion is missing a field")
    return value


# --- checkers ----------------------------------------------------------------------------


@_checker("contains")
def _contains(a: Assertion, s: Subject, env: AssertionEnv) -> Check:
    """The output text contains ``value``."""
    needle = output_text(a.value)
    if needle in s.text:
        return Check(True, f"output contains {show(needle)}", expected=needle)
    return Check(False, f"expected output to contain {show(needle)}", expected=needle)


@_checker("not_contains")
def _not_contains(a: Assertion, s: Subject, env: AssertionEnv) -> Check:
    """The output text does not contain ``value``."""
    needle = output_text(a.value)
    if needle in s.text:
        return Check(False, f"expected output not to contain {show(needle)}", expected=needle)
    return Check(True, f"output does not contain {show(needle)}", expected=needle)


@_checker("icontains")
def _icontains(a: Assertion, s: Subject, env: AssertionEnv) -> Check:
    """The output text contains ``value``, ignoring case."""
    needle = output_text(a.value)
    if needle.casefold() in s.text.casefold():
        return Check(True, f"output contains {show(needle)} (ignoring case)", expected=needle)
    return Check(
        False, f"expected output to contain {show(needle)} (ignoring case)", expected=needle
    )


@_checker("contains_any")
def _contains_any(a: Assertion, s: Subject, env: AssertionEnv) -> Check:
    """The output text contains at least one of ``value``."""
    needles = [output_text(v) for v in a.value]
    found = [n for n in needles if n in s.text]
    if found:
        return Check(True, f"output contains {show(found[0])}", expected=needles)
    return Check(False, f"expected output to contain any of {show(needles)}", expected=needles)


@_checker("contains_all")
def _contains_all(a: Assertion, s: Subject, env: AssertionEnv) -> Check:
    """The output text contains every item of ``value``."""
    needles = [output_text(v) for v in a.value]
    missing = [n for n in needles if n not in s.text]
    if not missing:
        return Check(True, f"output contains all of {show(needles)}", expected=needles)
    return Check(False, f"expected output to contain {show(missing[0])}", expected=needles)


@_checker("starts_with")
def _starts_with(a: Assertion, s: Subject, env: AssertionEnv) -> Check:
    """The output text starts with ``value`` (leading whitespace tolerated)."""
    prefix = output_text(a.value)
    # Models often open with a newline; a prefix check should not trip over it.
    if s.text.startswith(prefix) or s.text.lstrip().startswith(prefix):
        return Check(True, f"output starts with {show(prefix)}", expected=prefix)
    return Check(False, f"expected output to start with {show(prefix)}", expected=prefix)


@_checker("regex")
def _regex(a: Assertion, s: Subject, env: AssertionEnv) -> Check:
    """``value`` (a Python ``re`` pattern) finds a match, searched within the time bound."""
    if compile_pattern(a.value).search(s.text):
        return Check(True, f"output matches /{a.value}/", expected=a.value)
    return Check(False, f"expected output to match /{a.value}/", expected=a.value)


@_checker("equals")
def _equals(a: Assertion, s: Subject, env: AssertionEnv) -> Check:
    """The output deep-equals ``value`` (JSON text parsed when ``value`` is not a string)."""
    actual = s.output
    if isinstance(actual, str) and not isinstance(a.value, str):
        actual = parse_json_text(actual)
    if deep_equal(actual, a.value):
        return Check(True, "output equals the expected value", expected=a.value)
    return Check(False, f"expected {show(a.value)}, got {show(actual)}", expected=a.value)


@_checker("json_path")
def _json_path(a: Assertion, s: Subject, env: AssertionEnv) -> Check:
    """The value at ``path`` in the output's JSON equals ``value`` (a list: one of)."""
    given = _required(a, a.path)
    path = normalize_path(given)
    found, actual = lookup_path(s.output, given)
    if not found:
        return Check(False, f"json_path {path}: {actual}", expected=a.value)
    if deep_equal(actual, a.value):
        return Check(True, f"json_path {path} equals {show(actual)}", a.value, actual)
    if isinstance(a.value, list) and any(deep_equal(actual, v) for v in a.value):
        return Check(
            True, f"json_path {path}: {show(actual)} is one of the values", a.value, actual
        )
    wanted = f"one of {show(a.value)}" if isinstance(a.value, list) else show(a.value)
    return Check(False, f"json_path {path}: expected {wanted}, got {show(actual)}", a.value, actual)


@_checker("type")
def _type(a: Assertion, s: Subject, env: AssertionEnv) -> Check:
    """The JSON type of the output (or of ``path``) is ``value``."""
    where = "output"
    if a.path is not None:
        where = normalize_path(a.path)
        found, value = lookup_path(s.output, a.path)
        if not found:
            return Check(False, f"type at {where}: {value}", expected=a.value)
    else:
        value = s.output
        # An agent's JSON arrives as text; its parsed type is what the user means.
        if isinstance(value, str) and a.value != "string":
            value = parse_json_text(value)
    actual = json_type(value)
    if actual == a.value:
        return Check(True, f"{where} is of type {a.value}", a.value, actual)
    return Check(False, f"expected {where} to be of type {a.value}, got {actual}", a.value, actual)


@_checker("is_json")
def _is_json(a: Assertion, s: Subject, env: AssertionEnv) -> Check:
    """The output is or contains JSON, valid against ``value`` when it is a schema."""
    try:
        if s.output is None:
            raise ValueError("no output")
        data = extract_json(s.output) if isinstance(s.output, str) else s.output
    except ValueError:
        return Check(False, "expected output to be valid JSON")
    if a.value is None:
        return Check(True, "output is valid JSON")
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    error = best_match(Draft202012Validator(a.value).iter_errors(data))
    if error is None:
        return Check(True, "output is valid JSON matching the schema", expected=a.value)
    return Check(False, f"JSON does not match schema at {error.json_path}: {error.message}")


@_checker("tool_result")
def _tool_result(a: Assertion, s: Subject, env: AssertionEnv) -> Check:
    """``value.tool`` ran without error and its result matches ``value.result``."""
    name = a.value["tool"]
    calls = [c for c in s.tool_calls if tool_name_matches(c, name)]
    if not calls:
        called = show([c.tool for c in s.tool_calls])
        return Check(False, f"tool {show(name)} was not called; called: {called}", a.value)
    ok = [c for c in calls if not c.error]
    if not ok:
        return Check(False, f"tool {show(name)} returned an error: {calls[-1].error}", a.value)
    if "result" not in a.value:
        return Check(True, f"tool {show(name)} ran without error", a.value)
    expected = a.value["result"]
    for call in ok:
        if match_partial(call.result, expected):
            return Check(True, f"tool {show(name)} result matches", a.value, call.result)
    actual = ok[-1].result
    return Check(
        False,
        f"tool {show(name)} result does not match {show(expected)}; got {show(actual)}",
        a.value,
        actual,
    )


@_checker("agent")
async def _agent(a: Assertion, s: Subject, env: AssertionEnv) -> Check:
    """An LLM judge (``use``) decides whether the output meets the criteria in ``value``."""
    if env.judge is None:
        return Check(False, "no LLM judge is available to run agent assertions")
    judge, use, options = env.judge, _required(a, a.use), dict(a.options or {})
    samples = a.judge_samples or 1
    # Every sample is asked at once: N opinions cost one judge latency, not N.
    answers: list[dict[str, Any]] = []
    for answer in await asyncio.gather(*(judge(use, a.value, s, options) for _ in range(samples))):
        if not isinstance(answer, dict) or not isinstance(answer.get("passed"), bool):
            return Check(
                False,
                f'judge {a.use} answered without a boolean "passed": {show(answer)}',
                attribution="judge",
            )
        answers.append(answer)
    votes = [answer["passed"] is True for answer in answers]
    passed = votes.count(True) * 2 > samples  # a tie is not a majority for passing
    answer = answers[votes.index(passed)]  # the first sample on the majority's side
    reason = str(answer.get("reason") or "")
    verdict = {"passed": passed, "reason": reason, "criteria": a.value}
    verdict.update((k, v) for k, v in answer.items() if k not in verdict)
    message = reason or f"judge {a.use} {'passed' if passed else 'failed'} the output"
    if samples == 1:
        return Check(passed, message, verdict=verdict)
    split = len(set(votes)) > 1
    verdict["samples"] = [
        {"passed": vote, "reason": str(ans.get("reason") or "")}
        for ans, vote in zip(answers, votes, strict=True)
    ]
    verdict["votes"] = {"passed": votes.count(True), "failed": votes.count(False)}
    verdict["disagreement"] = split
    if split:
        message = f"{message} (judge split {votes.count(True)}/{samples} passed)"
    # A failing majority the samples disagree on is the judge's instability, not proof.
    return Check(passed, message, verdict=verdict, attribution="judge" if split else None)


@_checker("script")
async def _script(a: Assertion, s: Subject, env: AssertionEnv) -> Check:
    """A user function ``script`` decides: ``(output, input, value) -> bool | {pass, message}``."""
    if env.script is None:
        return Check(False, "no script resolver is available to run script assertions")
    # As every hook: async awaited, sync in a thread of its own (user code may block).
    answer = await call_user_function(
        env.script(_required(a, a.script)), s.output, s.input, a.value
    )
    if isinstance(answer, bool):
        word = "passed" if answer else "returned false"
        return Check(answer, f"script {a.script} {word}", expected=a.value)
    if isinstance(answer, dict) and isinstance(answer.get("pass"), bool):
        word = "passed" if answer["pass"] else "failed"
        message = str(answer.get("message") or f"script {a.script} {word}")
        return Check(answer["pass"], message, expected=a.value)
    return Check(
        False,
        f"script {a.script} returned {type(answer).__name__}; expected a bool or "
        f'{{"pass": bool, "message": str}}',
    )


@_checker("steps")
def _steps(a: Assertion, s: Subject, env: AssertionEnv) -> Check:
    """The turn made at least ``min`` and at most ``max`` model calls."""
    bounds = {k: v for k, v in (("min", a.minimum), ("max", a.maximum)) if v is not None}
    steps = s.steps
    if steps is None:
        return Check(False, "the number of model calls is not known here", expected=bounds)
    made = f"the turn made {steps} model call{'s' if steps != 1 else ''}"
    if s.stop_reason == "max_steps":
        made += " and stopped at the step limit"
    if a.minimum is not None and steps < a.minimum:
        return Check(False, f"expected at least {a.minimum} model calls; {made}", bounds, steps)
    if a.maximum is not None and steps > a.maximum:
        return Check(False, f"expected at most {a.maximum} model calls; {made}", bounds, steps)
    return Check(True, made, bounds, steps)


@_checker("stop_reason")
def _stop_reason(a: Assertion, s: Subject, env: AssertionEnv) -> Check:
    """The turn ended as ``value`` says (one reason or a list): done, max_steps, ..."""
    wanted = a.value if isinstance(a.value, list) else [a.value]
    actual = s.stop_reason or "done"
    if actual in wanted:
        return Check(True, f"the turn ended with {show(actual)}", a.value, actual)
    target = show(wanted[0]) if len(wanted) == 1 else f"one of {show(wanted)}"
    return Check(
        False,
        f"expected the turn to end with {target}; it ended with {show(actual)}",
        a.value,
        actual,
    )


@_checker("latency")
def _latency(a: Assertion, s: Subject, env: AssertionEnv) -> Check:
    """The case took at most ``value`` milliseconds."""
    ok = s.duration_ms <= a.value
    word = "within" if ok else "exceeds"
    return Check(ok, f"latency {s.duration_ms} ms {word} {a.value} ms", a.value, s.duration_ms)


@_checker("cost")
def _cost(a: Assertion, s: Subject, env: AssertionEnv) -> Check:
    """The case cost at most ``value``."""
    cost = s.usage.cost
    if cost is None:
        return Check(False, "cost unknown: the model reported no cost", expected=a.value)
    word = "within" if cost <= a.value else "exceeds"
    return Check(cost <= a.value, f"cost {cost:g} {word} {a.value:g}", a.value, cost)


@_checker("tokens")
def _tokens(a: Assertion, s: Subject, env: AssertionEnv) -> Check:
    """The case used at most ``value`` tokens in total."""
    total = s.usage.total_tokens
    word = "within" if total <= a.value else "exceeds"
    return Check(total <= a.value, f"{total} tokens {word} {a.value}", a.value, total)

"""The HTML report's data: one compact JSON document its script renders from, lazily.

A run of 20,000 cases must give a report a fraction of its results file's size that a
browser opens at once. So the page carries no per-case markup, only this document:

- ``cases``: one short row per result, failures first (failed, error, timeout, then
  skipped, then passed; file order within each): ``[index, id, status, duration_ms,
  input, checks, output, detail, run, connector, tags, cost]``, trailing empty fields
  left out.
  A passed or skipped case is its row alone (``output`` is its answer; its trace is left
  out); a case that did not pass has ``detail``, the position of its page in ``details``;
- ``details``: what a failing case's page shows, already as text (the Python helpers the
  other formats use decide every wording): error, input, output, expected, assertions
  with expected vs actual, tool calls, checkpoints, transcript, usage;
- ``strings``: every string that occurs more than once at some length, written once;
  ``{"$": n}`` stands for ``strings[n]``, and an object of the data that itself has a
  ``$`` or ``$o`` key is wrapped as ``{"$o": object}`` so it is never read as a reference.

Long texts are cut (``TEXT_LIMIT``, a passed case's ``PASSED_LIMIT``); the results file
keeps everything.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from agentcli.eval.results.codec import usage_dict
from agentcli.eval.results.model import CaseResult, JsonObject

from ._view import (
    case_cost_text,
    comparison,
    failure_message,
    format_duration,
    input_text,
    tool_calls_of,
    value_text,
)

__all__ = ["PASSED_LIMIT", "TEXT_LIMIT", "report_data"]

TEXT_LIMIT = 20_000  # characters of one text shown; enough to read any realistic answer
PASSED_LIMIT = 2_000  # characters of a passed case's input and output
_SHARED_MIN = 12  # strings shorter than this cost less written out than referenced
_ORDER = {"failed": 0, "error": 0, "timeout": 0, "skipped": 1, "passed": 2}


def _cut(text: str, limit: int = TEXT_LIMIT) -> str:
    """``text`` up to ``limit`` characters, saying how much more there was."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… ({len(text) - limit} more characters in the results file)"


def _call_rows(result: CaseResult) -> list[list[Any]]:
    """``[server, tool, error, arguments, result]`` of each tool call (texts)."""
    return [
        [
            call.server or "",
            call.tool or "?",
            call.error or "",
            _cut(value_text(call.arguments)),
            _cut(value_text(call.result, empty="-")),
        ]
        for call in tool_calls_of(result)
    ]


def _detail(result: CaseResult) -> JsonObject:
    """What the page of a case that did not pass shows."""
    detail: JsonObject = {
        "input": _cut(input_text(result.input)),
        "output": _cut(value_text(result.output, empty="(no output)")),
    }
    if why := failure_message(result):
        detail["error"] = _cut(why)
    if result.expected is not None:
        detail["expected"] = _cut(value_text(result.expected))
    if result.assertions:
        detail["assertions"] = [
            [
                item.type or "?",
                item.passed,
                item.message or str((item.verdict or {}).get("reason") or ""),
                [list(row) for row in comparison(item, result)],
            ]
            for item in result.assertions
        ]
    if calls := _call_rows(result):
        detail["tools"] = calls
    if result.checkpoints:
        detail["checkpoints"] = [
            [
                point.id or "?",
                point.required,
                point.reached,
                point.reached_at_turn or "-",
                _checkpoint_message(point.message, point.agent_validation),
            ]
            for point in result.checkpoints
        ]
    if result.turns:
        detail["turns"] = [
            {
                "turn": turn.turn or "?",
                "duration": format_duration(turn.duration_ms),
                "reached": list(turn.checkpoints_reached),
                "user": _cut(input_text(turn.input)),
                "agent": _cut(value_text(turn.output)),
                "tools": [
                    ["", call.tool or "?", call.error or "", _cut(value_text(call.arguments)), ""]
                    for call in turn.tool_calls
                ],
                "error": turn.error or "",
            }
            for turn in result.turns
        ]
    if result.trace is not None:
        usage = usage_dict(result.trace.usage)
        if (cost := case_cost_text(result)) is not None:
            usage["cost"] = cost
        detail["usage"] = usage
    return detail


def _checkpoint_message(message: str | None, judge: JsonObject | None) -> str:
    """A checkpoint's message with its judge's reason."""
    text = message or ""
    reason = (judge or {}).get("reason")
    return f"{text} (judge: {reason})".strip() if reason else text


def _row(index: int, result: CaseResult, detail: int | None) -> list[Any]:
    """A case's row in the cases table (a passed case: all there is of it)."""
    checks = result.assertions
    passed = sum(1 for item in checks if item.passed)
    duration = result.duration_ms
    row = [
        index,
        result.id,
        result.status,
        None if duration is None else round(duration),
        _cut(input_text(result.input), PASSED_LIMIT),
        f"{passed}/{len(checks)}" if checks else "-",
        None if detail is not None else _cut(value_text(result.output), PASSED_LIMIT),
        detail,
        result.run,
        result.connector,
        list(result.tags),
        case_cost_text(result) if detail is None else None,  # a failing case's: in its page
    ]
    while row[-1] in (None, []):  # the fields a row lacks at its end are left out
        row.pop()
    return row


def report_data(results: list[CaseResult]) -> JsonObject:
    """The compact document of ``results`` (see the module's docstring)."""
    order = sorted(range(len(results)), key=lambda i: _ORDER.get(results[i].status, 0))
    rows, details = [], []
    for index in order:
        result = results[index]
        detail = None
        if result.status not in ("passed", "skipped"):
            details.append(_detail(result))
            detail = len(details) - 1
        rows.append(_row(index, result, detail))
    return _Interner().document({"cases": rows, "details": details})


class _Interner:
    """Writes every string that occurs more than once (and is not short) once."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.index: dict[str, int] = {}
        self.strings: list[str] = []

    def document(self, data: JsonObject) -> JsonObject:
        """``data`` with its shared strings referenced, and the table of them."""
        self._count(data)
        encoded: JsonObject = {key: self._encode(value) for key, value in data.items()}
        encoded["strings"] = self.strings
        return encoded

    def _count(self, value: Any) -> None:
        if isinstance(value, str):
            if len(value) >= _SHARED_MIN:
                self.counts[value] += 1
        elif isinstance(value, list):
            for item in value:
                self._count(item)
        elif isinstance(value, dict):
            for item in value.values():
                self._count(item)

    def _encode(self, value: Any) -> Any:
        if isinstance(value, str):
            if len(value) < _SHARED_MIN or self.counts[value] < 2:
                return value
            number = self.index.get(value)
            if number is None:
                number = self.index[value] = len(self.strings)
                self.strings.append(value)
            return {"$": number}
        if isinstance(value, list):
            return [self._encode(item) for item in value]
        if isinstance(value, dict):
            encoded = {key: self._encode(item) for key, item in value.items()}
            return {"$o": encoded} if "$" in value or "$o" in value else encoded
        return value

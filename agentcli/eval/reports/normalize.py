"""What the results reader hands on: every record of a results file repaired, once, into
the types the rest of agentcli relies on, and a note of each repair for the warning.

The contract (what report writers, extract, merge and ``--resume`` may trust):

- a result always has ``id`` (a ``str``; ``""`` when the file holds no usable id — case ids
  are non-empty strings, so such a result matches no case) and ``status`` (one of
  ``STATUSES``; anything else counts as ``error``, never as a pass);
- every other known field is absent, null (as good as absent) or of its type:
  ``run``/``attempts`` whole numbers, ``duration_ms`` a finite number >= 0, ``error`` text, ``metadata`` an object,
  ``assertions``/``turns``/``logs`` lists of objects, ``checkpoints`` a list of objects (or
  Yao's map of them), ``trace`` an object whose ``tool_calls``/``retries`` are lists of
  objects with text ids and names and whose ``usage`` holds finite numbers;
- a value of the wrong type is dropped (text fields: written as their JSON text instead,
  so nothing said is lost); free-form values (``input``, ``output``, ``expected``,
  arguments, tool results, ``next``) are kept as they are;
- NaN and Infinity (Python's ``json`` reads them) are data where a value is free-form and
  are written back as Python writes them; in a figure agentcli computes with (durations,
  token counts, costs, rates, counts) they count as missing;
- header ``environment`` and ``metadata`` that are not objects become empty objects, and
  summary and stability figures that are not finite numbers are dropped.

Each function returns the repaired record (the same object when nothing needed repair)
and the list of repairs made, for one warning per record.
"""

from __future__ import annotations

from typing import Any

from agentcli.eval.results.model import STATUSES

from ._view import finite, to_json

__all__ = ["finite", "normal_header", "normal_result", "normal_stability", "normal_summary"]

Repairs = list[str]

_SUMMARY_FIGURES = ("total", "passed", "failed", "skipped", "errors", "timeouts", "duration_ms",
                    "pass_rate", "total_duration_ms")  # fmt: skip
_STABILITY_FIGURES = ("runs", "passed", "pass_rate", "ci_low", "ci_high")
_USAGE_FIGURES = ("input_tokens", "output_tokens", "total_tokens", "cost")


def _text(value: Any) -> str:
    """Text as it is; any other value as its JSON text."""
    return value if isinstance(value, str) else to_json(value)


def _whole(value: Any, minimum: int) -> bool:
    """True for an int (not a bool) of at least ``minimum``."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum


def _shown(value: Any, limit: int = 40) -> str:
    """A value short enough for a warning."""
    text = to_json(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _Repair:
    """Copies a record on its first repair and notes what was repaired."""

    def __init__(self, record: dict[str, Any], where: str) -> None:
        self.original = record
        self.record = record
        self.where = where
        self.notes: Repairs = []

    def set(self, key: str, value: Any, note: str) -> None:
        """Replace ``key`` (``None``: drop it), noting why."""
        if self.record is self.original:
            self.record = dict(self.original)
        if value is None:
            self.record.pop(key, None)
        else:
            self.record[key] = value
        self.notes.append(f"{self.where}{key} {note}")

    def adopt(self, key: str, value: Any, notes: Repairs) -> None:
        """Take the repaired ``value`` of a nested ``key`` and its notes (if it had any)."""
        if not notes:
            return
        if self.record is self.original:
            self.record = dict(self.original)
        self.record[key] = value
        self.notes += notes


def _objects(items: Any) -> list[dict[str, Any]] | None:
    """The objects of a list (``None`` when ``items`` is not a list)."""
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else None


def _list_of_objects(fix: _Repair, key: str) -> list[dict[str, Any]] | None:
    """``fix.record[key]`` as a list of objects: not a list is dropped, non-objects in it too."""
    value = fix.record.get(key)
    if key not in fix.record or value is None:
        return None
    objects = _objects(value)
    if objects is None:
        fix.set(key, None, f"is {_shown(value)} (not a list: ignored)")
    elif len(objects) != len(value):
        fix.set(
            key, objects, f"has {len(value) - len(objects)} item(s) that are not objects (ignored)"
        )
    return fix.record.get(key)


def _type(fix: _Repair, key: str, wanted: type | tuple[type, ...], name: str) -> None:
    """Drop ``key`` unless it is absent, null or of type ``wanted``."""
    value = fix.record.get(key)
    if value is not None and not isinstance(value, wanted):
        fix.set(key, None, f"is {_shown(value)} (not {name}: ignored)")


def _text_field(fix: _Repair, key: str) -> None:
    """``key`` as text when it is not (null stays null)."""
    value = fix.record.get(key)
    if value is not None and not isinstance(value, str):
        fix.set(key, _text(value), "is not text (kept as its JSON text)")


def _figures(fix: _Repair, keys: tuple[str, ...], *, minimum: float | None = None) -> None:
    """Drop each of ``keys`` whose value is not a finite number (above ``minimum``)."""
    for key in keys:
        value = fix.record.get(key)
        if value is None:
            continue
        number = finite(value)
        if number is None or (minimum is not None and number < minimum):
            fix.set(key, None, f"is {_shown(value)} (not a finite number: ignored)")


def normal_result(record: dict[str, Any]) -> tuple[dict[str, Any], Repairs]:
    """A result with the contract's types (see the module docstring) and its repairs."""
    fix = _Repair(record, "")
    case_id = record.get("id")
    if not isinstance(case_id, str) or not case_id:
        what = "missing" if "id" not in record else _shown(case_id)
        fix.set("id", "", f"is {what} (not a case id: the result matches no case)")
    status = record.get("status")
    if not isinstance(status, str) or status not in STATUSES:
        fix.set(
            "status",
            "error",
            f"is {_shown(status)} (not one of {'/'.join(STATUSES)}: counted as error)",
        )
    for key, minimum in (("run", 1), ("attempts", 0)):
        value = record.get(key)
        if value is not None and not _whole(value, minimum):
            fix.set(key, None, f"is {_shown(value)} (not a whole number >= {minimum}: ignored)")
    _figures(fix, ("duration_ms",), minimum=0)
    _text_field(fix, "error")
    _type(fix, "metadata", dict, "an object")
    for key in ("turns", "logs"):
        _list_of_objects(fix, key)
    if not isinstance(record.get("checkpoints"), dict):
        _list_of_objects(fix, "checkpoints")
    assertions = _list_of_objects(fix, "assertions")
    if assertions:
        _nested(
            fix,
            "assertions",
            [_assertion(a, f"assertions[{i}].") for i, a in enumerate(assertions)],
        )
    _type(fix, "trace", dict, "an object")
    if isinstance(fix.record.get("trace"), dict):
        fix.adopt("trace", *_trace(fix.record["trace"]))
    return fix.record, fix.notes


def _nested(fix: _Repair, key: str, repaired: list[tuple[dict[str, Any], Repairs]]) -> None:
    """Put the repaired items of the list ``key`` back, with their notes."""
    notes = [note for _, items in repaired for note in items]
    fix.adopt(key, [item for item, _ in repaired], notes)


def _assertion(item: dict[str, Any], where: str) -> tuple[dict[str, Any], Repairs]:
    """An assertion record: text type and message, a bool ``passed``, an object verdict."""
    fix = _Repair(item, where)
    if not isinstance(item.get("passed"), bool):
        fix.set(
            "passed", False, f"is {_shown(item.get('passed'))} (not true/false: counted as failed)"
        )
    for key in ("type", "message", "path"):
        _text_field(fix, key)
    _type(fix, "verdict", dict, "an object")
    return fix.record, fix.notes


def _trace(trace: dict[str, Any]) -> tuple[dict[str, Any], Repairs]:
    """A trace: its tool calls, retries and usage of the contract's types."""
    fix = _Repair(trace, "trace.")
    completion = trace.get("completion")
    if completion is not None and not isinstance(completion, str | dict):
        fix.set("completion", _text(completion), "is not text (kept as its JSON text)")
    calls = _list_of_objects(fix, "tool_calls")
    if calls:
        _nested(
            fix,
            "tool_calls",
            [_tool_call(c, f"trace.tool_calls[{i}].") for i, c in enumerate(calls)],
        )
    for key in ("retries", "messages", "logs", "sent"):
        _list_of_objects(fix, key)
    _type(fix, "usage", dict, "an object")
    if isinstance(fix.record.get("usage"), dict):
        usage = _Repair(fix.record["usage"], "trace.usage.")
        _figures(usage, _USAGE_FIGURES, minimum=0)
        fix.adopt("usage", usage.record, usage.notes)
    return fix.record, fix.notes


def _tool_call(call: dict[str, Any], where: str) -> tuple[dict[str, Any], Repairs]:
    """A tool call: text id, server, tool and error."""
    fix = _Repair(call, where)
    for key in ("id", "toolcall_id", "server", "tool", "name", "error"):
        _text_field(fix, key)
    return fix.record, fix.notes


def normal_header(record: dict[str, Any]) -> tuple[dict[str, Any], Repairs]:
    """A header whose ``environment`` and ``metadata`` are objects (empty when they were not)."""
    fix = _Repair(record, "")
    for key in ("environment", "metadata"):
        value = record.get(key)
        if value is not None and not isinstance(value, dict):
            fix.set(key, {}, f"is {_shown(value)} (not an object: ignored)")
    return fix.record, fix.notes


def normal_summary(record: dict[str, Any]) -> tuple[dict[str, Any], Repairs]:
    """A summary whose figures are finite numbers (the rest dropped) and names are text."""
    fix = _Repair(record, "")
    _figures(fix, _SUMMARY_FIGURES)
    for key in ("agent_id", "connector"):
        _type(fix, key, str, "text")
    return fix.record, fix.notes


def normal_stability(record: dict[str, Any]) -> tuple[dict[str, Any], Repairs]:
    """A stability result with a text id and finite figures (durations included)."""
    fix = _Repair(record, "")
    _text_field(fix, "id")
    _figures(fix, _STABILITY_FIGURES)
    duration = record.get("duration")
    if isinstance(duration, dict):
        inner = _Repair(duration, "duration.")
        _figures(inner, tuple(duration))
        fix.adopt("duration", inner.record, inner.notes)
    return fix.record, fix.notes

"""The results format: the typed values of ``model.py`` to their JSON form and back.

This is the one module that knows the format; the JSON Lines and JSON writers, the reader
(``reader.py``) and every command that reads results back go through it. Key orders
(fixed, so reports are diffable and Yao tooling reads them):

- tool call: ``id, server, tool, arguments, result, error`` (in a turn's response:
  ``tool, arguments, result, error``)
- trace: ``completion, tool_calls, next, usage[, messages][, logs][, retries][, sent]``
- usage: ``input_tokens, output_tokens, total_tokens, cost``
- assertion: ``type, passed, message[, expected][, actual][, path][, verdict]``
- turn: ``turn, input, output, response{content, tool_calls, next}, checkpoints_reached,
  duration_ms[, reasoning][, error]``
- checkpoint: ``id, reached, reached_at_turn, required, passed, message[, agent_validation]``
- result: ``id, status, input, output[, expected], duration_ms[, error], assertions
  [, trace][, metadata][, tags][, run][, turns][, checkpoints][, attempts][, logs][, helper_usage]
  [, otel][, sandbox][, connector][, attribution]`` (``helper_usage``: ``{role: usage}`` of
  the judges and simulator the case called; ``connector``: the matrix column, only in a
  matrix run)
- summary: ``total, passed, failed, skipped, errors, timeouts, duration_ms, agent_id,
  connector, pass_rate``, then further figures (stability, ``runs_per_case``)

Keys in ``[...]`` are left out when their value is ``None`` (``metadata`` also when empty),
so a report never carries a wall of nulls; keys agentcli does not know follow the known ones.

Reading is lenient, and every value read is of its type (what report writers, extract,
merge and ``--resume`` may trust):

- a result always has ``id`` (a ``str``; ``""`` when the file holds no usable id — case ids
  are non-empty strings, so such a result matches no case) and ``status`` (one of
  ``STATUSES``; anything else counts as ``error``, never as a pass);
- a known field of the wrong type is ignored (text fields: read as their JSON text, so
  nothing said is lost): ``run``/``attempts`` whole numbers, ``duration_ms`` a finite number
  >= 0, ``error`` text, ``metadata`` an object, ``assertions``/``turns``/``logs`` lists of
  objects, ``checkpoints`` a list of objects (or Yao's map of them), ``trace`` an object
  whose ``tool_calls``/``retries`` are lists of objects with text ids and names and whose
  ``usage`` holds finite numbers; free-form values (``input``, ``output``, ``expected``,
  arguments, tool results, ``next``) are kept as they are;
- NaN and Infinity (Python's ``json`` reads them) are data where a value is free-form; in
  a figure agentcli computes with (durations, token counts, costs, rates, counts) they
  count as missing;
- header ``environment`` and ``metadata`` that are not objects read as empty objects, and
  summary and stability figures that are not finite numbers are dropped;
- Yao's report shape is read too (a ``completion`` object, ``toolcall_id``, tool ``name``,
  turns and checkpoints under ``metadata``, checkpoints as a map keyed by id).

Each ``read_*`` returns the value and the notes of what it ignored, for one warning per
record. A record the typed value cannot reproduce exactly (a note, or Yao's shape) keeps
the record in ``source`` and is written back as it was read.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Any

from agentcli.assistant.request import ToolCall
from agentcli.choices import ATTRIBUTIONS, Attribution, one_of
from agentcli.jsonsafe import finite_json
from agentcli.models.base import Usage
from agentcli.words import counted

from .model import (
    STATUSES,
    AssertionResult,
    CaseResult,
    CheckpointState,
    JsonObject,
    RunHeader,
    RunReport,
    RunSummary,
    Status,
    Trace,
    Turn,
)

__all__ = [
    "ENVIRONMENT_KEYS",
    "METADATA_KEYS",
    "STABILITY_KEYS",
    "Notes",
    "finite",
    "finished_header",
    "ordered",
    "read_header",
    "read_result",
    "read_stability",
    "read_summary",
    "read_trace",
    "read_usage",
    "report_document",
    "result_dict",
    "summary_dict",
    "to_json",
    "trace_dict",
    "usage_dict",
]

Notes = list[str]

ENVIRONMENT_KEYS = ("user_id", "team_id", "locale")
METADATA_KEYS = ("started_at", "completed_at", "version", "input_file", "options")
STABILITY_KEYS = ("id", "runs", "passed", "pass_rate", "pass_hat_k", "pass_at_k", "ci_low",
                  "ci_high", "stability", "duration")  # fmt: skip
_RESULT_KEYS = frozenset(("id", "status", "input", "output", "expected", "duration_ms", "error",
                          "assertions", "trace", "metadata", "tags", "run", "turns", "checkpoints",
                          "attempts", "logs", "helper_usage", "otel", "sandbox",
                          "connector", "attribution"))  # fmt: skip
_TRACE_KEYS = frozenset(
    (
        "completion",
        "tool_calls",
        "next",
        "usage",
        "messages",
        "logs",
        "retries",
        "sent",
        "steps",
        "stop_reason",
    )
)
_ASSERTION_KEYS = frozenset(("type", "passed", "message", "expected", "actual", "path", "verdict"))
_TURN_KEYS = frozenset(("turn", "input", "output", "response", "checkpoints_reached",
                        "duration_ms", "reasoning", "error"))  # fmt: skip
_CHECKPOINT_KEYS = frozenset(("id", "reached", "reached_at_turn", "required", "passed",
                              "message", "agent_validation"))  # fmt: skip
_SUMMARY_COUNTS = ("total", "passed", "failed", "skipped", "errors", "timeouts")
_SUMMARY_KEYS = frozenset((*_SUMMARY_COUNTS, "duration_ms", "agent_id", "connector", "pass_rate"))
_STABILITY_FIGURES = ("runs", "passed", "pass_rate", "ci_low", "ci_high")
_USAGE_FIGURES = ("input_tokens", "output_tokens", "total_tokens", "cost")


# -- JSON text ------------------------------------------------------------------------------


def _json_fallback(value: Any) -> Any:
    """Serialise what json cannot (sets, paths, objects) instead of losing the whole report."""
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    return str(value)


# Characters str.splitlines() treats as line breaks although JSON leaves them raw; escaped
# so that no reader splitting on them can cut a JSON Lines record in two.
_LINE_BREAKS = str.maketrans({"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def to_json(value: Any, *, indent: int | None = None, spaced: bool = False) -> str:
    """JSON text: UTF-8 friendly (no ASCII escapes), never failing on odd values, NaN and
    the infinities as ``null`` (``jsonsafe.finite_json``); compact unless ``indent`` or
    ``spaced``."""
    return finite_json(value, indent=indent, spaced=spaced, default=_json_fallback).translate(
        _LINE_BREAKS
    )


def ordered(data: JsonObject, keys: tuple[str, ...]) -> JsonObject:
    """``data`` with ``keys`` first (in that order), then its other keys as they came."""
    out = {key: data[key] for key in keys if key in data}
    out.update((key, value) for key, value in data.items() if key not in out)
    return out


def finite(value: Any) -> float | None:
    """``value`` as a float when it is a real, finite number (not a bool, NaN, Infinity, or
    an integer too big for a float); else ``None``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


# -- writing ----------------------------------------------------------------------------------


def usage_dict(usage: Usage) -> JsonObject:
    """``{input_tokens, output_tokens, total_tokens, cost}`` (cost ``None`` if unknown)."""
    cost = usage.cost
    return {
        "input_tokens": int(usage.input_tokens),
        "output_tokens": int(usage.output_tokens),
        "total_tokens": int(usage.total_tokens),
        "cost": float(cost) if cost is not None else None,
    }


def _turn_call_dict(call: ToolCall) -> JsonObject:
    """A tool call in a turn's response: ``tool, arguments, result, error``."""
    return {"tool": call.tool, "arguments": call.arguments, "result": call.result,
            "error": call.error}  # fmt: skip


def trace_dict(trace: Trace) -> JsonObject:
    """A trace's JSON form."""
    data: JsonObject = {
        "completion": trace.completion,
        "tool_calls": [call.to_dict() for call in trace.tool_calls],
        "next": trace.next,
        "usage": usage_dict(trace.usage),
    }
    if trace.messages is not None:
        data["messages"] = trace.messages
    if trace.logs is not None:
        data["logs"] = trace.logs
    if trace.retries:
        data["retries"] = trace.retries
    if trace.sent:
        data["sent"] = trace.sent
    if trace.steps is not None:
        data["steps"] = trace.steps
    if trace.stop_reason is not None and trace.stop_reason != "done":
        data["stop_reason"] = trace.stop_reason
    if trace.extra:
        data.update(trace.extra)
    return data


def assertion_dict(item: AssertionResult) -> JsonObject:
    """An assertion's JSON form."""
    data: JsonObject = {"type": item.type, "passed": item.passed, "message": item.message}
    if item.expected is not None:
        data["expected"] = item.expected
    if item.actual is not None:
        data["actual"] = item.actual
    if item.path is not None:
        data["path"] = item.path
    if item.verdict is not None:
        data["verdict"] = item.verdict
    if item.extra:
        data.update(item.extra)
    return data


def turn_dict(turn: Turn) -> JsonObject:
    """A dynamic turn's JSON form."""
    data: JsonObject = {
        "turn": turn.turn,
        "input": turn.input,
        "output": turn.output,
        "response": {
            "content": turn.content,
            "tool_calls": [_turn_call_dict(call) for call in turn.tool_calls],
            "next": turn.next,
        },
        "checkpoints_reached": turn.checkpoints_reached,
        "duration_ms": turn.duration_ms,
    }
    if turn.reasoning:
        data["reasoning"] = turn.reasoning
    if turn.error is not None:
        data["error"] = turn.error
    if turn.extra:
        data.update(turn.extra)
    return data


def checkpoint_dict(point: CheckpointState) -> JsonObject:
    """A checkpoint state's JSON form."""
    data: JsonObject = {
        "id": point.id,
        "reached": point.reached,
        "reached_at_turn": point.reached_at_turn,
        "required": point.required,
        "passed": point.passed,
        "message": point.message,
    }
    if point.agent_validation is not None:
        data["agent_validation"] = point.agent_validation
    if point.extra:
        data.update(point.extra)
    return data


def result_dict(result: CaseResult) -> JsonObject:
    """A result's JSON form (a result read back that its fields cannot reproduce: as read)."""
    if result.source is not None:
        return result.source
    data: JsonObject = {
        "id": result.id,
        "status": result.status,
        "input": result.input,
        "output": result.output,
    }
    if result.expected is not None:
        data["expected"] = result.expected
    if result.duration_ms is not None:
        data["duration_ms"] = result.duration_ms
    if result.error is not None:
        data["error"] = result.error
    data["assertions"] = [assertion_dict(a) for a in result.assertions]
    if result.trace is not None:
        data["trace"] = trace_dict(result.trace)
    if result.metadata:
        data["metadata"] = result.metadata
    if result.tags:
        data["tags"] = result.tags
    if result.run is not None:
        data["run"] = result.run
    if result.turns is not None:
        data["turns"] = [turn_dict(turn) for turn in result.turns]
    if result.checkpoints is not None:
        data["checkpoints"] = [checkpoint_dict(point) for point in result.checkpoints]
    if result.attempts is not None:
        data["attempts"] = result.attempts
    if result.logs is not None:
        data["logs"] = result.logs
    if result.helper_usage:
        data["helper_usage"] = {role: usage_dict(u) for role, u in result.helper_usage.items()}
    if result.otel is not None:
        data["otel"] = result.otel
    if result.sandbox is not None:
        data["sandbox"] = result.sandbox
    if result.connector is not None:
        data["connector"] = result.connector
    if result.attribution is not None:
        data["attribution"] = result.attribution
    if result.extra:
        data.update(result.extra)
    return data


def header_dict(header: RunHeader) -> JsonObject:
    """A header's JSON form (without the JSON Lines ``type``)."""
    if header.source is not None:
        return header.source
    return {"environment": header.environment, "metadata": header.metadata, **header.extra}


def summary_dict(summary: RunSummary) -> JsonObject:
    """A summary's JSON form."""
    if summary.source is not None:
        return summary.source
    data: JsonObject = {
        "total": summary.total,
        "passed": summary.passed,
        "failed": summary.failed,
        "skipped": summary.skipped,
        "errors": summary.errors,
        "timeouts": summary.timeouts,
        "duration_ms": summary.duration_ms,
        "agent_id": summary.agent_id,
        "connector": summary.connector,
        "pass_rate": summary.pass_rate,
    }
    if summary.extra:
        data.update(summary.extra)
    return data


def finished_header(header: RunHeader, summary: RunSummary | None = None) -> RunHeader:
    """``header`` with ``metadata.completed_at`` set, when the run ended: ``started_at`` plus
    the summary's ``duration_ms``, in ``started_at``'s time zone.

    A JSON Lines header is written at the start and never says when the run ended, so a
    report rendered from it later (``agent report``, ``agent merge``) would otherwise be
    stamped with the time it was rendered. For a live run the sum is its end too (the
    run's clock starts as its header is written and stops as its summary is made), and
    rendering the same file twice gives the same report. Without a usable start or
    duration (a run cut off before its summary, a foreign file) the time of rendering
    stands in, as the report's own stamp."""
    if header.metadata.get("completed_at"):
        return header
    ended = _ended_at(header.metadata.get("started_at"), summary)
    completed = ended or datetime.now().astimezone().isoformat()
    metadata = {**header.metadata, "completed_at": completed}
    return RunHeader(header.environment, metadata, header.extra, header.source)


def _ended_at(started: Any, summary: RunSummary | None) -> str | None:
    """``started`` (ISO text) plus the summary's duration, as ISO text; ``None`` when either
    is missing or unusable."""
    duration = finite(summary.duration_ms) if summary is not None else None
    if not isinstance(started, str) or duration is None or duration < 0:
        return None
    try:
        return (datetime.fromisoformat(started) + timedelta(milliseconds=duration)).isoformat()
    except (ValueError, OverflowError):  # not ISO text; a date past the year 9999
        return None


def report_document(report: RunReport) -> JsonObject:
    """The one report object (Yao's shape, stable key order) of a whole-document report."""
    header = report.header
    document: JsonObject = {
        "summary": summary_dict(report.summary),
        "environment": ordered(header.environment, ENVIRONMENT_KEYS),
        "results": [result_dict(result) for result in report.results],
    }
    if report.stability:
        document["stability_results"] = [ordered(s, STABILITY_KEYS) for s in report.stability]
    document["metadata"] = ordered(header.metadata, METADATA_KEYS)
    document.update(
        (key, value)
        for key, value in header_dict(header).items()
        if key not in document and key not in ("type", "environment", "metadata")
    )
    return document


# -- reading ----------------------------------------------------------------------------------


def _shown(value: Any, limit: int = 40) -> str:
    """A value short enough for a warning."""
    text = to_json(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _whole(value: Any, minimum: int) -> bool:
    """True for an int (not a bool) of at least ``minimum``."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum


class _Fields:
    """Reads one record's fields as their types, noting each value it had to ignore."""

    __slots__ = ("data", "notes", "where")

    def __init__(self, data: JsonObject, where: str, notes: Notes) -> None:
        self.data = data
        self.where = where  # the record's place in its parent: "trace.", "assertions[0]."
        self.notes = notes

    def note(self, key: str, text: str) -> None:
        """Note why ``key``'s value was not taken as it was."""
        self.notes.append(f"{self.where}{key} {text}")

    def text(self, key: str) -> str | None:
        """Text as it is; any other value (null aside) as its JSON text."""
        value = self.data.get(key)
        if value is None or isinstance(value, str):
            return value
        self.note(key, "is not text (kept as its JSON text)")
        return to_json(value)

    def figure(self, key: str, minimum: float | None = None) -> Any:
        """A finite number (of at least ``minimum``) as it was written, else ``None``."""
        value = self.data.get(key)
        if value is None:
            return None
        number = finite(value)
        if number is None or (minimum is not None and number < minimum):
            self.note(key, f"is {_shown(value)} (not a finite number: ignored)")
            return None
        return value

    def whole(self, key: str, minimum: int) -> int | None:
        """A whole number of at least ``minimum``, else ``None``."""
        value = self.data.get(key)
        if value is None or _whole(value, minimum):
            return value
        self.note(key, f"is {_shown(value)} (not a whole number >= {minimum}: ignored)")
        return None

    def of_type(self, key: str, wanted: type, name: str) -> Any:
        """The value when it is of type ``wanted``, else ``None``."""
        value = self.data.get(key)
        if value is None or isinstance(value, wanted):
            return value
        self.note(key, f"is {_shown(value)} (not {name}: ignored)")
        return None

    def objects(self, key: str) -> list[JsonObject] | None:
        """A list of objects; not a list is ignored, and so are its items that are not."""
        value = self.data.get(key)
        if value is None:
            return None
        if not isinstance(value, list):
            self.note(key, f"is {_shown(value)} (not a list: ignored)")
            return None
        objects = [item for item in value if isinstance(item, dict)]
        if len(objects) != len(value):
            self.note(
                key,
                f"has {counted(len(value) - len(objects), 'item')} that are not objects (ignored)",
            )
        return objects


def _unknown(data: JsonObject, known: frozenset[str]) -> JsonObject:
    """The keys of ``data`` agentcli does not know, as they came."""
    return {key: value for key, value in data.items() if key not in known}


def read_usage(data: Any, fields: _Fields | None = None) -> Usage:
    """Usage from its JSON form (figures that are not finite numbers >= 0 count as missing)."""
    if not isinstance(data, dict):
        return Usage()
    read = fields or _Fields(data, "", [])
    figures = {key: read.figure(key, minimum=0) for key in _USAGE_FIGURES}
    usage = Usage(
        input_tokens=int(figures["input_tokens"] or 0),
        output_tokens=int(figures["output_tokens"] or 0),
        cost=float(figures["cost"]) if figures["cost"] is not None else None,
    )
    total = figures["total_tokens"]
    if total is not None and int(total) != usage.total_tokens:
        usage.total = int(total)
    return usage


def _otel_ids(data: JsonObject | None) -> dict[str, str] | None:
    """``otel``: the case span's ids (text values only)."""
    if data is None:
        return None
    return {str(key): value for key, value in data.items() if isinstance(value, str)}


def _helper_usage(data: JsonObject, notes: Notes) -> dict[str, Usage]:
    """``helper_usage``: a usage per helper role (entries that are not objects ignored)."""
    usage: dict[str, Usage] = {}
    for role, figures in data.items():
        if isinstance(figures, dict):
            usage[str(role)] = read_usage(figures, _Fields(figures, f"helper_usage.{role}.", notes))
        else:
            notes.append(f"helper_usage.{role} is {_shown(figures)} (not an object: ignored)")
    return usage


def _completion_text(completion: Any) -> str:
    """Our completion string, or the text of Yao's ``{role, content, ...}`` completion object."""
    if completion is None:
        return ""
    if isinstance(completion, str):
        return completion
    content = completion.get("content") if isinstance(completion, dict) else completion
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", "")) for part in content if isinstance(part, dict)
        ).strip()
    return ""


def _tool_call(data: JsonObject, where: str, notes: Notes) -> ToolCall:
    """A tool call (text id, server, tool and error); Yao's ``toolcall_id`` and ``name`` too."""
    read = _Fields(data, where, notes)
    texts = {
        key: read.text(key)
        for key in ("id", "toolcall_id", "server", "tool", "name", "error", "error_type")
    }
    return ToolCall(
        id=texts["id"] or texts["toolcall_id"] or "",
        server=texts["server"] or "",
        tool=texts["tool"] or texts["name"] or "",
        arguments=data.get("arguments"),
        result=data.get("result"),
        error=texts["error"] or None,
        error_type=texts["error_type"] or None,
        stubbed=data.get("stubbed") is True,
        fault=read.text("fault") or None,
    )


def read_trace(data: JsonObject, notes: Notes | None = None) -> Trace:
    """A trace from its JSON form (ours or Yao's)."""
    notes = [] if notes is None else notes
    read = _Fields(data, "trace.", notes)
    completion = data.get("completion")
    if completion is not None and not isinstance(completion, str | dict):
        read.note("completion", "is not text (kept as its JSON text)")
        completion = to_json(completion)
    calls = read.objects("tool_calls") or []
    lists = {key: read.objects(key) for key in ("retries", "messages", "logs", "sent")}
    usage = read.of_type("usage", dict, "an object")
    return Trace(
        completion=_completion_text(completion),
        tool_calls=[
            _tool_call(call, f"trace.tool_calls[{index}].", notes)
            for index, call in enumerate(calls)
        ],
        next=data.get("next"),
        usage=read_usage(usage, _Fields(usage, "trace.usage.", notes)) if usage else Usage(),
        messages=lists["messages"],
        logs=lists["logs"],
        retries=lists["retries"],
        sent=lists["sent"],
        steps=read.whole("steps", 0),
        stop_reason=read.text("stop_reason"),
        extra=_unknown(data, _TRACE_KEYS),
    )


def _assertion(data: JsonObject, where: str, notes: Notes) -> AssertionResult:
    """An assertion record: text type and message, a bool ``passed``, an object verdict."""
    read = _Fields(data, where, notes)
    passed = data.get("passed")
    if not isinstance(passed, bool):
        read.note("passed", f"is {_shown(passed)} (not true/false: counted as failed)")
        passed = False
    return AssertionResult(
        type=read.text("type") or "",
        passed=passed,
        message=read.text("message") or "",
        expected=data.get("expected"),
        actual=data.get("actual"),
        path=read.text("path"),
        verdict=read.of_type("verdict", dict, "an object"),
        extra=_unknown(data, _ASSERTION_KEYS),
    )


def _turn(data: JsonObject) -> Turn:
    """A dynamic turn; values of the wrong type read as unknown (the result keeps its record)."""
    response = data.get("response")
    response = response if isinstance(response, dict) else {}
    calls = response.get("tool_calls")
    reached = data.get("checkpoints_reached")
    error = data.get("error")
    content = response.get("content")
    return Turn(
        turn=data["turn"] if _whole(data.get("turn"), 0) else 0,
        input=data.get("input"),
        output=data.get("output"),
        content=content if isinstance(content, str) else "",
        tool_calls=[_tool_call(c, "", []) for c in calls if isinstance(c, dict)]
        if isinstance(calls, list)
        else [],
        next=response.get("next"),
        checkpoints_reached=[str(c) for c in reached] if isinstance(reached, list) else [],
        duration_ms=data["duration_ms"] if finite(data.get("duration_ms")) is not None else 0,
        reasoning=data["reasoning"] if isinstance(data.get("reasoning"), str) else "",
        error=None if error is None else error if isinstance(error, str) else to_json(error),
        extra=_unknown(data, _TURN_KEYS),
    )


def _checkpoint(data: JsonObject, key: Any = None) -> CheckpointState:
    """A checkpoint state (``key``: its id in Yao's map); wrong types read as unknown."""
    point_id = data.get("id", key)
    turn = data.get("reached_at_turn")
    message = data.get("message")
    validation = data.get("agent_validation")
    return CheckpointState(
        id="" if point_id is None else str(point_id),
        reached=data.get("reached") is True,
        reached_at_turn=turn if _whole(turn, 0) else None,
        required=data.get("required", True) is not False,
        passed=data.get("passed") is True,
        message=None if message is None else str(message),
        agent_validation=validation if isinstance(validation, dict) else None,
        extra=_unknown(data, _CHECKPOINT_KEYS),
    )


def _checkpoints(read: _Fields, metadata: JsonObject) -> list[CheckpointState] | None:
    """Checkpoint states from our list, or Yao's map keyed by id (top level or in metadata)."""
    points = read.data.get("checkpoints")
    if points is None:
        points = metadata.get("checkpoints")  # Yao keeps them there
        if isinstance(points, list):
            return [_checkpoint(point) for point in points if isinstance(point, dict)]
    if isinstance(points, dict):
        return [_checkpoint(v, k) for k, v in points.items() if isinstance(v, dict)]
    objects = read.objects("checkpoints")
    return None if objects is None else [_checkpoint(point) for point in objects]


def _status(read: _Fields) -> Status:
    """The status, ``error`` (noted) when it is not one of ``STATUSES``."""
    status = read.data.get("status")
    if isinstance(status, str) and status in STATUSES:
        return status  # narrowed to Status by the membership test
    read.note("status", f"is {_shown(status)} (not one of {'/'.join(STATUSES)}: counted as error)")
    return "error"


def _attribution(read: _Fields) -> Attribution | None:
    """Who a failure is on, when the file says so with one of ``ATTRIBUTIONS`` (noted if not)."""
    value = read.data.get("attribution")
    if value is None:
        return None
    known = one_of(value, ATTRIBUTIONS)
    if known is None:
        read.note("attribution", f"is {_shown(value)} (not one of {'/'.join(ATTRIBUTIONS)})")
    return known


def read_result(data: JsonObject) -> tuple[CaseResult, Notes]:
    """A result from its JSON form (ours or Yao's) and the notes of what was ignored."""
    notes: Notes = []
    read = _Fields(data, "", notes)
    case_id = data.get("id")
    if not isinstance(case_id, str) or not case_id:
        what = "missing" if "id" not in data else _shown(case_id)
        read.note("id", f"is {what} (not a case id: the result matches no case)")
        case_id = ""
    status = _status(read)
    run, attempts = read.whole("run", 1), read.whole("attempts", 0)
    duration = read.figure("duration_ms", minimum=0)
    error = read.text("error")
    metadata = read.of_type("metadata", dict, "an object") or {}
    turns = read.objects("turns")
    logs = read.objects("logs")
    if turns is None and isinstance(metadata.get("turns"), list):  # Yao keeps them there
        turns = [turn for turn in metadata["turns"] if isinstance(turn, dict)]
    checkpoints = _checkpoints(read, metadata)
    assertions = read.objects("assertions") or []
    trace = read.of_type("trace", dict, "an object")
    helpers = read.of_type("helper_usage", dict, "an object")
    connector = read.text("connector")
    result = CaseResult(
        id=case_id,
        status=status,
        input=data.get("input"),
        output=data.get("output"),
        expected=data.get("expected"),
        duration_ms=duration,
        error=error or None,
        assertions=[_assertion(a, f"assertions[{i}].", notes) for i, a in enumerate(assertions)],
        trace=read_trace(trace, notes) if trace is not None else None,
        metadata=metadata,
        tags=_tags(read),
        run=run,
        turns=None if turns is None else [_turn(turn) for turn in turns],
        checkpoints=checkpoints,
        attempts=attempts,
        logs=logs,
        helper_usage=None if helpers is None else _helper_usage(helpers, notes),
        otel=_otel_ids(read.of_type("otel", dict, "an object")),
        sandbox=read.text("sandbox"),
        connector=connector or None,
        attribution=_attribution(read),
        extra=_unknown(data, _RESULT_KEYS),
    )
    if notes or result_dict(result) != data:
        result.source = data
    return result, notes


def _tags(read: _Fields) -> list[str]:
    """A result's ``tags``: a list of text; anything else is noted and ignored."""
    value = read.data.get("tags")
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(tag, str) for tag in value):
        read.note("tags", f"is {_shown(value)} (not a list of text: ignored)")
        return []
    return list(value)


def read_header(data: JsonObject) -> tuple[RunHeader, Notes]:
    """A header whose ``environment`` and ``metadata`` are objects (empty when they were not)."""
    notes: Notes = []
    read = _Fields(data, "", notes)
    sections = {}
    for key in ("environment", "metadata"):
        value = data.get(key)
        if value is not None and not isinstance(value, dict):
            read.note(key, f"is {_shown(value)} (not an object: ignored)")
        sections[key] = value if isinstance(value, dict) else {}
    header = RunHeader(
        environment=sections["environment"],
        metadata=sections["metadata"],
        extra={k: v for k, v in data.items() if k not in ("type", "environment", "metadata")},
    )
    if notes or header_dict(header) != {k: v for k, v in data.items() if k != "type"}:
        header.source = data
    return header, notes


def read_summary(data: JsonObject) -> tuple[RunSummary, Notes]:
    """A summary whose figures are finite numbers (the rest dropped) and names are text."""
    notes: Notes = []
    read = _Fields(data, "", notes)
    counts = {key: read.figure(key) for key in _SUMMARY_COUNTS}
    extra: JsonObject = {}
    for key, value in data.items():
        if key in _SUMMARY_KEYS:
            continue
        if (isinstance(value, float) and finite(value) is None) or key == "total_duration_ms":
            value = read.figure(key)  # a figure that is not a number is no figure
            if value is None:
                continue
        extra[key] = value
    summary = RunSummary(
        total=int(counts["total"] or 0),
        passed=int(counts["passed"] or 0),
        failed=int(counts["failed"] or 0),
        skipped=int(counts["skipped"] or 0),
        errors=int(counts["errors"] or 0),
        timeouts=int(counts["timeouts"] or 0),
        duration_ms=read.figure("duration_ms"),
        agent_id=read.of_type("agent_id", str, "text") or "",
        connector=read.of_type("connector", str, "text") or "",
        pass_rate=read.figure("pass_rate"),
        extra=extra,
    )
    if notes or summary_dict(summary) != data:
        summary.source = data
    return summary, notes


def read_stability(data: JsonObject) -> tuple[JsonObject, Notes]:
    """A stability result with a text id and finite figures (durations included), as
    ``stats.stability.CaseStability.to_dict`` or Yao writes it; the record itself when
    nothing needed repair."""
    notes: Notes = []
    read = _Fields(data, "", notes)
    record = dict(data)
    if data.get("id") is not None:
        record["id"] = read.text("id")
    for key in _STABILITY_FIGURES:
        if data.get(key) is not None and read.figure(key) is None:
            del record[key]
    duration = data.get("duration")
    if isinstance(duration, dict):
        inner = _Fields(duration, "duration.", notes)
        record["duration"] = {
            key: value
            for key, value in duration.items()
            if value is None or inner.figure(key) is not None
        }
    return (record if notes else data), notes

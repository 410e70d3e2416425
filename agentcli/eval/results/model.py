"""Value types of an eval run: tool-call records, traces, assertion and case results, summary.

Every type serialises through an explicit ``to_dict`` whose key order is fixed (reports are
diffable and Yao tooling reads them) and reads back through ``from_dict``. Key orders:

- ``ToolCallRecord``: ``id, server, tool, arguments, result, error``
- ``Trace``: ``completion, tool_calls, next, usage[, messages][, logs]``
- usage: ``input_tokens, output_tokens, total_tokens, cost``
- ``AssertionResult``: ``type, passed, message[, expected][, actual][, path][, verdict]``
- ``CaseResult``: ``id, status, input, output[, expected], duration_ms[, error], assertions
  [, trace][, metadata][, run][, turns][, checkpoints][, attempts][, logs]``
- summary: ``total, passed, failed, skipped, errors, timeouts, duration_ms, agent_id,
  connector, pass_rate``

Keys in ``[...]`` are left out when their value is ``None`` (``metadata`` also when empty),
so a report never carries a wall of nulls. ``from_dict`` also accepts Yao's report shape
(a ``completion`` object, ``toolcall_id``) so ``agent extract`` can read Yao files.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "STATUSES",
    "AssertionResult",
    "CaseResult",
    "ToolCallRecord",
    "Trace",
    "normalize_usage",
    "summarize",
    "summary_from_counts",
]

STATUSES = ("passed", "failed", "error", "timeout", "skipped")


def normalize_usage(usage: dict[str, Any] | None = None) -> dict[str, Any]:
    """Usage as ``{input_tokens, output_tokens, total_tokens, cost}`` (cost ``None`` if unknown)."""
    usage = usage or {}
    input_tokens = int(usage.get("input_tokens") or 0)
    output_tokens = int(usage.get("output_tokens") or 0)
    total = usage.get("total_tokens")
    cost = usage.get("cost")
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "total_tokens": int(total) if total is not None else input_tokens + output_tokens,
        "cost": float(cost) if cost is not None else None,
    }


@dataclass(slots=True)
class ToolCallRecord:
    """One tool call the agent made: bare tool name, its server, arguments, result or error."""

    id: str = ""
    server: str = ""
    tool: str = ""
    arguments: Any = None
    result: Any = None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``id, server, tool, arguments, result, error``."""
        return {
            "id": self.id,
            "server": self.server,
            "tool": self.tool,
            "arguments": self.arguments,
            "result": self.result,
            "error": self.error,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolCallRecord:
        """Inverse of ``to_dict``; also reads Yao's ``toolcall_id``."""
        error = data.get("error")
        return cls(
            id=str(data.get("id") or data.get("toolcall_id") or ""),
            server=str(data.get("server") or ""),
            tool=str(data.get("tool") or data.get("name") or ""),
            arguments=data.get("arguments"),
            result=data.get("result"),
            error=str(error) if error else None,
        )


@dataclass(slots=True)
class Trace:
    """What happened during a case: final text, tool calls, Next data, usage, optional logs."""

    completion: str = ""
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    next: Any = None
    usage: dict[str, Any] = field(default_factory=normalize_usage)
    messages: list[dict[str, Any]] | None = None
    logs: list[dict[str, Any]] | None = None
    retries: list[dict[str, Any]] | None = None  # model calls retried (rate limits, 5xx, ...)
    sent: list[dict[str, Any]] | None = None  # messages hooks sent with ctx.send

    def __post_init__(self) -> None:
        self.usage = normalize_usage(self.usage)

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``completion, tool_calls, next, usage[, messages][, logs][, retries][, sent]``."""
        data: dict[str, Any] = {
            "completion": self.completion,
            "tool_calls": [call.to_dict() for call in self.tool_calls],
            "next": self.next,
            "usage": dict(self.usage),
        }
        if self.messages is not None:
            data["messages"] = self.messages
        if self.logs is not None:
            data["logs"] = self.logs
        if self.retries:
            data["retries"] = self.retries
        if self.sent:
            data["sent"] = self.sent
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Trace:
        """Inverse of ``to_dict``; a Yao ``completion`` object contributes its text content."""
        return cls(
            completion=_completion_text(data.get("completion")),
            tool_calls=[ToolCallRecord.from_dict(c) for c in data.get("tool_calls") or []],
            next=data.get("next"),
            usage=normalize_usage(data.get("usage")),
            messages=data.get("messages"),
            logs=data.get("logs"),
            retries=data.get("retries"),
            sent=data.get("sent"),
        )


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


@dataclass(slots=True)
class AssertionResult:
    """The outcome of one assertion; ``verdict`` holds an LLM judge's ``{passed, reason, criteria}``."""

    type: str
    passed: bool
    message: str = ""
    expected: Any = None
    actual: Any = None
    path: str | None = None
    verdict: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``type, passed, message[, expected][, actual][, path][, verdict]``."""
        data: dict[str, Any] = {"type": self.type, "passed": self.passed, "message": self.message}
        for key in ("expected", "actual", "path", "verdict"):
            value = getattr(self, key)
            if value is not None:
                data[key] = value
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AssertionResult:
        """Inverse of ``to_dict``."""
        return cls(
            type=str(data.get("type") or ""),
            passed=bool(data.get("passed")),
            message=str(data.get("message") or ""),
            expected=data.get("expected"),
            actual=data.get("actual"),
            path=data.get("path"),
            verdict=data.get("verdict"),
        )


@dataclass(slots=True)
class CaseResult:
    """The result of one case (one run of it under ``--runs``)."""

    id: str
    status: str
    input: Any = None
    output: Any = None
    expected: Any = None
    duration_ms: float = 0
    error: str | None = None
    assertions: list[AssertionResult] = field(default_factory=list)
    trace: Trace | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    run: int | None = None
    turns: list[dict[str, Any]] | None = None
    checkpoints: list[dict[str, Any]] | None = None
    attempts: int | None = None
    logs: list[dict[str, str]] | None = None  # what the case's code printed: {stream, text}

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown case status {self.status!r}; expected one of {STATUSES}")

    @property
    def passed(self) -> bool:
        """True when the status is ``passed``."""
        return self.status == "passed"

    def to_dict(self) -> dict[str, Any]:
        """JSON form in Yao's Result key order (optional keys left out when empty)."""
        data: dict[str, Any] = {
            "id": self.id,
            "status": self.status,
            "input": self.input,
            "output": self.output,
        }
        if self.expected is not None:
            data["expected"] = self.expected
        data["duration_ms"] = self.duration_ms
        if self.error is not None:
            data["error"] = self.error
        data["assertions"] = [a.to_dict() for a in self.assertions]
        if self.trace is not None:
            data["trace"] = self.trace.to_dict()
        if self.metadata:
            data["metadata"] = self.metadata
        for key in ("run", "turns", "checkpoints", "attempts", "logs"):
            value = getattr(self, key)
            if value is not None:
                data[key] = value
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CaseResult:
        """Inverse of ``to_dict``; also reads a Yao report Result."""
        trace = data.get("trace")
        return cls(
            id=str(data.get("id") or ""),
            status=str(data.get("status") or "error"),
            input=data.get("input"),
            output=data.get("output"),
            expected=data.get("expected"),
            duration_ms=data.get("duration_ms") or 0,
            error=data.get("error") or None,
            assertions=[AssertionResult.from_dict(a) for a in data.get("assertions") or []],
            trace=Trace.from_dict(trace) if isinstance(trace, dict) else None,
            metadata=dict(data.get("metadata") or {}),
            run=data.get("run"),
            turns=data.get("turns"),
            checkpoints=data.get("checkpoints"),
            attempts=data.get("attempts"),
            logs=data.get("logs") if isinstance(data.get("logs"), list) else None,
        )


def summarize(
    results: Iterable[CaseResult], *, agent_id: str, connector: str, duration_ms: int
) -> dict[str, Any]:
    """Yao's summary object; ``pass_rate`` = passed / (total - skipped) * 100, 2 decimals."""
    counts = Counter(result.status for result in results)
    return summary_from_counts(
        counts, agent_id=agent_id, connector=connector, duration_ms=duration_ms
    )


def summary_from_counts(
    counts: Mapping[str, int], *, agent_id: str, connector: str, duration_ms: int
) -> dict[str, Any]:
    """The summary object from status counts (a run keeps counts, not every result)."""
    total = sum(counts.get(status, 0) for status in STATUSES)
    skipped = counts.get("skipped", 0)
    passed = counts.get("passed", 0)
    ran = total - skipped
    return {
        "total": total,
        "passed": passed,
        "failed": counts.get("failed", 0),
        "skipped": skipped,
        "errors": counts.get("error", 0),
        "timeouts": counts.get("timeout", 0),
        "duration_ms": duration_ms,
        "agent_id": agent_id,
        "connector": connector,
        "pass_rate": round(passed / ran * 100, 2) if ran else 0.0,
    }

"""The typed values of an eval run: the header, one result per case (or run of a case) with
its trace, assertions, turns and checkpoint states, and the summary.

These are the only currency between the runner, the session, the report writers and the
commands that read results back (``agent report``, ``extract``, ``merge``, ``--resume``):
no part of agentcli re-parses the dict form. The JSON form and the lenient reading of it
live in one module, ``codec.py``; ``to_dict``/``from_dict`` here are its entry points.

Values read from a file keep, in ``extra``, the keys agentcli does not know (written back
after the known ones); one whose file record the typed fields cannot reproduce (a field of
the wrong type, Yao's shape) also keeps the record as read in ``source``, and is written
back as read: reading and writing a results file loses nothing. Code that derives a new
value from a read one builds a new value (as ``merge`` does) rather than editing it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from agentcli.assistant.request import ToolCall
from agentcli.choices import Attribution
from agentcli.models.base import Usage

__all__ = [
    "STATUSES",
    "AssertionResult",
    "CaseResult",
    "CheckpointState",
    "RunHeader",
    "RunReport",
    "RunSummary",
    "Status",
    "ToolCall",
    "Trace",
    "Turn",
    "Usage",
    "cell_label",
    "summarize",
    "header_names",
    "summary_from_counts",
    "CostTotals",
]

Status = Literal["passed", "failed", "error", "timeout", "skipped"]
STATUSES: tuple[Status, ...] = get_args(Status)
JsonObject = dict[str, Any]  # an object of arbitrary JSON


@dataclass(slots=True)
class Trace:
    """What happened during a case: final text, tool calls, Next data, usage, optional logs."""

    completion: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    next: Any = None
    usage: Usage = field(default_factory=Usage)
    messages: list[JsonObject] | None = None
    logs: list[JsonObject] | None = None  # trace nodes hooks and tools recorded
    retries: list[JsonObject] | None = None  # model calls retried (rate limits, 5xx, ...)
    sent: list[JsonObject] | None = None  # messages hooks sent with ctx.send
    steps: int | None = None  # model calls the turn made
    # why the turn ended, when not by answering ("done"): max_steps, failed, aborted, ...
    stop_reason: str | None = None
    extra: JsonObject = field(default_factory=dict)

    def to_dict(self) -> JsonObject:
        """JSON form: ``completion, tool_calls, next, usage[, messages][, logs][, retries]
        [, sent][, steps][, stop_reason]``."""
        from .codec import trace_dict

        return trace_dict(self)

    @classmethod
    def from_dict(cls, data: JsonObject) -> Trace:
        """The lenient inverse of ``to_dict``; also reads Yao's ``completion`` object."""
        from .codec import read_trace

        return read_trace(data)


@dataclass(slots=True)
class AssertionResult:
    """The outcome of one assertion; ``verdict`` holds an LLM judge's ``{passed, reason, criteria}``."""

    type: str
    passed: bool
    message: str = ""
    expected: Any = None
    actual: Any = None
    path: str | None = None
    verdict: JsonObject | None = None
    extra: JsonObject = field(default_factory=dict)
    # Who a failed assertion is on when not the agent (a judge that errored or wavered, a
    # script that raised): read by the case's attribution, not written.
    attribution: Attribution | None = field(default=None, compare=False)

    def to_dict(self) -> JsonObject:
        """JSON form: ``type, passed, message[, expected][, actual][, path][, verdict]``."""
        from .codec import assertion_dict

        return assertion_dict(self)


@dataclass(slots=True)
class Turn:
    """One turn of a dynamic case: what the simulated user said, what the agent answered
    (``content``, ``tool_calls`` and ``next`` are its response), the checkpoints reached."""

    turn: int
    input: Any = None
    output: Any = None
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    next: Any = None
    checkpoints_reached: list[str] = field(default_factory=list)
    duration_ms: float = 0
    reasoning: str = ""  # why the simulator said it
    error: str | None = None
    extra: JsonObject = field(default_factory=dict)


@dataclass(slots=True)
class CheckpointState:
    """Where one checkpoint of a dynamic case got to; ``agent_validation`` is the judge's
    ``{passed, reason, criteria, input, response}`` when an ``agent`` assertion decided it."""

    id: str
    reached: bool = False
    reached_at_turn: int | None = None
    required: bool = True
    passed: bool = False
    message: str | None = None
    agent_validation: JsonObject | None = None
    extra: JsonObject = field(default_factory=dict)


@dataclass(slots=True)
class CaseResult:
    """The result of one case (one run of it under ``--runs``)."""

    id: str
    status: Status
    input: Any = None
    output: Any = None
    expected: Any = None
    duration_ms: float | None = 0  # None: a result read back without one
    error: str | None = None
    assertions: list[AssertionResult] = field(default_factory=list)
    trace: Trace | None = None
    metadata: JsonObject = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)  # the case's tags (left out when none)
    run: int | None = None
    turns: list[Turn] | None = None
    checkpoints: list[CheckpointState] | None = None
    attempts: int | None = None
    logs: list[JsonObject] | None = None  # what the case's code printed: {stream, text}
    # What the case's helpers spent, by role ("judge", "simulator"): the agent's own usage
    # is the trace's. None when no helper model was called.
    helper_usage: dict[str, Usage] | None = None
    otel: dict[str, str] | None = None  # --otel: the case span's {trace_id, span_id}
    sandbox: str | None = None  # the case's workspace, when kept (--keep-sandboxes)
    # The matrix column (``-c`` given several times, ``--matrix``) that ran it; None
    # outside a matrix, so single-connector results are written as they always were.
    connector: str | None = None
    # failed, error or timeout: who it is on (agent, simulator, judge, infra, harness)
    attribution: Attribution | None = None
    extra: JsonObject = field(default_factory=dict)
    source: JsonObject | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown case status {self.status!r}; expected one of {STATUSES}")

    @property
    def passed(self) -> bool:
        """True when the status is ``passed``."""
        return self.status == "passed"

    @property
    def cost(self) -> float | None:
        """What the case cost: the agent's calls plus its judges' and simulator's; None
        when no call reported a cost."""
        usages = [self.trace.usage] if self.trace is not None else []
        usages += list((self.helper_usage or {}).values())
        known = [usage.cost for usage in usages if usage.cost is not None]
        return sum(known) if known else None

    @property
    def cell(self) -> tuple[str, str | None]:
        """What identifies the case this result belongs to: its id and (in a matrix) its
        connector; runs of one cell share it."""
        return self.id, self.connector

    def to_dict(self) -> JsonObject:
        """JSON form in Yao's Result key order (optional keys left out when empty)."""
        from .codec import result_dict

        return result_dict(self)

    @classmethod
    def from_dict(cls, data: JsonObject) -> CaseResult:
        """The lenient inverse of ``to_dict`` (what the results reader uses); also reads a
        Yao report Result."""
        from .codec import read_result

        return read_result(data)[0]


@dataclass(slots=True)
class RunHeader:
    """The header of a run: ``environment`` (user, team, locale, chat, metadata) and
    ``metadata`` (``started_at``, ``completed_at``, ``version``, ``input_file``, ``options``,
    ``merged_from``), both as written: their keys vary with the writer (ours, Yao's)."""

    environment: JsonObject = field(default_factory=dict)
    metadata: JsonObject = field(default_factory=dict)
    extra: JsonObject = field(default_factory=dict)
    source: JsonObject | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> JsonObject:
        """JSON form: ``environment, metadata`` and any other keys."""
        from .codec import header_dict

        return header_dict(self)

    @classmethod
    def from_dict(cls, data: JsonObject) -> RunHeader:
        """The lenient inverse of ``to_dict``."""
        from .codec import read_header

        return read_header(data)[0]


@dataclass(slots=True)
class RunSummary:
    """Yao's summary: status counts, wall time, agent and connector, the pass rate; under
    ``--runs`` the stability figures (and ``runs_per_case``) follow in ``extra``."""

    total: int = 0
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    errors: int = 0
    timeouts: int = 0
    duration_ms: float | None = None
    agent_id: str = ""
    connector: str = ""
    pass_rate: float | None = None
    extra: JsonObject = field(default_factory=dict)
    source: JsonObject | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> JsonObject:
        """JSON form: ``total .. pass_rate``, then the further figures."""
        from .codec import summary_dict

        return summary_dict(self)

    @classmethod
    def from_dict(cls, data: JsonObject) -> RunSummary:
        """The lenient inverse of ``to_dict``."""
        from .codec import read_summary

        return read_summary(data)[0]


@dataclass(slots=True)
class RunReport:
    """Everything a whole-document report shows: the header (its ``completed_at`` set), the
    results, the summary and, under ``--runs``, the stability results (JSON objects, as
    ``stats.stability`` or Yao writes them)."""

    header: RunHeader
    results: list[CaseResult]
    summary: RunSummary
    stability: list[JsonObject] = field(default_factory=list)


def cell_label(case_id: str, connector: str | None) -> str:
    """How messages and reports name a case of a matrix: ``id @ connector`` (the id alone
    outside one)."""
    return case_id if connector is None else f"{case_id} @ {connector}"


def summarize(
    results: Iterable[CaseResult], *, agent_id: str, connector: str, duration_ms: int
) -> RunSummary:
    """Yao's summary; ``pass_rate`` = passed / (total - skipped) * 100, 2 decimals; what
    the run cost as ``cost`` when anything did."""
    counts: Counter[str] = Counter()
    costs = CostTotals()
    for result in results:
        counts[result.status] += 1
        costs.add(result)
    summary = summary_from_counts(
        counts, agent_id=agent_id, connector=connector, duration_ms=duration_ms
    )
    costs.write_to(summary)
    return summary


class CostTotals:
    """What results cost, by role: ``agent`` (its trace), ``judge``, ``simulator``; in a
    connector matrix also by connector (the column's whole cost, its helpers' included)."""

    __slots__ = ("by_connector", "by_role")

    def __init__(self) -> None:
        self.by_role: dict[str, float] = {}
        self.by_connector: dict[str, float] = {}

    def add(self, result: CaseResult) -> None:
        """Count one result's costs."""
        by_role = self.by_role
        trace = result.trace
        spent = None
        if trace is not None and trace.usage.cost is not None:
            by_role["agent"] = by_role.get("agent", 0.0) + trace.usage.cost
            spent = trace.usage.cost
        for role, usage in (result.helper_usage or {}).items():
            if usage.cost is not None:
                by_role[role] = by_role.get(role, 0.0) + usage.cost
                spent = (spent or 0.0) + usage.cost
        if result.connector is not None and spent is not None:
            column = result.connector
            self.by_connector[column] = self.by_connector.get(column, 0.0) + spent

    def write_to(self, summary: RunSummary) -> None:
        """``summary.extra["cost"] = {total, agent, judge, simulator[, by_connector]}`` (US$)
        when the run cost anything: free (offline) runs keep Yao's summary as it was."""
        total = sum(self.by_role.values())
        if total > 0:
            cost: JsonObject = {
                "total": round(total, 6),
                **{role: round(amount, 6) for role, amount in self.by_role.items()},
            }
            if self.by_connector:
                cost["by_connector"] = {
                    name: round(amount, 6) for name, amount in self.by_connector.items()
                }
            summary.extra["cost"] = cost


def header_names(header: RunHeader) -> tuple[str, str]:
    """``(agent_id, connector)`` as a run's header names them (``metadata.agent_id`` and
    ``metadata.connector``, written when the run starts, so an unfinished run is named
    too); empty strings for a header without them (files written before, Yao's)."""
    agent, connector = header.metadata.get("agent_id"), header.metadata.get("connector")
    return (
        agent if isinstance(agent, str) else "",
        connector if isinstance(connector, str) else "",
    )


def summary_from_counts(
    counts: Mapping[str, int], *, agent_id: str, connector: str, duration_ms: int
) -> RunSummary:
    """The summary from status counts (a run keeps counts, not every result)."""
    total = sum(counts.get(status, 0) for status in STATUSES)
    skipped = counts.get("skipped", 0)
    passed = counts.get("passed", 0)
    ran = total - skipped
    return RunSummary(
        total=total,
        passed=passed,
        failed=counts.get("failed", 0),
        skipped=skipped,
        errors=counts.get("error", 0),
        timeouts=counts.get("timeout", 0),
        duration_ms=duration_ms,
        agent_id=agent_id,
        connector=connector,
        pass_rate=round(passed / ran * 100, 2) if ran else 0.0,
    )

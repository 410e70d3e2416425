"""Markdown for one case or one stability result, shared by the Markdown report and extract.

User content never reaches the document unescaped: ids go in code spans, prose is
backslash-escaped, inputs/outputs/errors go in fences longer than any backtick run inside.
"""

from __future__ import annotations

import re
from typing import Any

from agentcli.eval.results.model import CaseResult, CheckpointState, ToolCall, Turn

from ._view import (
    STATUS_ICONS,
    StabilityView,
    case_cost_text,
    comparison,
    failure_message,
    format_duration,
    format_k,
    format_percent,
    input_text,
    tool_calls_of,
    value_text,
)

__all__ = [
    "STABILITY_ICONS",
    "case_markdown",
    "code",
    "escape",
    "fence",
    "stability_markdown",
    "table",
]

STABILITY_ICONS = {
    "stable": "✅",
    "mostly_stable": "🟡",
    "unstable": "🟠",
    "highly_unstable": "🔴",
}

_ESCAPED = re.compile(r"([\\`*\[\]<>|])")


def escape(text: Any) -> str:
    """Prose on one line with Markdown/HTML punctuation backslash-escaped."""
    return _ESCAPED.sub(r"\\\1", " ".join(str(text).split()))


def code(text: Any, *, in_table: bool = False) -> str:
    """An inline code span holding ``text`` literally (pipes escaped inside tables)."""
    flat = " ".join(str(text).split()) or " "
    ticks = "`" * (max((len(run) for run in re.findall(r"`+", flat)), default=0) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    span = f"{ticks}{pad}{flat}{pad}{ticks}"
    return span.replace("|", "\\|") if in_table else span


def fence(text: str, lang: str = "", limit: int | None = None) -> str:
    """A fenced block that no backtick run inside ``text`` can close early."""
    if limit is not None and len(text) > limit:
        text = text[:limit] + f"\n… ({len(text) - limit} more characters)"
    ticks = "`" * max(3, max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    return f"{ticks}{lang}\n{text}\n{ticks}"


def table(head: list[str], rows: list[list[str]]) -> str:
    """A GFM table; cells must already be escaped."""
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _yes(value: Any) -> str:
    """A boolean as a check mark."""
    return "✓" if value else "✗"


def _strip_markdown_fence(text: str) -> str:
    """Drop a whole-answer "```markdown" wrapper, as Yao's extract does."""
    if text.startswith("```markdown\n"):
        text = text[len("```markdown\n") :]
        text = text.removesuffix("\n```").removesuffix("```")
    return text


def _output_block(output: Any, *, raw: bool, limit: int | None) -> str:
    """The output, always fenced (a heading or table in an answer cannot break the page's
    own structure); with ``raw`` a text answer is a ``markdown`` fence, Yao's whole-answer
    wrapper taken off first."""
    if output is None:
        return "_(no output)_"
    if isinstance(output, str):
        if raw:
            return fence(_strip_markdown_fence(output), "markdown", limit)
        return fence(output, "text", limit)
    return fence(value_text(output), "json", limit)


def _assertions(result: CaseResult) -> str:
    """The assertion records as a table."""
    rows = []
    for index, item in enumerate(result.assertions, 1):
        message = escape(item.message or (item.verdict or {}).get("reason") or "")
        compared = [
            f"{label}: {code(text, in_table=True)}" for label, text in comparison(item, result)
        ]
        if compared:  # expected vs actual under the message, in the same cell
            message = "<br>".join(part for part in (message, *compared) if part)
        rows.append(
            [
                str(index),
                code(item.type or "?", in_table=True),
                "✅ pass" if item.passed else "❌ fail",
                message,
            ]
        )
    return table(["#", "Type", "Result", "Message"], rows)


def _tool_calls(calls: list[ToolCall], hashes: str, limit: int | None) -> str:
    """Each tool call with its status, arguments and result."""
    parts = []
    for index, call in enumerate(calls, 1):
        name = "/".join(p for p in (call.server, call.tool) if p)
        status = f"error: {escape(call.error)}" if call.error else "ok"
        parts.append(f"{hashes} {index}. {code(name or '?')} — {status}")
        parts.append("Arguments:\n\n" + fence(value_text(call.arguments), "json", limit))
        if call.result is not None:
            parts.append("Result:\n\n" + fence(value_text(call.result), "json", limit))
    return "\n\n".join(parts)


def _checkpoints(points: list[CheckpointState]) -> str:
    """Checkpoint states as a table, judge reasons in the message column."""
    rows = []
    for point in points:
        judge = point.agent_validation or {}
        message = point.message or ""
        if judge.get("reason"):
            message = f"{message} (judge: {judge['reason']})".strip()
        turn = point.reached_at_turn
        rows.append(
            [
                code(point.id or "?", in_table=True),
                "yes" if point.required else "no",
                _yes(point.reached),
                "-" if turn in (None, 0) else str(turn),
                escape(message),
            ]
        )
    return table(["Checkpoint", "Required", "Reached", "Turn", "Message"], rows)


def _transcript(turns: list[Turn], hashes: str, limit: int | None) -> str:
    """The conversation of a dynamic case, turn by turn."""
    parts = []
    for turn in turns:
        reached = turn.checkpoints_reached
        title = f"{hashes} Turn {turn.turn or '?'} ({format_duration(turn.duration_ms)})"
        if reached:
            title += " — ✓ " + ", ".join(code(c) for c in reached)
        parts.append(title)
        parts.append("**User**\n\n" + fence(input_text(turn.input), "text", limit))
        parts.append("**Agent**\n\n" + fence(value_text(turn.output), "text", limit))
        for call in turn.tool_calls:
            state = f"error: {escape(call.error)}" if call.error else "ok"
            args = value_text(call.arguments)
            parts.append(f"- tool {code(call.tool or '?')} {code(args)} → {state}")
        if turn.error:
            parts.append("**Error**\n\n" + fence(turn.error, "text"))
    return "\n\n".join(parts)


def _usage_line(result: CaseResult) -> str | None:
    """Token and cost figures, when the trace has any."""
    if result.trace is None:
        return None
    usage = result.trace.usage
    cost = case_cost_text(result)
    if not (usage.input_tokens or usage.output_tokens or usage.total_tokens or cost):
        return None
    line = (
        f"**Tokens**: {usage.input_tokens} in / {usage.output_tokens} out"
        f" / {usage.total_tokens} total"
    )
    if cost is not None:
        line += f" · **Cost**: {cost}"
    return line


def case_markdown(
    result: CaseResult, level: int = 1, *, raw_output: bool = False, limit: int | None = None
) -> str:
    """A case as Markdown: status, error, input, output, assertions, tools, checkpoints, turns."""
    head, sub, subsub = "#" * level, "#" * (level + 1), "#" * (level + 2)
    status = result.status
    title = f"{head} {STATUS_ICONS[status]} {code(result.id)}"
    if result.run is not None:
        title += f" — run {result.run}"
    if result.connector is not None:
        title += f" @ {code(result.connector)}"
    facts = [
        f"**Status**: {status.upper()}",
        f"**Duration**: {format_duration(result.duration_ms)}",
    ]
    if result.attempts not in (None, 1):
        facts.append(f"**Attempts**: {result.attempts}")
    if result.tags:
        facts.append(f"**Tags**: {', '.join(code(tag) for tag in result.tags)}")
    usage = _usage_line(result)
    parts = [title, " · ".join(facts) + (f"\n\n{usage}" if usage else "")]
    if result.error:
        parts += [f"{sub} Error", fence(result.error, "text")]
    parts += [f"{sub} Input", fence(input_text(result.input), "text", limit)]
    parts += [f"{sub} Output", _output_block(result.output, raw=raw_output, limit=limit)]
    if result.expected is not None:
        parts += [f"{sub} Expected", fence(value_text(result.expected), "json", limit)]
    if result.assertions:
        parts += [f"{sub} Assertions", _assertions(result)]
    calls = tool_calls_of(result)
    if calls:
        parts += [f"{sub} Tool Calls", _tool_calls(calls, subsub, limit)]
    if result.checkpoints:
        parts += [f"{sub} Checkpoints", _checkpoints(result.checkpoints)]
    if result.turns:
        parts += [f"{sub} Transcript", _transcript(result.turns, subsub, limit)]
    return "\n\n".join(parts) + "\n"


def stability_rows(view: StabilityView) -> list[list[str]]:
    """The figures of one stability result as ``[label, value]`` rows."""
    ci = "-"
    if view.ci_low is not None and view.ci_high is not None:
        ci = f"{format_percent(view.ci_low)} – {format_percent(view.ci_high)}"
    rows = [
        ["Stability", f"{STABILITY_ICONS.get(view.label, '')} {escape(view.label)}".strip()],
        ["Runs", str(view.runs)],
        ["Passed", str(view.passed)],
        ["Pass rate", format_percent(view.rate)],
        ["Confidence interval", ci],
    ]
    if view.pass_hat_k is not None:
        rows.append([view.pass_hat_k_label, escape(format_k(view.pass_hat_k))])
    if view.faults:
        rows.append(["Faults", escape(view.faults)])
    if view.pass_at_k is not None:
        rows.append(["pass@k", escape(format_k(view.pass_at_k))])
    for key in ("min", "avg", "p50", "p95", "max", "std"):
        if key in view.durations:
            rows.append([f"Duration {key}", format_duration(view.durations[key])])
    return rows


def stability_markdown(
    view: StabilityView, runs: list[CaseResult], level: int = 1, *, limit: int | None = None
) -> str:
    """A stability case: figures, a runs table, then every run's own details."""
    head, sub = "#" * level, "#" * (level + 1)
    icon = STABILITY_ICONS.get(view.label, "📊")
    parts = [
        f"{head} {icon} {code(view.id)} — stability",
        table(["Figure", "Value"], stability_rows(view)),
    ]
    details = runs or [CaseResult.from_dict(detail) for detail in view.run_details]
    if details:
        rows = [
            [
                str(index if run.run is None else run.run),
                f"{STATUS_ICONS[run.status]} {run.status}",
                format_duration(run.duration_ms),
                escape(failure_message(run)),
            ]
            for index, run in enumerate(details, 1)
        ]
        parts += [f"{sub} Runs", table(["Run", "Status", "Duration", "Error"], rows)]
    parts += [case_markdown(run, level + 1, limit=limit).rstrip("\n") for run in runs]
    return "\n\n".join(parts) + "\n"

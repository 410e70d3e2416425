"""Markdown for one case or one stability result, shared by the Markdown report and extract.

User content never reaches the document unescaped: ids go in code spans, prose is
backslash-escaped, inputs/outputs/errors go in fences longer than any backtick run inside.
"""

from __future__ import annotations

import re
from typing import Any

from ._view import (
    STATUS_ICONS,
    StabilityView,
    assertions_of,
    checkpoints_of,
    failure_message,
    format_duration,
    format_k,
    format_percent,
    input_text,
    reached_of,
    status_of,
    tool_calls_of,
    turns_of,
    usage_of,
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
    """The output: raw Markdown for text answers when ``raw``, else a fence."""
    if output is None:
        return "_(no output)_"
    if isinstance(output, str):
        return _strip_markdown_fence(output) if raw else fence(output, "text", limit)
    return fence(value_text(output), "json", limit)


def _assertions(result: dict[str, Any]) -> str:
    """The assertion records as a table."""
    rows = []
    for index, item in enumerate(assertions_of(result), 1):
        verdict = item.get("verdict") if isinstance(item.get("verdict"), dict) else {}
        message = item.get("message") or verdict.get("reason") or ""
        rows.append(
            [
                str(index),
                code(item.get("type", "?"), in_table=True),
                "✅ pass" if item.get("passed") else "❌ fail",
                escape(message),
            ]
        )
    return table(["#", "Type", "Result", "Message"], rows)


def _tool_calls(calls: list[dict[str, Any]], hashes: str, limit: int | None) -> str:
    """Each tool call with its status, arguments and result."""
    parts = []
    for index, call in enumerate(calls, 1):
        name = "/".join(str(p) for p in (call.get("server"), call.get("tool")) if p)
        status = f"error: {escape(call['error'])}" if call.get("error") else "ok"
        parts.append(f"{hashes} {index}. {code(name or '?')} — {status}")
        parts.append("Arguments:\n\n" + fence(value_text(call.get("arguments")), "json", limit))
        if call.get("result") is not None:
            parts.append("Result:\n\n" + fence(value_text(call.get("result")), "json", limit))
    return "\n\n".join(parts)


def _checkpoints(points: list[dict[str, Any]]) -> str:
    """Checkpoint states as a table, judge reasons in the message column."""
    rows = []
    for point in points:
        judge = point.get("agent_validation")
        message = str(point.get("message") or "")
        if isinstance(judge, dict) and judge.get("reason"):
            message = f"{message} (judge: {judge['reason']})".strip()
        turn = point.get("reached_at_turn")
        rows.append(
            [
                code(point.get("id", "?"), in_table=True),
                "yes" if point.get("required", True) else "no",
                _yes(point.get("reached")),
                "-" if turn in (None, 0) else str(turn),
                escape(message),
            ]
        )
    return table(["Checkpoint", "Required", "Reached", "Turn", "Message"], rows)


def _transcript(turns: list[dict[str, Any]], hashes: str, limit: int | None) -> str:
    """The conversation of a dynamic case, turn by turn."""
    parts = []
    for turn in turns:
        reached = reached_of(turn)
        title = (
            f"{hashes} Turn {turn.get('turn', '?')} ({format_duration(turn.get('duration_ms'))})"
        )
        if reached:
            title += " — ✓ " + ", ".join(code(c) for c in reached)
        parts.append(title)
        parts.append("**User**\n\n" + fence(input_text(turn.get("input")), "text", limit))
        parts.append("**Agent**\n\n" + fence(value_text(turn.get("output")), "text", limit))
        response = turn.get("response") if isinstance(turn.get("response"), dict) else {}
        for call in response.get("tool_calls") or []:
            if isinstance(call, dict):
                state = f"error: {escape(call['error'])}" if call.get("error") else "ok"
                args = value_text(call.get("arguments"))
                parts.append(f"- tool {code(call.get('tool', '?'))} {code(args)} → {state}")
        if turn.get("error"):
            parts.append("**Error**\n\n" + fence(str(turn["error"]), "text"))
    return "\n\n".join(parts)


def _usage_line(result: dict[str, Any]) -> str | None:
    """Token and cost figures, when the trace has any."""
    usage = usage_of(result)
    if not any(usage.get(k) for k in ("input_tokens", "output_tokens", "total_tokens", "cost")):
        return None
    line = (
        f"**Tokens**: {usage.get('input_tokens', 0)} in / {usage.get('output_tokens', 0)} out"
        f" / {usage.get('total_tokens', 0)} total"
    )
    cost = usage.get("cost")
    if isinstance(cost, int | float) and not isinstance(cost, bool):
        line += " · **Cost**: $" + f"{cost:.6f}".rstrip("0").rstrip(".")
    return line


def case_markdown(
    result: dict[str, Any], level: int = 1, *, raw_output: bool = False, limit: int | None = None
) -> str:
    """A case as Markdown: status, error, input, output, assertions, tools, checkpoints, turns."""
    head, sub, subsub = "#" * level, "#" * (level + 1), "#" * (level + 2)
    status = status_of(result)
    title = f"{head} {STATUS_ICONS[status]} {code(result.get('id', ''))}"
    if result.get("run") is not None:
        title += f" — run {result['run']}"
    facts = [
        f"**Status**: {status.upper()}",
        f"**Duration**: {format_duration(result.get('duration_ms'))}",
    ]
    if result.get("attempts") not in (None, 1):
        facts.append(f"**Attempts**: {result['attempts']}")
    usage = _usage_line(result)
    parts = [title, " · ".join(facts) + (f"\n\n{usage}" if usage else "")]
    if result.get("error"):
        parts += [f"{sub} Error", fence(str(result["error"]), "text")]
    parts += [f"{sub} Input", fence(input_text(result.get("input")), "text", limit)]
    parts += [f"{sub} Output", _output_block(result.get("output"), raw=raw_output, limit=limit)]
    if result.get("expected") is not None:
        parts += [f"{sub} Expected", fence(value_text(result["expected"]), "json", limit)]
    if assertions_of(result):
        parts += [f"{sub} Assertions", _assertions(result)]
    calls = tool_calls_of(result)
    if calls:
        parts += [f"{sub} Tool Calls", _tool_calls(calls, subsub, limit)]
    points = checkpoints_of(result)
    if points:
        parts += [f"{sub} Checkpoints", _checkpoints(points)]
    turns = turns_of(result)
    if turns:
        parts += [f"{sub} Transcript", _transcript(turns, subsub, limit)]
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
        rows.append(["pass^k", escape(format_k(view.pass_hat_k))])
    if view.pass_at_k is not None:
        rows.append(["pass@k", escape(format_k(view.pass_at_k))])
    for key in ("min", "avg", "p50", "p95", "max", "std"):
        if key in view.durations:
            rows.append([f"Duration {key}", format_duration(view.durations[key])])
    return rows


def stability_markdown(
    view: StabilityView, runs: list[dict[str, Any]], level: int = 1, *, limit: int | None = None
) -> str:
    """A stability case: figures, a runs table, then every run's own details."""
    head, sub = "#" * level, "#" * (level + 1)
    icon = STABILITY_ICONS.get(view.label, "📊")
    parts = [
        f"{head} {icon} {code(view.id)} — stability",
        table(["Figure", "Value"], stability_rows(view)),
    ]
    details = runs or view.run_details
    if details:
        rows = [
            [
                str(run.get("run", index)),
                f"{STATUS_ICONS[status_of(run)]} {status_of(run)}",
                format_duration(run.get("duration_ms")),
                escape(failure_message(run)),
            ]
            for index, run in enumerate(details, 1)
        ]
        parts += [f"{sub} Runs", table(["Run", "Status", "Duration", "Error"], rows)]
    parts += [case_markdown(run, level + 1, limit=limit).rstrip("\n") for run in runs]
    return "\n\n".join(parts) + "\n"

"""The console blocks of one case: its result line, a dynamic case's conversation, its
stability figures under ``--runs``, its ``--dry-run`` line."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text

from agentcli.cli.views.text import STABILITY_STYLES, STATUS_STYLES, Block, detail, preview
from agentcli.eval.cases.model import input_text
from agentcli.eval.checks.matching import output_text
from agentcli.eval.reports._view import comparison, format_duration, format_k
from agentcli.eval.results.model import cell_label
from agentcli.words import counted

if TYPE_CHECKING:
    from agentcli.eval.cases.model import Case
    from agentcli.eval.results.model import AssertionResult, CaseResult, Trace
    from agentcli.eval.stats.stability import CaseStability

__all__ = ["CaseBlock", "DryRunLine", "DynamicBlock", "ResultLine", "StabilityLine"]

_FAILING = ("failed", "error", "timeout")


@dataclass(slots=True)
class CaseBlock(Block):
    """A block about one run of a case (``run`` under ``--runs``); ``verbose`` is ``-v``."""

    case: Case
    result: CaseResult
    run: int | None = None
    verbose: bool = False


@dataclass(slots=True)
class ResultLine(CaseBlock):
    """``► [id] input STATUS (duration)``, ``└─ error`` under a failure, and with
    ``verbose`` the assertions, model retries, tool calls, printed lines and output."""

    def lines(self) -> list[Text]:
        """The line and its details."""
        result = self.result
        word, style = STATUS_STYLES[result.status]
        shown_input = input_text(self.case)
        lines = [
            Text.assemble(
                ("► ", "white"),
                (f"[{cell_label(result.id, result.connector)}] ", "white"),
                (f"Run {self.run}: " if self.run else "", "white"),
                (preview(shown_input), "bright_black"),
                " " if shown_input.strip() else "",  # script tests have no input
                (word, style),
                (f" ({format_duration(result.duration_ms)})", "bright_black"),
            )
        ]
        # A failed case's error is its first failed assertion's message: shown with the
        # assertion (and what it expected and got) rather than twice.
        checks = [] if self.verbose or result.status != "failed" else failed_assertions(result)
        said = {item.message for item in result.assertions if not item.passed}
        if result.status in _FAILING and result.error and not (checks and result.error in said):
            lines.append(Text(f"  └─ {result.error}", style="red"))
        lines.extend(checks)
        if self.verbose:
            lines.extend(self._details())
        return lines

    def _details(self) -> list[Text]:
        """What ``-v`` adds under the line."""
        result = self.result
        lines = [detail(f"tags: {', '.join(result.tags)}")] if result.tags else []
        for assertion in result.assertions:
            mark = "✓" if assertion.passed else "✗"
            note = f" {assertion.message}" if assertion.message else ""
            lines.append(detail(f"{mark} {assertion.type}{note}"))
            lines.extend(detail(f"    {row}") for row in _compared(assertion, result))
        if result.trace is not None:
            lines.extend(_trace_details(result.trace))
        lines.extend(printed(result))
        if result.output is not None:
            output = preview(output_text(result.output), 100)
            lines.append(Text(f"  └─ Output: {output}", style="bright_black"))
        return lines


_SHOWN_FAILURES = 3  # failed assertions listed under a result line (the rest counted)


def failed_assertions(result: CaseResult) -> list[Text]:
    """``└─ ✗ type: message`` for each failed assertion, each with what it expected and
    what it got (even under a custom message), the first few only."""
    failed = [item for item in result.assertions if not item.passed]
    lines = []
    for item in failed[:_SHOWN_FAILURES]:
        note = f": {item.message}" if item.message else ""  # whole: it may be a table
        lines.append(Text(f"  └─ ✗ {item.type}{note}", style="red"))
        lines.extend(Text(f"       {row}", style="bright_black") for row in _compared(item, result))
    if len(failed) > _SHOWN_FAILURES:
        more = len(failed) - _SHOWN_FAILURES
        lines.append(Text(f"  └─ … and {counted(more, 'more failed assertion')}", style="red"))
    return lines


def _compared(item: AssertionResult, result: CaseResult) -> list[str]:
    """``expected: … · actual: …`` (and ``check: …``) of a failed assertion, short."""
    rows = comparison(item, result)
    pair = [f"{label}: {preview(text, 60)}" for label, text in rows if label != "check"]
    lines = [" · ".join(pair)] if pair else []
    lines.extend(f"{label}: {preview(text, 100)}" for label, text in rows if label == "check")
    return lines


def _trace_details(trace: Trace) -> list[Text]:
    """The model calls retried and the tools called."""
    lines = [
        Text(
            f"  │ retried a model call after {retry['kind']} "
            f"(attempt {retry['attempt']}, waited {retry['delay_s']:g}s)",
            style="yellow",
        )
        for retry in trace.retries or []
    ]
    for call in trace.tool_calls:
        outcome = f"ERR: {preview(call.error, 60)}" if call.error else "OK"
        arguments = preview(output_text(call.arguments), 80)
        where = f"{call.server}/{call.tool}" if call.server else call.tool
        mark = " [stub]" if call.stubbed else f" [fault: {call.fault}]" if call.fault else ""
        lines.append(detail(f"tool {where}{mark} → {outcome} (args: {arguments})"))
    return lines


@dataclass(slots=True)
class DynamicBlock(CaseBlock):
    """A dynamic case as one block, printed when it ends so parallel cases never
    interleave: ``► [id] (dynamic, N checkpoints)``, with ``verbose`` the conversation and
    ``✓ checkpoint: <id>`` marks, then ``└─ PASSED (T turns, R/N checkpoints, 8.5s)``."""

    def lines(self) -> list[Text]:
        """The heading, the conversation (verbose), the verdict."""
        result = self.result
        word, style = STATUS_STYLES[result.status]
        turns = result.turns or []
        total = len(self.case.checkpoints)
        # Yao prints the total here whatever happened; reached/total says how far it got.
        reached = sum(1 for point in result.checkpoints or [] if point.reached)
        lines = [
            Text.assemble(
                (f"► [{cell_label(result.id, result.connector)}] ", "white"),
                (f"Run {self.run}: " if self.run else "", "white"),
                (f"(dynamic, {counted(total, 'checkpoint')})", "cyan"),
            )
        ]
        if self.verbose:
            lines.extend(self._conversation())
        lines.append(
            Text.assemble(
                "  └─ ",
                (word, style),
                (
                    f" ({len(turns)} turn{'' if len(turns) == 1 else 's'}, "
                    f"{reached}/{total} checkpoints, {format_duration(result.duration_ms)})",
                    "bright_black",
                ),
            )
        )
        if result.status in _FAILING and result.error:
            lines.append(Text(f"  └─ {result.error}", style="red"))
        return lines

    def _conversation(self) -> list[Text]:
        """Each turn (user, tools, agent, checkpoints reached), the required checkpoints
        not reached, and what the case's code printed."""
        case, result = self.case, self.result
        lines = [detail(f"Dynamic test: {case.id} (max {counted(case.max_turns, 'turn')})")]
        for turn in result.turns or []:
            number = turn.turn
            lines.append(detail(f"Turn {number}: User: {preview(str(turn.input), 80)}"))
            for call in turn.tool_calls:
                outcome = f"ERR: {preview(call.error, 60)}" if call.error else "OK"
                lines.append(detail(f"Turn {number}: Tool: {call.tool} → {outcome}"))
            agent = preview(output_text(turn.output), 80)
            lines.append(detail(f"Turn {number}: Agent: {agent}"))
            lines.extend(detail(f"  ✓ checkpoint: {point}") for point in turn.checkpoints_reached)
        for point in result.checkpoints or []:
            if point.required and not point.reached:
                why = f": {point.message}" if point.message else ""
                lines.append(detail(f"  ✗ checkpoint: {point.id} not reached{why}"))
        lines.extend(printed(result))
        return lines


@dataclass(slots=True)
class StabilityLine(Block):
    """``[id] 80% (4/5) Mostly Stable avg 1.2s p95 2.0s`` once a case's runs are done; under
    faults a second line gives its pass^k, the robustness figure."""

    stats: CaseStability

    def lines(self) -> list[Text]:
        """The one line."""
        stats = self.stats
        label, style = STABILITY_STYLES.get(stats.stability, (stats.stability, "white"))
        rate = "-" if stats.pass_rate is None else f"{stats.pass_rate:g}%"
        duration = stats.duration or {}
        timing = ""
        if duration.get("avg") is not None:
            timing = (
                f" avg {format_duration(duration['avg'])} p95 {format_duration(duration['p95'])}"
            )
        lines = [
            Text.assemble(
                (f"[{cell_label(stats.id, stats.connector)}] ", "white"),
                (f"{rate} ({stats.passed}/{stats.runs}) {label}", style),
                (timing, "bright_black"),
            )
        ]
        if stats.faults is not None and stats.pass_hat_k:
            lines.append(
                Text(f"  pass^k under faults: {format_k(stats.pass_hat_k)}", style="bright_black")
            )
        return lines


@dataclass(slots=True)
class DryRunLine(Block):
    """``○ [id] input`` for ``--dry-run``."""

    case: Case

    def lines(self) -> list[Text]:
        """The one line."""
        return [Text(f"  ○ [{self.case.id}] {preview(input_text(self.case), 80)}")]


def printed(result: CaseResult) -> list[Text]:
    """``│ stdout: ...`` lines: what the case's hooks, tools and scripts printed."""
    return [
        Text(f"  │ {entry['stream']}: {entry['text']}", style="bright_black")
        for entry in result.logs or []
    ]

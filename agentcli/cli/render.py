"""Rendering turns in a terminal: the streamed answer on ``out``, tool activity and hook
messages on ``err`` (so ``agent run ... > answer.txt`` keeps only the answer), or every event
as one JSON line with ``--json``. The chat passes the same stream for both."""

from __future__ import annotations

import json
import sys
import threading
from typing import TYPE_CHECKING, Any, TextIO

from agentcli.jsonsafe import finite_json
from agentcli.models.base import TextDelta
from agentcli.runtime.events import (
    ErrorEvent,
    Event,
    MessageEnd,
    MessageUpdate,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
)
from agentcli.runtime.tools import result_text
from agentcli.secrets import StreamRedactor, redact_data

if TYPE_CHECKING:
    from agentcli.assistant.context import OutputMessage
    from agentcli.assistant.request import Reply
    from agentcli.runtime.agent import TurnResult

__all__ = ["TurnPrinter", "tool_label"]


def _short(value: Any, limit: int = 200) -> str:
    text = result_text(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def progress_text(data: Any) -> str:
    """A tool's progress report for a person: ``3/10 copying`` (MCP progress), else JSON."""
    if isinstance(data, dict) and "progress" in data:
        done, total = _number(data.get("progress")), data.get("total")
        amount = f"{done}/{_number(total)}" if total is not None else done
        return f"{amount} {data.get('message') or ''}".rstrip()
    return _short(data)


def _number(value: Any) -> str:
    return f"{value:g}" if isinstance(value, int | float) else str(value)


def tool_label(name: str) -> str:
    """``expense__submit_expense`` -> ``submit_expense (expense)``; other names as they are."""
    server, separator, tool = name.partition("__")
    return f"{tool} ({server})" if separator and server and tool else name


class _Stream:
    """A text stream that knows whether its cursor is at the start of a line."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.at_line_start = True

    def write(self, text: str) -> None:
        if text:
            self.stream.write(text)
            self.stream.flush()
            self.at_line_start = text.endswith("\n")

    def line(self, text: str) -> None:
        """Write ``text`` on a line of its own."""
        self.newline()
        self.write(text + "\n")

    def newline(self) -> None:
        if not self.at_line_start:
            self.write("\n")


class TurnPrinter:
    """Event and output listener that prints a turn as it happens (or as NDJSON)."""

    def __init__(
        self,
        *,
        json_events: bool = False,
        verbose: bool = False,
        out: TextIO | None = None,
        err: TextIO | None = None,
    ) -> None:
        self.json_events = json_events
        self.verbose = verbose
        self.out = _Stream(out or sys.stdout)
        self.err = self.out if err is not None and err is out else _Stream(err or sys.stderr)
        self._lock = threading.Lock()  # hooks send from their own threads
        self._shown: dict[str, str] = {}
        # The answer streams through a redactor: a key the model echoes, split across
        # deltas, is caught before any part of it is shown.
        self._answer = StreamRedactor()

    def _json(self, data: dict[str, Any]) -> None:
        with self._lock:
            self.out.write(finite_json(redact_data(data), spaced=True) + "\n")

    def _note(self, text: str) -> None:
        """A line on ``err``, after ending the answer's line when both share a stream."""
        if self.err is not self.out:
            self.out.newline()
        self.err.line(text)

    def on_event(self, event: Event) -> None:
        """Print what an agent event means for a person (or as JSON)."""
        if self.json_events:
            self._json_event(event)
            return
        with self._lock:
            if isinstance(event, MessageUpdate) and isinstance(event.delta, TextDelta):
                self.out.write(self._answer.feed(event.delta.text))
            elif isinstance(event, MessageEnd):
                self.out.write(self._answer.flush())
            elif isinstance(event, ToolExecutionStart) and event.call is not None:
                arguments = f" {_short(event.call.arguments)}" if self.verbose else ""
                self._note(f"⚙ {tool_label(event.call.name)}{arguments}")
            elif isinstance(event, ToolExecutionUpdate) and event.call and self.verbose:
                self._note(f"… {tool_label(event.call.name)} {progress_text(event.data)}")
            elif isinstance(event, ToolExecutionEnd) and event.call and event.result:
                failed = event.result.is_error
                detail = f" → {_short(event.result.content)}" if self.verbose or failed else ""
                mark = "✗" if failed else "✓"
                label = tool_label(event.call.name)
                self._note(f"{mark} {label} ({event.duration_ms:.0f} ms){detail}")
            elif isinstance(event, ErrorEvent):
                self._note(f"error: {event.error}")

    def _json_event(self, event: Event) -> None:
        """One event as a JSON line; answer text goes out as the redactor releases it (a
        delta with nothing released yet waits). A ``message_update``'s message goes without
        its text: repeating the text so far on every delta made a large answer quadratic
        (the deltas carry it, ``message_end`` the whole)."""
        data = event.to_dict()
        if data["type"] == "message_update":
            message = data.get("message")
            if isinstance(message, dict):
                data["message"] = {
                    k: v for k, v in message.items() if k not in ("content", "thinking")
                }
        if isinstance(event, MessageUpdate) and isinstance(event.delta, TextDelta):
            released = self._answer.feed(event.delta.text)
            if not released:
                return
            data["delta"] = {**data["delta"], "text": released}
        elif data["type"] == "message_end":
            rest = self._answer.flush()
            if rest:
                self._json(
                    {
                        "type": "message_update",
                        "turn_id": data.get("turn_id"),
                        "delta": {"text": rest, "type": "text_delta"},
                    }
                )
        self._json(data)

    def on_output(self, message: OutputMessage) -> None:
        """Print a message a hook sent (``ctx.send``), streaming ones as they grow."""
        if self.json_events:
            self._json({"type": "output", "message": message.to_dict()})
            return
        text = message.text()
        with self._lock:
            shown = self._shown.get(message.id)
            if shown is None or not text.startswith(shown):
                if self.err is not self.out:
                    self.out.newline()
                self.err.newline()
                self.err.write(f"» {text}")
            else:
                self.err.write(text[len(shown) :])
            self._shown[message.id] = text
            if message.done:
                self.err.newline()

    def finish(self, result: TurnResult) -> None:
        """End the output of a bare connector turn (a ``TurnResult``)."""
        if not self.json_events:
            self._end(result.reason, result.steps)

    def finish_reply(self, reply: Reply) -> None:
        """End the output of an assistant turn: the Next hook's data, if any, then notes."""
        if self.json_events:
            self._json({"type": "reply", **reply.to_dict()})
            return
        steps = reply.turn.steps if reply.turn is not None else 0
        with self._lock:
            self.out.newline()
            if reply.next is not None:
                data = reply.next
                text = (
                    data
                    if isinstance(data, str)
                    else json.dumps(data, ensure_ascii=False, indent=2)
                )
                self.out.line(text)
        self._end(reply.status, steps)

    def aborted(self) -> None:
        """Note a turn stopped before it reached the model."""
        self._end("aborted", 0)

    def _end(self, reason: str, steps: int) -> None:
        with self._lock:
            self.out.write(self._answer.flush())
            self.out.newline()
            if reason == "aborted":
                self.err.line("(aborted)")
            elif reason == "max_steps":
                self.err.line(f"(stopped after {steps} steps: max_steps reached)")

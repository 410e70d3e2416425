"""What user code prints (hooks, tools, script tests) is kept apart from agentcli's own
output: while a case runs, ``print()`` and writes to ``sys.stderr`` from its code go into
that case's ``OutputSink`` (and so into its result's ``logs``), never into the ``--json``
stream or between the console's lines.

The routing follows the context: ``sys.stdout``/``sys.stderr`` are replaced by routers that
look up the sink of the current context (a context variable, which tasks and the threads of
``agentcli.threads`` inherit), and write to the original stream when there is none.
"""

from __future__ import annotations

import contextlib
import contextvars
import io
import sys
from collections.abc import Callable, Iterator
from typing import Any, TextIO

from agentcli.secrets import redact_text

__all__ = ["OutputSink", "capturing", "routed_output"]

# Per case: enough for any diagnostic print, bounded so a chatty hook cannot fill memory.
MAX_CAPTURED_CHARS = 256_000
_MAX_LINE = 4_000

_SINK: contextvars.ContextVar[OutputSink | None] = contextvars.ContextVar(
    "agentcli_output_sink", default=None
)

OnLine = Callable[[str, str], None]  # (stream, line)


class OutputSink:
    """The lines one case's code printed, per stream (``stdout``/``stderr``), bounded."""

    def __init__(self, on_line: OnLine | None = None, limit: int = MAX_CAPTURED_CHARS) -> None:
        self.lines: list[dict[str, str]] = []
        self._on_line = on_line
        self._partial: dict[str, str] = {}
        self._left = limit
        self._dropped = 0

    def write(self, stream: str, text: str) -> None:
        """Take ``text`` written to ``stream``; whole lines are kept as they complete."""
        if not text:
            return
        pending = self._partial.get(stream, "") + text
        *whole, rest = pending.split("\n")
        if len(rest) > _MAX_LINE:  # a line that never ends is kept in pieces
            whole.append(rest)
            rest = ""
        self._partial[stream] = rest
        for line in whole:
            self._keep(stream, line.rstrip("\r"))

    def close(self) -> list[dict[str, str]]:
        """Keep what is left of unfinished lines; the lines (with a note of what was dropped)."""
        for stream, rest in list(self._partial.items()):
            if rest:
                self._keep(stream, rest)
        self._partial.clear()
        if self._dropped:
            note = f"... {self._dropped} more characters of output dropped (limit {MAX_CAPTURED_CHARS:,})"
            self.lines.append({"stream": "stderr", "text": note})
            self._dropped = 0
        return self.lines

    def _keep(self, stream: str, line: str) -> None:
        if self._left <= 0:
            self._dropped += len(line) + 1
            return
        if len(line) > self._left:
            self._dropped += len(line) - self._left
            line = line[: self._left]
        self._left -= len(line) + 1
        line = redact_text(line)
        self.lines.append({"stream": stream, "text": line})
        if self._on_line is not None:
            self._on_line(stream, line)


class _Router(io.TextIOBase):
    """A stand-in for ``sys.stdout``/``sys.stderr``: the current sink, else ``fallback``."""

    def __init__(self, stream: str, fallback: TextIO) -> None:
        self._stream = stream
        self.fallback = fallback

    def write(self, text: str) -> int:
        sink = _SINK.get()
        if sink is None:
            return self.fallback.write(text)
        sink.write(self._stream, text)
        return len(text)

    def flush(self) -> None:
        if _SINK.get() is None:
            self.fallback.flush()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return _SINK.get() is None and self.fallback.isatty()

    def fileno(self) -> int:
        return self.fallback.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.fallback, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return getattr(self.fallback, "errors", None)

    def __getattr__(self, name: str) -> Any:  # name, buffer, mode, ...: the real stream's
        return getattr(self.fallback, name)


@contextlib.contextmanager
def routed_output(stdout: TextIO | None = None, stderr: TextIO | None = None) -> Iterator[None]:
    """Route ``sys.stdout``/``sys.stderr`` through the current context's sink while inside;
    outside any sink, writes go to ``stdout``/``stderr`` (default: the streams as they are)."""
    saved = sys.stdout, sys.stderr
    sys.stdout = _Router("stdout", stdout or saved[0])
    sys.stderr = _Router("stderr", stderr or saved[1])
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


@contextlib.contextmanager
def capturing(sink: OutputSink) -> Iterator[OutputSink]:
    """Make ``sink`` the current context's sink while inside."""
    token = _SINK.set(sink)
    try:
        yield sink
    finally:
        _SINK.reset(token)

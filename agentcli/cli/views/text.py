"""What every console block is made of: the ``Block`` renderable, previews of long text,
redaction, and the words and styles of statuses."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

from rich.text import Text

from agentcli.secrets import redact_text

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult

__all__ = [
    "RULE_WIDTH",
    "STABILITY_STYLES",
    "STATUS_STYLES",
    "Block",
    "detail",
    "preview",
    "redacted",
]

RULE_WIDTH = 63
STABILITY_STYLES = {
    "stable": ("Stable", "green"),
    "mostly_stable": ("Mostly Stable", "yellow"),
    "unstable": ("Unstable", "red"),
    "highly_unstable": ("Highly Unstable", "bold red"),
    "skipped": ("Skipped", "yellow"),
}
STATUS_STYLES = {
    "passed": ("PASSED", "bold green"),
    "failed": ("FAILED", "bold red"),
    "error": ("ERROR", "bold red"),
    "timeout": ("TIMEOUT", "red"),
    "skipped": ("SKIPPED", "yellow"),
}

_WORD = re.compile(r"\S+")
# How much of a long text a preview reads: past the shown characters, enough that a secret
# cut by the edge is still recognised and redacted before it is cut.
_PREVIEW_MARGIN = 4096


class Block(ABC):
    """One block of the console (a result line, a summary ...): its lines, styled. Rich
    renders it as those lines, redacted; the console view prints them itself (plain text
    off a terminal is a tenth of the cost)."""

    __slots__ = ()

    @abstractmethod
    def lines(self) -> list[Text]:
        """The block's lines, in order."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for line in self.lines():
            yield redacted(line)


def redacted(line: Text) -> Text:
    """``line`` with every secret replaced (in the line's overall style when one was)."""
    safe = redact_text(line.plain)
    return line if safe == line.plain else Text(safe, style=line.style)


def preview(text: str, limit: int = 50) -> str:
    """Whitespace collapsed, cut to ``limit`` characters with an ellipsis (a long text is
    read only as far as the preview needs)."""
    words: list[str] = []
    length = 0
    for word in _WORD.finditer(text):
        words.append(word.group())
        length += len(word.group()) + 1
        if length > limit + _PREVIEW_MARGIN:
            break
    flat = redact_text(" ".join(words))
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def detail(message: str) -> Text:
    """A grey ``│`` detail line."""
    return Text(f"  │ {message}", style="bright_black")

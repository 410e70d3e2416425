"""The console block of ``agent diff``: the diff's lines (``eval/compare/console``), each
in its tone's colour."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text

from agentcli.cli.views.text import Block

if TYPE_CHECKING:
    from agentcli.eval.compare.console import Line, Tone

__all__ = ["TONE_STYLES", "DiffBlock"]

TONE_STYLES: dict[Tone, str] = {
    "heading": "bold",
    "plain": "",
    "good": "green",
    "bad": "bold red",
    "note": "yellow",
    "dim": "bright_black",
}


@dataclass(slots=True)
class DiffBlock(Block):
    """Lines of a diff, styled by tone."""

    diff_lines: list[Line]

    def lines(self) -> list[Text]:
        """One styled text per line."""
        return [Text(line.text, style=TONE_STYLES[line.tone]) for line in self.diff_lines]

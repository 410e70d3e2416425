"""Rendering a console block the rich way: a fixed-width recording console, plain text."""

from __future__ import annotations

import io

from rich.console import Console

from agentcli.cli.views.text import Block


def rendered(block: Block, width: int = 80) -> str:
    """The text rich prints for ``block`` at ``width`` columns, without colour."""
    console = Console(width=width, record=True, file=io.StringIO(), color_system=None)
    console.print(block)
    return console.export_text()

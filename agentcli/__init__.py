"""agentcli: run and evaluate LLM agents from the command line."""

from __future__ import annotations

TYPE_CHECKING = False  # typing's flag: the CLI's first import loads nothing (a Ctrl-C
if TYPE_CHECKING:  # at start-up then reaches agentcli.cli.main's quiet handler sooner)
    from typing import Any

__version__ = "0.1.0"
__all__ = ["__version__", "process"]


def process(name: str, *args: Any) -> Any:
    """Yao's ``Process(name, ...args)`` for the package that is running: a data model's
    method (``models.agents.<id>.<model>.<Method>``) or a package function
    (``scripts.<file>.<Func>``, ``agents.<id>.<file>.<Func>``). Returns the result in sync
    code, an awaitable of it in async code. See docs/assistants.md, "Process()"."""
    from agentcli.assistant.process import process as run_process

    return run_process(name, *args)

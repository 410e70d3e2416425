"""Turning the project's errors into a one-line message and an exit code (a traceback only
with ``--debug``), for every command."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import typer

from agentcli.errors import AgentCliError, OutputClosed
from agentcli.secrets import redact_text

__all__ = ["debug_enabled", "guarded", "set_debug"]

_debug = {"on": False}


def set_debug(value: bool) -> None:
    """Switch tracebacks on (``--debug``)."""
    _debug["on"] = value


def debug_enabled() -> bool:
    """Whether ``--debug`` was given."""
    return _debug["on"]


def report(error: AgentCliError) -> None:
    """``error: ...`` (and its hint) on stderr, redacted."""
    sys.stderr.write(f"error: {redact_text(str(error))}\n")
    sys.stderr.flush()


P = ParamSpec("P")
R = TypeVar("R")


def guarded(command: Callable[P, R]) -> Callable[P, R]:
    """Wrap a command so an ``AgentCliError`` prints ``error: ...`` on stderr and exits with
    its code."""

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except OutputClosed as error:
            # The reader of stdout is gone: say nothing, and keep the interpreter's own
            # flush at exit from failing on the closed pipe too.
            _silence_stdout()
            raise typer.Exit(error.exit_code) from None
        except AgentCliError as error:
            if _debug["on"]:
                raise
            report(error)
            raise typer.Exit(error.exit_code) from None

    return wrapper


def _silence_stdout() -> None:
    """Point stdout at the null device (its pipe is closed)."""
    import os

    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError):  # no real stdout (a test runner's): nothing to flush
        return

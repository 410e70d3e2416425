"""The ``agent`` command: a Typer app whose commands live one per module.

Only Typer is imported at start-up; each command imports the layers it needs when it runs,
so ``agent --help`` stays fast (no litellm, openai, mcp or jsonschema).
"""

from __future__ import annotations

import signal

TYPE_CHECKING = False  # typing's flag without importing typing ahead of the handler below
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def _quiet_ctrl_c() -> Any:
    """While the CLI loads (typer, the command modules), a Ctrl-C ends it as the default
    action does: by SIGINT, silently (a shell's 130), not with a KeyboardInterrupt traceback
    out of whatever import it hit. The handler before, for ``_restore_ctrl_c``."""
    try:
        return signal.signal(signal.SIGINT, signal.SIG_DFL)
    except ValueError:  # imported off the main thread: its handler is not ours to change
        return None


def _restore_ctrl_c(previous: Callable[..., Any] | int | None) -> None:
    """Python's handler back (KeyboardInterrupt), once main() handles one."""
    if previous is not None:
        signal.signal(signal.SIGINT, previous)


_previous_handler = _quiet_ctrl_c()

import os  # noqa: E402  (after the handler above: a Ctrl-C while importing is quiet too)
import sys  # noqa: E402

import typer  # noqa: E402

from agentcli import __version__  # noqa: E402
from agentcli.cli.errors import debug_enabled, set_debug  # noqa: E402

app = typer.Typer(
    name="agent",
    help="Run and evaluate LLM agents: assistant packages, an agent runtime, and an eval runner.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"agent {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for errors."),
) -> None:
    """Run and evaluate LLM agents.

    \b
    Examples:
      agent run -c echo "hello"                 talk to a connector directly
      agent run expense 'submit $25 for lunch'  one turn with an assistant package
      agent eval expense @assistants/expense/tests/inputs.jsonl    run eval cases
    """
    set_debug(debug)


COMMANDS = (
    "run_cmd",
    "eval_cmd",
    "extract_cmd",
    "report_cmd",
    "merge_cmd",
    "diff_cmd",
    "list_cmd",
    "cache_cmd",
    "migrate_cmd",
    "init_cmd",
    "config_cmd",
    "view_cmd",
)


def _register() -> None:
    import importlib

    for name in COMMANDS:
        importlib.import_module(f"agentcli.cli.{name}").register(app)


def _tolerant_output() -> None:
    """Let stdout and stderr write any string: a lone surrogate (valid JSON ``"\\ud800"`` in
    a case file) becomes ``\\ud800`` instead of a ``UnicodeEncodeError`` mid-run; in a
    ``--json`` line that is exactly the JSON escape, so the stream stays valid JSON."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def _skip_final_collections() -> None:
    """The command is done and the process ends: freeze what is left, so the interpreter's
    last garbage collections do not walk it all again (0.1 s after a run of 500 cases,
    bench/latency.py). Objects are still freed as the interpreter ends; files were closed
    by the command that wrote them."""
    import gc

    gc.freeze()


def _collector_off_for_eval() -> None:
    """``agent eval`` starts with the garbage collector off: what it loads lives for the
    whole run, and its run turns the collector back on (``agentcli.collector``)."""
    command = next((arg for arg in sys.argv[1:] if not arg.startswith("-")), None)
    if command == "eval":
        from agentcli import collector

        collector.pause()


def main() -> None:
    """Entry point of the ``agent`` console script."""
    _collector_off_for_eval()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    previous = _quiet_ctrl_c()  # the command modules load quietly too
    _tolerant_output()
    _register()
    _restore_ctrl_c(previous)
    try:
        app()
    except SystemExit as leaving:
        if leaving.code == 130:  # a command stopped by a signal, after writing what it had
            from agentcli.interrupts import leave_interrupted

            leave_interrupted()
        _skip_final_collections()
        raise
    except KeyboardInterrupt:
        from agentcli.interrupts import leave_interrupted

        sys.stderr.write("interrupted\n")
        leave_interrupted()
    except Exception as error:
        from agentcli.errors import AgentCliError

        if debug_enabled() or "--debug" in sys.argv:
            raise
        from agentcli.secrets import redact_text

        if isinstance(error, AgentCliError):  # raised outside a command (guarded covers those)
            from agentcli.cli.errors import report

            report(error)
            sys.exit(error.exit_code)
        sys.stderr.write(
            f"error: internal error: {type(error).__name__}: {redact_text(str(error))}\n"
            "  hint: re-run with --debug for the traceback, and report it\n"
        )
        sys.exit(1)


_restore_ctrl_c(_previous_handler)  # imported, not run: a caller's Ctrl-C is its own

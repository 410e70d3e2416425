"""``agent run``: talk to an assistant or a connector."""

from __future__ import annotations

import sys

import typer


def register(app: typer.Typer) -> None:
    """Add the command to ``app``."""
    app.command(
        "run",
        help=(
            "Send a message to an assistant (or straight to a connector with -c) and stream "
            "the answer.\n\n"
            "Examples:\n\n"
            '  agent run -c echo "hello"\n\n'
            '  agent run -c openai/gpt-4o-mini "What is 2+2?"\n\n'
            '  echo "hello" | agent run -c echo'
        ),
    )(run)


def run(
    target: str | None = typer.Argument(
        None, help="Assistant id or path; with -c and no assistant, the message itself."
    ),
    message: str | None = typer.Argument(None, help="The message (read from stdin when piped)."),
    connector: str | None = typer.Option(None, "-c", "--connector", help="Connector or model."),
    json_events: bool = typer.Option(False, "--json", help="Print events as NDJSON."),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="Show tool arguments and results."),
) -> None:
    """Send one message and stream the answer."""
    import asyncio

    from agentcli.cli.render import TurnPrinter
    from agentcli.errors import ConfigError
    from agentcli.models.connectors import resolve_connector
    from agentcli.runtime.agent import Agent

    if message is None and target is not None and connector is not None:
        target, message = None, target
    if target is not None:
        raise ConfigError(
            f"cannot run assistant {target!r}: assistant packages are not supported by "
            "this build of `agent run` yet",
            hint='talk to a connector directly: agent run -c echo "hello"',
        )
    if message is None and not sys.stdin.isatty():
        message = sys.stdin.read().strip()
    if not message:
        raise ConfigError("no message given", hint='agent run -c echo "hello"')
    if connector is None:
        raise ConfigError("no connector given", hint='agent run -c echo "hello"')
    agent = Agent(resolve_connector(connector))
    printer = TurnPrinter(json_events=json_events, verbose=verbose)
    agent.subscribe(printer.on_event)
    result = asyncio.run(agent.prompt(message))
    printer.finish(result)
    if result.reason in ("failed", "aborted"):
        raise typer.Exit(1)

"""``agent run``: talk to an assistant (one message, or an interactive chat) or straight to a
connector with ``-c``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from agentcli.cli.errors import guarded

if TYPE_CHECKING:  # imported when a command runs: `agent --help` stays light
    from agentcli.assistant.request import Reply
    from agentcli.assistant.session import Assistant, AssistantRegistry, RequestOptions
    from agentcli.cli.sessions import Session
    from agentcli.errors import ConfigError
    from agentcli.runtime.turns import TurnResult

HELP = """Send a message to an assistant and stream the answer, or chat with it.

With a message (or piped input) one turn runs: the answer goes to stdout, tool activity
and messages from hooks to stderr. Without one, on a terminal, an interactive chat starts
(exit, quit or Ctrl-D leave; Ctrl-C stops an answer; !multi ... !end; /reset; /save FILE;
/help). Chats are logged under $AGENTCLI_HOME/sessions and resumed with --session NAME or
--continue, which keep the connector the session was started with (-c) and show its
last turns. Exit codes: 0 answered, 1 the turn failed or was aborted, 2 bad input.

\b
Examples:
  agent run expense 'submit $25 for lunch'
  agent run expense                         interactive chat
  agent run expense -c openai/gpt-4o-mini   the same package on a real model
  echo "hello" | agent run keyword
  agent run -c echo "hello"                 a connector, no assistant
  agent run coffee --session order-1        resume (or start) a named session
  agent run --continue                      resume the most recent session
  agent run expense "list my expenses" --json | jq .type
"""


def register(app: typer.Typer) -> None:
    """Add the command to ``app``."""
    app.command("run", help=HELP)(guarded(run))


def run(
    target: str | None = typer.Argument(
        None, help="Assistant id or path; with -c and no assistant, the message itself."
    ),
    message: str | None = typer.Argument(None, help="The message (read from stdin when piped)."),
    connector: str | None = typer.Option(None, "-c", "--connector", help="Connector override."),
    connector_all: bool = typer.Option(
        False, "--connector-all", help="Apply -c to delegated and ctx.agent assistants too."
    ),
    locale: str | None = typer.Option(None, "--locale", help="Locale, e.g. zh-cn."),
    user: str | None = typer.Option(None, "-u", "--user", help="User id (ctx.memory.user)."),
    team: str | None = typer.Option(None, "-t", "--team", help="Team id (ctx.memory.team)."),
    ctx_file: Path | None = typer.Option(
        None, "--ctx", help="Context JSON: chat_id, authorized{user_id, team_id}, metadata, locale."
    ),
    json_events: bool = typer.Option(False, "--json", help="Print events as NDJSON."),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="Show tool arguments and results."),
    root: Path | None = typer.Option(
        None, "--root", help="Assistants root (default: ./assistants)."
    ),
    session: str | None = typer.Option(None, "--session", help="Resume or start this session."),
    resume: bool = typer.Option(False, "--continue", help="Resume the most recent session."),
    chat: bool = typer.Option(
        False, "--chat", help="Chat even when stdin is not a terminal (one line per message)."
    ),
    max_steps: int | None = typer.Option(
        None,
        "--max-steps",
        min=1,
        help="Model calls a turn may make (default: package.yao's max_steps, else 20).",
    ),
) -> None:
    """Send one message and stream the answer, or chat."""
    from agentcli.assistant.session import AssistantRegistry
    from agentcli.cli.sessions import session_exists
    from agentcli.project import assistants_root

    registry = AssistantRegistry(root or assistants_root(Path.cwd()), cwd=Path.cwd())
    if connector_all:
        if connector is None:
            raise _usage("--connector-all applies -c to every assistant: give -c too")
        registry.connector_all = connector
    assistant: Assistant | None = None
    # An existing session knows its assistant: then, like --continue, the one argument may
    # be the message (``agent run --session s1 "hi"``).
    known_session = session is not None and session_exists(session)
    if target is not None:
        flexible = connector is not None or resume or known_session
        assistant, message = _assistant_or_message(registry, target, message, flexible)
    if assistant is None and not (resume or known_session):
        _connector_only(connector, message, json_events, verbose, session, chat, max_steps)
        return
    from agentcli.cli.sessions import open_session

    options = _request_options(ctx_file, connector, locale, user, team)
    options.max_steps = max_steps
    interactive = message is None and (chat or sys.stdin.isatty())
    if interactive and json_events:
        raise _usage("--json needs a message (or piped input); it has no chat mode")
    if message is None and not interactive:
        message = _stdin_message()
    named = None
    if interactive or session is not None or resume:
        named = open_session(
            assistant.id if assistant else None, name=session, latest=resume, connector=connector
        )
        if assistant is None:
            assistant = registry.get(named.assistant_id)
        # A resumed session talks to the model it was started with, not the package's.
        options.connector = options.connector or named.connector
    # Named, or (--continue without one, the only way here without it) the session's own.
    assert assistant is not None
    from agentcli.assistant.hooks import unported_hooks

    for warning in unported_hooks(assistant.package.path):
        typer.echo(f"warning: {warning}", err=True)
    for near_miss in assistant.package.near_misses:  # `max_step`: kept, not used, so said
        typer.echo(f"warning: {near_miss}", err=True)
    if interactive:
        from agentcli.cli.chat import run_chat

        assert named is not None  # a chat opened it just above
        code = run_chat(
            registry,
            assistant,
            options,
            named,
            verbose=verbose,
            stdin=sys.stdin,
            stdout=sys.stdout,
            lines=chat,
        )
        raise typer.Exit(code)
    status = _one_shot(registry, assistant, options, message, named, json_events, verbose)
    if status != "done":
        raise typer.Exit(1)


def _usage(text: str) -> ConfigError:
    """A usage error that points at ``agent run --help``."""
    from agentcli.errors import ConfigError

    return ConfigError(text, hint="agent run --help")


def _assistant_or_message(
    registry: AssistantRegistry, target: str, message: str | None, flexible: bool
) -> tuple[Assistant | None, str | None]:
    """The assistant ``target`` names; with ``-c``, ``--continue`` or an existing
    ``--session`` (``flexible``) and no message, ``target`` may instead be the message
    (``agent run -c echo "hi"``)."""
    from agentcli.errors import UnknownAssistantError

    if message is None and flexible:
        try:
            return registry.get(target), None
        except UnknownAssistantError:
            return None, target
    return registry.get(target), message


def _stdin_message() -> str:
    text = "" if sys.stdin.isatty() else sys.stdin.read().strip()
    if not text:
        raise _usage("no message given (and nothing piped on stdin)")
    return text


def _request_options(
    ctx_file: Path | None,
    connector: str | None,
    locale: str | None,
    user: str | None,
    team: str | None,
) -> RequestOptions:
    """RequestOptions from --ctx, overridden by -c, --locale, -u and -t."""
    from agentcli.assistant.identity import (
        ContextFile,
        Identity,
        load_context_file,
        resolve_identity,
    )
    from agentcli.assistant.session import RequestOptions

    context = load_context_file(ctx_file) if ctx_file is not None else ContextFile()
    locale, user_id, team_id = resolve_identity(Identity(locale, user, team), context.identity)
    return RequestOptions(
        connector=connector,
        locale=locale or None,
        user_id=user_id,
        team_id=team_id,
        chat_id=context.chat_id or None,
        metadata=dict(context.metadata),
        authorized=dict(context.authorized),
    )


def _one_shot(
    registry: AssistantRegistry,
    assistant: Assistant,
    options: RequestOptions,
    message: str | None,
    session: Session | None,
    json_events: bool,
    verbose: bool,
) -> str:
    """One turn with the assistant, streamed; returns the reply status."""
    import asyncio

    from agentcli.cli.render import TurnPrinter

    printer = TurnPrinter(json_events=json_events, verbose=verbose)
    options.on_event = printer.on_event
    options.on_output = printer.on_output
    storage = None
    if session is not None:
        storage = session.log
        options.chat_id = options.chat_id or session.name

    async def main() -> Reply:
        try:
            conversation = assistant.conversation(options, storage=storage)
            return await conversation.send(message)
        finally:
            if storage is not None:
                storage.close()
            await registry.aclose()

    reply = asyncio.run(main())
    printer.finish_reply(reply)
    return reply.status


def _connector_only(
    connector: str | None,
    message: str | None,
    json_events: bool,
    verbose: bool,
    session: str | None,
    chat: bool,
    max_steps: int | None,
) -> None:
    """``agent run -c <connector> "message"``: one turn with the bare model."""
    import asyncio

    from agentcli.cli.render import TurnPrinter
    from agentcli.models.connectors import resolve_connector
    from agentcli.runtime.agent import Agent

    if connector is None:
        raise _usage("give an assistant (agent list shows them) or a connector with -c")
    if session is not None or chat:
        raise _usage("--session and --chat need an assistant")
    if message is None:
        message = _stdin_message()
    model = resolve_connector(connector)
    agent = Agent(model)
    if max_steps is not None:
        agent.max_steps = max_steps
    printer = TurnPrinter(json_events=json_events, verbose=verbose)
    agent.subscribe(printer.on_event)

    async def turn() -> TurnResult:
        try:
            return await agent.prompt(message)
        finally:  # its pooled connections, closed on this loop (else aiohttp warns)
            close = getattr(model, "aclose", None)
            if close is not None:
                await close()

    result = asyncio.run(turn())
    printer.finish(result)
    if result.reason != "done":
        raise typer.Exit(1)

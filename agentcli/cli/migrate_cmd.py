"""``agent migrate ASSISTANT [--reset]``: bring the tables of a package's data models up to
date, or drop and recreate them (``--reset``) after a change that would lose data."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from agentcli.cli.errors import guarded


def register(app: typer.Typer) -> None:
    """Add the command to ``app``."""
    app.command(
        "migrate",
        help="Create or alter the tables of an assistant's data models (models/*.mod.yao); "
        "--reset drops and recreates them (their rows are lost).",
    )(guarded(migrate))


def migrate(
    assistant: str = typer.Argument(..., help="Assistant id or package folder."),
    reset: bool = typer.Option(
        False, "--reset", help="Drop the tables of the assistant's models and create them anew."
    ),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask before --reset."),
    state: str = typer.Option(
        "persistent",
        "--state",
        help="Whose database: persistent (agent run's, the default) or a state folder "
        "(agent eval --state DIR). AGENTCLI_DATABASE_URL, when set, wins.",
    ),
    root: Path | None = typer.Option(
        None, "--root", help="Assistants root (default: ./assistants)."
    ),
) -> None:
    """Migrate (or reset) the tables of one package's data models."""
    import os

    from agentcli.assistant.data.schema import load_models
    from agentcli.assistant.data.store import DataStore
    from agentcli.assistant.package import resolve_assistant
    from agentcli.assistant.state import StateDir

    package = resolve_assistant(assistant, root=root, cwd=Path.cwd())
    specs = load_models(package.path, package.id)
    if not specs:
        typer.echo(f"{package.id} has no data models (models/*.mod.yao)")
        return
    store = DataStore.for_state(StateDir.parse(state, cwd=Path.cwd()), os.environ)
    try:
        if reset:
            tables = ", ".join(spec.table for spec in specs)
            if not yes and sys.stdin.isatty():
                typer.confirm(
                    f"Drop and recreate {tables} in {store.shown_url}? Their rows are lost",
                    abort=True,
                )
            dropped = store.reset(specs)
            typer.echo(
                f"Reset {tables} in {store.shown_url} (dropped: {', '.join(dropped) or 'none'})"
            )
            return
        store.register(specs)
    finally:
        store.close()
    for spec in specs:
        typer.echo(f"{spec.process_id}: table {spec.table} up to date")
    typer.echo(f"Database: {store.shown_url}")

"""``agent cache stats`` / ``agent cache clear``: the response cache of ``agent eval --cache``."""

from __future__ import annotations

import typer

from agentcli.cli.errors import guarded


def register(app: typer.Typer) -> None:
    """Add the command group to ``app``."""
    group = typer.Typer(
        help="The response cache of `agent eval --cache` ($AGENTCLI_HOME/cache).",
        no_args_is_help=True,
        add_completion=False,
    )
    group.command("stats", help="Entries, size, and hits and misses since the last clear.")(
        guarded(stats)
    )
    group.command("clear", help="Remove every cached response.")(guarded(clear))
    app.add_typer(group, name="cache")


def stats() -> None:
    """Print what the cache holds."""
    from agentcli.assistant.response_cache import ResponseCache

    cache = ResponseCache()
    try:
        figures = cache.stats()
    finally:
        cache.close()
    asked = figures["hits"] + figures["misses"]
    rate = f" ({100 * figures['hits'] / asked:.0f}% hits)" if asked else ""
    typer.echo(f"Cache:   {cache.folder}")
    typer.echo(f"Entries: {figures['entries']} ({figures['bytes'] / 1024:.0f} KiB)")
    typer.echo(f"Hits:    {figures['hits']}, misses: {figures['misses']}{rate}")


def clear() -> None:
    """Empty the cache."""
    from agentcli.assistant.response_cache import ResponseCache

    cache = ResponseCache()
    try:
        removed = cache.clear()
    finally:
        cache.close()
    typer.echo(
        f"Removed {removed} cached response{'s' if removed != 1 else ''} from {cache.folder}"
    )

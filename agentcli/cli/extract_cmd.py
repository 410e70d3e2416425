"""``agent extract``: one file per case from a results file."""

from __future__ import annotations

from pathlib import Path

import typer

from agentcli.cli.errors import guarded


def register(app: typer.Typer) -> None:
    """Add the command to ``app``."""
    app.command(
        "extract",
        help=(
            "Write one file per case (Markdown or JSON) from a results file, with an index.md.\n\n"
            "Reads agentcli JSONL results (plain, dynamic and stability runs) and Yao's "
            "single-JSON reports.\n\n"
            "\b\nExamples:\n"
            "  agent extract tests/output-20261130120000.jsonl\n"
            "  agent extract results.jsonl -o cases/ --format json"
        ),
        no_args_is_help=True,
    )(guarded(extract))


def extract(
    results: Path = typer.Argument(..., help="Results file (.jsonl, or a .json report)."),
    output: Path | None = typer.Option(
        None, "-o", "--output", help="Folder (default: beside the file)."
    ),
    fmt: str = typer.Option("markdown", "--format", help="markdown or json."),
) -> None:
    """Extract cases into files."""
    from agentcli.errors import ConfigError
    from agentcli.eval.results.extract import FORMATS
    from agentcli.eval.results.extract import extract as run_extract

    if fmt not in FORMATS:
        raise ConfigError(f"unknown --format {fmt!r}", hint=f"use one of: {', '.join(FORMATS)}")
    if not results.is_file():
        raise ConfigError(f"results file not found: {results}")
    out_dir = output or results.parent / results.stem
    written = run_extract(
        results,
        out_dir,
        fmt,
        on_warning=lambda message: typer.echo(f"warning: {message}", err=True),
    )
    typer.echo(f"extracted {len(written) - 1} cases to {out_dir}")

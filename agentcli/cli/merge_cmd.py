"""``agent merge``: combine results files (e.g. CI shards) into one report."""

from __future__ import annotations

from pathlib import Path

import typer

from agentcli.cli.errors import guarded


def register(app: typer.Typer) -> None:
    """Add the command to ``app``."""
    app.command(
        "merge",
        help=(
            "Merge results files into one report; the summary and stability figures are "
            "recomputed, duplicate cases are an error. Exit codes as for agent eval.\n\n"
            "\b\nExamples:\n"
            "  agent merge shard-1.jsonl shard-2.jsonl -o all.jsonl\n"
            "  agent merge results/*.jsonl -o report.html\n"
            "  agent merge 's3://bucket/run-42/shard-*.jsonl' -o all.jsonl"
        ),
        no_args_is_help=True,
    )(guarded(merge))


def merge(
    files: list[str] = typer.Argument(
        ..., help="Results files to merge: paths, or fsspec URLs (globs expanded)."
    ),
    output: Path = typer.Option(
        ..., "-o", "--output", help="Merged file; the extension picks the format."
    ),
    allow_duplicates: bool = typer.Option(
        False, "--allow-duplicates", help="Keep the later copy of a duplicate."
    ),
    min_pass_rate: float = typer.Option(
        100.0, "--min-pass-rate", min=0, max=100, help="Stability threshold (%)."
    ),
    force: bool = typer.Option(
        False, "--force", help="Replace an existing file that is not a report of that format."
    ),
) -> None:
    """Merge results files."""
    from agentcli.errors import ConfigError
    from agentcli.eval.reports import writer_for
    from agentcli.eval.reports._view import format_percent
    from agentcli.eval.results.merge import merge_files, write_merged
    from agentcli.eval.results.remote import expand_inputs
    from agentcli.words import counted

    inputs = expand_inputs(files)
    local = [f for f in inputs if isinstance(f, Path)]
    missing = [str(f) for f in local if not f.is_file()]
    if missing:
        raise ConfigError(f"results file(s) not found: {', '.join(missing)}")
    writer = writer_for(output, inputs=local, force=force)  # checked before reading the inputs
    merged = merge_files(inputs, allow_duplicates=allow_duplicates, min_pass_rate=min_pass_rate)
    for warning in merged.warnings:
        typer.echo(f"warning: {warning}", err=True)
    write_merged(merged, output, writer=writer)
    summary = merged.summary
    typer.echo(
        f"merged {counted(len(inputs), 'file')}: {counted(summary.total, 'result')}, "
        f"{summary.passed} passed, pass rate {format_percent(summary.pass_rate or 0)} -> {output}"
    )
    raise typer.Exit(merged.exit_code())

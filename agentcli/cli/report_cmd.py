"""``agent report``: render a results file in another format."""

from __future__ import annotations

from pathlib import Path

import typer

from agentcli.cli.errors import guarded


def register(app: typer.Typer) -> None:
    """Add the command to ``app``."""
    app.command(
        "report",
        help=(
            "Render a results file as .json, .md, .html (self-contained) or .xml (JUnit); "
            "without -o, print its summary and what did not pass.\n\n"
            "\b\nExamples:\n"
            "  agent report tests/output-20261130120000.jsonl\n"
            "  agent report tests/output-20261130120000.jsonl -o report.html\n"
            "  agent report results.jsonl -o junit.xml"
        ),
        no_args_is_help=True,
    )(guarded(report))


def report(
    results: Path = typer.Argument(..., help="Results file (.jsonl, or a .json report)."),
    output: Path | None = typer.Option(
        None,
        "-o",
        "--output",
        help="Report file; the extension picks the format (- : JSON Lines on stdout).",
    ),
    force: bool = typer.Option(
        False, "--force", help="Replace an existing file that is not a report of that format."
    ),
) -> None:
    """Render a report."""
    from agentcli.errors import ConfigError
    from agentcli.eval.reports import read_results, writer_for

    if not results.is_file():
        raise ConfigError(f"results file not found: {results}")
    if output is None:
        _print_summary(results)
        return
    writer = writer_for(output, inputs=[results], force=force)  # before reading a big file
    loaded = read_results(results)
    for warning in loaded.warnings:
        typer.echo(f"warning: {warning}", err=True)
    writer.open(loaded.header, loaded.results)
    # An unfinished run has no summary: the report says so with an empty one, as read,
    # naming the assistant and connector its header gives.
    summary = loaded.report().summary
    writer.close(summary, loaded.stability_results or None)
    if str(output) != "-":  # stdout holds the report alone
        typer.echo(f"wrote {output}")


def _print_summary(results: Path) -> None:
    """The summary of ``results`` and its failures, as the run's end showed them."""
    import sys

    from rich.console import Console

    from agentcli.cli.views.report_summary import ResultsSummary
    from agentcli.eval.reports import read_results

    loaded = read_results(results)
    for warning in loaded.warnings:
        typer.echo(f"warning: {warning}", err=True)
    Console(file=sys.stdout, highlight=False, soft_wrap=True).print(
        ResultsSummary(loaded, str(results))
    )

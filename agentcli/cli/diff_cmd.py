"""``agent diff``: compare two runs case by case (regressions, fixes, changed outputs...)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from agentcli.cli.errors import guarded

if TYPE_CHECKING:
    from agentcli.eval.compare.model import RunDiff

HELP = """Compare two results files (or the newest two in a folder of runs) case by case:
regressions, fixes, still failing, new and removed cases, changed outputs, tool calls,
duration, tokens and cost. Under --runs a change counts only when Fisher's exact test on
the repeat counts says so (p < --alpha).

\b
Examples:
  agent diff main.jsonl pr.jsonl
  agent diff assistants/expense/tests            the newest two output-*.jsonl there
  agent diff main.jsonl pr.jsonl -o diff.md      Markdown for a GitHub job summary
  agent diff main.jsonl pr.jsonl --json

Exit codes: 0 no regressions, 1 a regression, 2 bad input.
"""


def register(app: typer.Typer) -> None:
    """Add the command to ``app``."""
    app.command("diff", help=HELP, no_args_is_help=True)(guarded(diff))


def diff(
    base: Path = typer.Argument(
        ..., metavar="BASE", help="Base results file, or a folder of runs."
    ),
    new: Path | None = typer.Argument(
        None, metavar="[NEW]", help="New results file (none: BASE is a folder)."
    ),
    json_output: bool = typer.Option(False, "--json", help="One JSON document on stdout."),
    output: Path | None = typer.Option(
        None, "-o", "--output", help="Also write the diff: .html, .md or .json."
    ),
    alpha: float = typer.Option(
        0.05, "--alpha", min=0, max=1, help="Significance level of a change under --runs."
    ),
    force: bool = typer.Option(
        False, "--force", help="Replace an existing -o file that is not a diff of that format."
    ),
    include_infra: bool = typer.Option(
        False,
        "--include-infra",
        help="Count failures on the infrastructure (provider, network, timeout) too.",
    ),
) -> None:
    """Compare two runs."""
    from agentcli.errors import ConfigError
    from agentcli.eval.compare.compute import diff_runs
    from agentcli.eval.compare.output import check_diff_output, write_diff
    from agentcli.eval.compare.sources import load_run, newest_two

    if output is not None:  # before reading anything: a bad -o is exit 2 at once
        check_diff_output(output, inputs=[base] if new is None else [base, new], force=force)
    if new is None:
        if not base.is_dir():
            raise ConfigError(
                f"{base}: give two results files, or one folder of runs",
                hint="agent diff BASE.jsonl NEW.jsonl   or   agent diff RUNS_FOLDER",
            )
        before, after = newest_two(base)
        typer.echo(
            f"comparing the newest two results files in {base}: "
            f"{before.source.label} -> {after.source.label}",
            err=True,
        )
    else:
        before, after = load_run(base), load_run(new)
    for warning in [*before.warnings, *after.warnings]:
        typer.echo(f"warning: {warning}", err=True)
    compared = diff_runs(
        before.results,
        after.results,
        base_source=before.source,
        new_source=after.source,
        alpha=alpha,
        include_infra=include_infra,
    )
    if json_output:
        from agentcli.eval.compare.json_form import diff_json

        sys.stdout.write(diff_json(compared))
    else:
        _print(compared)
    if output is not None:
        write_diff(compared, output)
        typer.echo(f"wrote {output}", err=json_output)
    raise typer.Exit(1 if compared.regressions else 0)


def _print(compared: RunDiff) -> None:
    """The diff on the console, coloured on a terminal."""
    from rich.console import Console

    from agentcli.cli.views.diff_block import DiffBlock
    from agentcli.eval.compare.console import console_lines

    console = Console(file=sys.stdout, highlight=False, soft_wrap=True)
    console.print(DiffBlock(console_lines(compared)))

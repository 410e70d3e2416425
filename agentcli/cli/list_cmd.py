"""``agent list``: the assistants under the root, and ``--check`` to find every problem."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from agentcli.cli.errors import guarded

if TYPE_CHECKING:
    from agentcli.assistant.catalog import AliasReport, PackageReport

HELP = """List the assistant packages under the assistants root.

Columns: id (what agent run and agent eval take), name, connector and the number of tools
the model gets ("?" for MCP servers whose tools are known only once started; none is
started). --check also loads every package.yao, locale, prompt, hook module, connector
(scripted rules, python models, API keys) and tool definition, and reports every problem:
exit 1 when any is an error. Unknown package.yao fields and missing API keys are warnings.

\b
Examples:
  agent list
  agent list --root path/to/assistants
  agent list --check
  agent list --json | jq '.[].id'
"""


def register(app: typer.Typer) -> None:
    """Add the command to ``app``."""
    app.command("list", help=HELP)(guarded(list_assistants))


def list_assistants(
    root: Path | None = typer.Option(
        None, "--root", help="Assistants root (default: ./assistants)."
    ),
    check: bool = typer.Option(False, "--check", help="Load everything and report problems."),
    json_output: bool = typer.Option(False, "--json", help="Print a JSON array."),
) -> None:
    """List assistants."""
    import asyncio

    from agentcli.assistant.catalog import check_aliases, check_package, summarize_package
    from agentcli.assistant.package import find_assistants_root, iter_packages
    from agentcli.errors import ConfigError
    from agentcli.project import assistants_root

    cwd = Path.cwd()
    found = find_assistants_root(cwd=cwd, explicit=root or assistants_root(cwd))
    if found is None:
        raise ConfigError(
            "no assistants root found", hint="pass --root DIR, set AGENT_ROOT, or cd to a project"
        )
    paths = list(iter_packages(found))
    if check:

        async def inspect_all() -> list[PackageReport]:
            return [await check_package(path, found, cwd=cwd) for path in paths]

        reports = asyncio.run(inspect_all())
    else:
        reports = [summarize_package(path, found) for path in paths]
    if json_output:
        typer.echo(json.dumps([r.to_dict() for r in reports], ensure_ascii=False, indent=2))
    elif check:
        _print_checks(reports, found)
    else:
        _print_table(reports, found)
    aliases_failed = False
    if check:
        # Aliases a package uses were checked with it; the others are checked here.
        used = {r.connector for r in reports}
        file, aliases = check_aliases(cwd, found)
        aliases = [a for a in aliases if a.name not in used]
        aliases_failed = any(a.error for a in aliases)
        if not json_output and aliases:
            _print_aliases(file, aliases)
    if check and (aliases_failed or any(r.errors for r in reports)):
        raise typer.Exit(1)


def _print_table(reports: list[PackageReport], root: Path) -> None:
    """One row per package: id, name, connector, tools."""
    if not reports:
        typer.echo(f"no assistant packages under {root}")
        return
    rows = [("ID", "NAME", "CONNECTOR", "TOOLS")]
    for report in reports:
        name = report.name if not report.errors else "(cannot load: agent list --check)"
        rows.append((report.id, name, report.connector or "-", report.tools or "-"))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row[:3], widths, strict=True)]
        typer.echo("  ".join([*cells, row[3]]).rstrip())


def _print_checks(reports: list[PackageReport], root: Path) -> None:
    """Each package's errors and warnings, then the tally."""
    for report in reports:
        mark = "✗" if report.errors else ("!" if report.warnings else "✓")
        typer.echo(f"{mark} {report.id}  ({report.path})")
        for error in report.errors:
            typer.echo(_indent(f"error: {error}"))
        for warning in report.warnings:
            typer.echo(_indent(f"warning: {warning}"))
    failed = sum(1 for r in reports if r.errors)
    warned = sum(1 for r in reports if r.warnings and not r.errors)
    typer.echo(
        f"{len(reports)} package{'' if len(reports) == 1 else 's'} checked under {root}: "
        f"{failed} with errors, {warned} with warnings only"
    )


def _print_aliases(file: Path | None, aliases: list[AliasReport]) -> None:
    """Each connector alias and what it resolved to."""
    typer.echo(f"connectors: {file or 'connectors.yml'}")
    for alias in aliases:
        mark = "✗" if alias.error else ("!" if alias.warning else "✓")
        typer.echo(f"{mark} {alias.name} -> {alias.target or '?'}")
        for problem in (alias.error, alias.warning):
            if problem:
                typer.echo(
                    _indent(f"{'error' if problem is alias.error else 'warning'}: {problem}")
                )


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())

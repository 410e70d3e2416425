"""``agent init NAME``: scaffold an assistant package that passes its own cases offline."""

from __future__ import annotations

from pathlib import Path

import typer

from agentcli.cli.errors import guarded

HELP = """Create a new assistant package, ready to run and evaluate offline.

NAME is the package's folder: created in ./assistants/ when the current folder has one,
else here (a NAME with a '/' is a path). It gets a package.yao, prompts for a real model,
offline scripted rules, a Create hook, a process tool with an input schema, and
tests/cases.jsonl (several assertion types, an LLM judge and a dynamic case, played by the
shipped builtin.validator and builtin.simulator). Existing files are never overwritten
unless --force is given.

\b
Examples:
  agent init order-desk
  agent eval order-desk @order-desk/tests/cases.jsonl
  agent init assistants/support/order-desk --force
"""


def register(app: typer.Typer) -> None:
    """Add the command to ``app``."""
    app.command("init", help=HELP)(guarded(init))


def init(
    name: str = typer.Argument(..., help="The package folder to create (its name is the id)."),
    force: bool = typer.Option(False, "--force", help="Overwrite files the package already has."),
) -> None:
    """Scaffold an assistant package."""
    from agentcli.assistant.package import assistant_id
    from agentcli.builtin.scaffold import scaffold_package
    from agentcli.errors import ConfigError
    from agentcli.project import assistants_root

    cwd = Path.cwd()
    if Path(name).name in ("", ".", ".."):
        raise ConfigError(
            f"agent init {name!r}: name the new package's folder",
            hint="agent init order-desk (made in the project's assistants folder, else here)",
        )
    # the project's assistants folder (agentcli.yml's assistants:), else ./assistants
    root = assistants_root(cwd) or (cwd / "assistants" if (cwd / "assistants").is_dir() else None)
    shown = name
    if "/" not in name and root is not None:
        shown = str(root.relative_to(cwd) / name) if root.is_relative_to(cwd) else str(root / name)
    target = (cwd / Path(shown).expanduser()).absolute()
    package_id = assistant_id(target, root) if root is not None else target.name
    made = scaffold_package(target, shown=shown, id=package_id, force=force)
    typer.echo(f"Created {made.id} in {made.path} ({len(made.files)} files). Try:")
    typer.echo(f"  agent run {made.id} 'Where is order A-1001?'")
    typer.echo(f"  agent eval {made.id} @{shown.rstrip('/')}/tests/cases.jsonl")

"""``agent config``: the resolved project configuration, and where each value came from
(``agentcli.yml:LINE``, ``env NAME`` or ``default``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from agentcli.cli.errors import guarded

if TYPE_CHECKING:
    from agentcli.project import ProjectConfig

HELP = """Show the project configuration: every setting, its value and its source.

\b
The project config is agentcli.yml (or [tool.agentcli] in pyproject.toml), found walking
up from the current folder. Precedence: flags > environment (AGENT_*) > the file >
built-in defaults; agent eval applies the flags over what this shows.
"""


def register(app: typer.Typer) -> None:
    """Add the command to ``app``."""
    app.command("config", help=HELP)(guarded(show_config))


def show_config(
    as_json: bool = typer.Option(False, "--json", help="One JSON object instead of text."),
) -> None:
    """Print the resolved configuration."""
    from agentcli.project import load_project

    cwd = Path.cwd()
    project = load_project(cwd)
    if as_json:
        typer.echo(json.dumps(config_dict(project), ensure_ascii=False, indent=2))
    else:
        typer.echo("\n".join(config_lines(project, cwd)))


def _defaults() -> dict[str, Any]:
    """The built-in values a setting left unset stands for (those of ``agent eval``)."""
    from agentcli.eval.run.options import EvalOptions

    options = EvalOptions()
    return {"parallel": options.parallel, "timeout": options.timeout, "retries": options.retries}


def _shown(key: str, value: Any, cwd: Path) -> str:
    """A value as the text shows it."""
    if value is None or value == () or value == {}:
        return "-"
    if isinstance(value, Path):
        return str(value.relative_to(cwd)) if value.is_relative_to(cwd) else str(value)
    if key == "timeout":
        return f"{value:g}s"
    if key == "suites":
        return ", ".join(value)
    if isinstance(value, tuple):
        return ", ".join(value)
    return str(value)


def _source(source: str, cwd: Path) -> str:
    """A source as the text shows it: a config file relative to ``cwd``."""
    path, colon, line = source.rpartition(":")
    if colon and line.isdigit() and Path(path).is_absolute() and Path(path).is_relative_to(cwd):
        return f"{Path(path).relative_to(cwd)}:{line}"
    return source


def config_lines(project: ProjectConfig, cwd: Path) -> list[str]:
    """The text of ``agent config``: the project file, then a line per setting, then the
    suites with their globs."""
    defaults = _defaults()
    if project.path is None:
        lines = [f"Project: none (no agentcli.yml or [tool.agentcli] found from {cwd})"]
    else:
        lines = [f"Project: {project.path}"]
    rows = []
    for key, setting in project.settings():
        value = setting.value if setting.value is not None else defaults.get(key)
        rows.append((key, _shown(key, value, cwd), _source(setting.source, cwd)))
    key_width = max(len(row[0]) for row in rows)
    value_width = max(len(row[1]) for row in rows)
    lines.append("")
    lines += [f"{k:<{key_width}}  {v:<{value_width}}  {s}".rstrip() for k, v, s in rows]
    suites = project.suites.value
    if suites:
        lines += ["", "Suites:"]
        width = max(len(name) for name in suites)
        for name, suite in suites.items():
            lines.append(
                f"  {name:<{width}}  {' '.join(suite.patterns)}  ({_source(suite.source, cwd)})"
            )
    return lines


def config_dict(project: ProjectConfig) -> dict[str, Any]:
    """The configuration as JSON: ``{"project": file, "settings": {key: {value, source}}}``."""
    defaults = _defaults()
    settings: dict[str, Any] = {}
    for key, setting in project.settings():
        value = setting.value if setting.value is not None else defaults.get(key)
        if key == "suites":
            value = {name: list(suite.patterns) for name, suite in project.suites.value.items()}
        elif isinstance(value, Path):
            value = str(value)
        elif isinstance(value, tuple):
            value = list(value)
        settings[key] = {"value": value, "source": setting.source}
    return {"project": str(project.path) if project.path else None, "settings": settings}

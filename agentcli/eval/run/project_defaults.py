"""The project config under the command line: a value of ``agentcli.yml`` (or of the
environment it resolved) fills an option the command line did not give, so the precedence
is flags > environment > project config > built-in defaults."""

from __future__ import annotations

from agentcli.eval.run.options import EvalOptions
from agentcli.project.config import ProjectConfig

__all__ = ["project_cite", "with_project"]

# option field <- project setting, for the settings that fill an option one to one
_FILLS = {
    "parallel": "parallel",
    "timeout": "timeout",
    "retries": "retries",
    "simulator": "simulator",
    "judge_connector": "judge_connector",
}


def with_project(
    options: EvalOptions, project: ProjectConfig, *, renew: bool = False
) -> EvalOptions:
    """``options`` with the project's values where the command line (``options.command_line``) set
    none; the project is kept on the options (its runs folder, its suites). ``renew``: the
    values an earlier project filled in go back to their defaults first (a changed config
    under ``--watch``)."""
    defaults = EvalOptions()
    filled = set()
    for name, key in _FILLS.items():
        if name in options.command_line:
            continue
        value = getattr(project, key).value
        if value is not None:
            setattr(options, name, value)
            filled.add(name)
        elif renew:
            setattr(options, name, getattr(defaults, name))
    # A project's parallel: 4 is no --parallel given to one message (which refuses it).
    options.from_project = frozenset(filled)
    assistants = project.assistants
    if "root" not in options.command_line:
        # AGENT_ROOT is read where the root is found; only the file's value is passed on.
        from_file = assistants.value is not None and assistants.source != "env AGENT_ROOT"
        options.root = assistants.value if from_file else (None if renew else options.root)
    options.connectors_file = project.connectors.value
    options.default_assistant = project.assistant.value
    options.default_excluded = list(project.exclude_tags.value)
    options.project = project
    return options


def project_cite(options: EvalOptions, key: str) -> str | None:
    """Where the project gave the value ``options`` holds for setting ``key``
    (``agentcli.yml:3: judge_connector``, ``env AGENT_JUDGE_CONNECTOR``), for an error about
    that value; None when the command line gave it, or no project did."""
    project = options.project
    if project is None or getattr(project, key).source == "default":
        return None
    if key == "assistant":  # no flag sets it: it is the project's whenever it is set
        return project.cite(key) if options.default_assistant is not None else None
    return project.cite(key) if key in options.from_project else None

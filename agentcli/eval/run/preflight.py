"""Preflight: what the cases of a run reference, checked before the first case runs, so a
typo is one usage error (exit 2, naming the case and its ``file:line``) rather than an error
in every case that names it.

The session's plan step checks the connector of every case, the simulators, the hooks, the
cassettes and the output; this module adds what assertions reference — the judges of
``agent`` assertions (and their connectors), the functions of ``script`` assertions — the
data models ``state.before`` seeds, the connectors of the simulators, and
``check_connectors`` for any further set of connector specs a run will use (the columns of a
connector matrix).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

from agentcli.errors import AgentCliError, ConfigError

if TYPE_CHECKING:
    from agentcli.assistant.package import AssistantPackage
    from agentcli.assistant.session import Assistant, AssistantRegistry
    from agentcli.eval.cases.load import CaseInfo
    from agentcli.eval.run.services import HookRunner

__all__ = ["check_connectors", "check_references", "where"]


def where(info: CaseInfo, fallback: str | None = None) -> str:
    """``file:line: case ID`` (the file alone, or nothing, when the case has no source)."""
    place = str(info.source) if info.source is not None else fallback
    return f"{place}: case {info.id}" if place else f"case {info.id}"


def check_connectors(
    registry: AssistantRegistry,
    package: AssistantPackage,
    specs: Iterable[str],
    *,
    label: str = "connector",
) -> None:
    """Resolve every connector spec in ``specs`` as ``package`` would (an unknown alias, a
    missing API key, a bad ``python:`` reference): a ``ConfigError`` naming the spec and
    ``label`` (``matrix column 2``, say) for the first that fails."""
    for spec in dict.fromkeys(specs):  # each once, in the order given
        try:
            registry.model(spec, package=package)
        except AgentCliError as error:
            raise ConfigError(f"{label} {spec!r}: {error.message}", hint=error.hint) from None


def check_references(
    registry: AssistantRegistry,
    hooks: HookRunner,
    cases: Iterable[CaseInfo],
    *,
    simulator: str | None = None,
    fallback: str | None = None,
    judge_connector_source: str | None = None,
    assistant: Assistant | None = None,
) -> None:
    """Every judge (with its connector), ``script`` function and simulator connector the
    cases name, and the data models of ``assistant`` (the one under test) their
    ``state.before`` seeds; skipped cases are not checked (they will not run). With
    ``judge_connector_source`` (``agentcli.yml:3: judge_connector``) the registry's judge
    connector is the project's, and a problem of it is told at that line."""
    judged: set[tuple[str, str | None]] = set()
    scripted: set[str] = set()
    simulated: set[str] = set()
    seeded: set[str] = set()
    for info in cases:
        if info.skip:
            continue
        if assistant is not None:
            for model in info.state_models:
                if model not in seeded:
                    _check_model(registry, assistant, info, model, fallback)
                    seeded.add(model)
        for judge in info.judges:
            if judge not in judged:
                _check_judge(
                    registry, info, *judge, fallback=fallback, source=judge_connector_source
                )
                judged.add(judge)
        for ref in info.scripts:
            if ref not in scripted:
                _check_script(hooks, info, ref, fallback)
                scripted.add(ref)
        user = info.simulator or simulator
        if info.dynamic and user and user not in simulated:
            _check_helper(registry, info, "simulator", user, None, fallback)
            simulated.add(user)


def _check_judge(
    registry: AssistantRegistry,
    info: CaseInfo,
    use: str,
    connector: str | None,
    *,
    fallback: str | None,
    source: str | None = None,
) -> None:
    """The judge ``agents:<id>`` exists and its connector resolves; the project's judge
    connector (``source`` says where it was given), when the assertion names none, is told
    at its own line: that is where the fix goes."""
    ref = use.removeprefix("agents:")
    project_spec = registry.judge_connector
    if connector is None and project_spec and source is not None:
        try:
            helper = registry.get(ref)
        except AgentCliError:  # the judge itself is unknown: said at the case below
            pass
        else:
            try:
                registry.model(project_spec, package=helper.package)
            except AgentCliError as error:
                named = "" if repr(project_spec) in error.message else f" {project_spec!r}"
                raise ConfigError(
                    f"{source}{named}: {error.message} (the connector of the judge "
                    f"{ref!r} of {where(info, fallback)})",
                    hint=error.hint,
                ) from None
    _check_helper(registry, info, "judge", ref, connector or project_spec, fallback)


def _check_helper(
    registry: AssistantRegistry,
    info: CaseInfo,
    role: str,
    ref: str,
    connector: str | None,
    fallback: str | None,
) -> None:
    """A helper assistant (judge, simulator) loads, and the connector it will call with
    (``connector``, else its package's, else ``AGENT_CONNECTOR``) resolves."""
    try:
        helper = registry.get(ref)
        spec = connector or helper.package.connector or os.environ.get("AGENT_CONNECTOR")
        if spec:
            registry.model(spec, package=helper.package)
    except AgentCliError as error:
        raise ConfigError(
            f"{where(info, fallback)}: {role} {ref!r}: {error.message}", hint=error.hint
        ) from None


def _check_model(
    registry: AssistantRegistry,
    assistant: Assistant,
    info: CaseInfo,
    model: str,
    fallback: str | None,
) -> None:
    """A data model a case's ``state.before`` seeds exists (as seeding will look it up)."""
    from agentcli.eval.run.state_fixtures import data_model

    try:
        data_model(registry, assistant, model)
    except AgentCliError as error:
        raise ConfigError(
            f"{where(info, fallback)}: state.before.models: {error.message}", hint=error.hint
        ) from None


def _check_script(hooks: HookRunner, info: CaseInfo, ref: str, fallback: str | None) -> None:
    """The function of a ``script`` assertion is defined in the package's ``src/``."""
    try:
        hooks.check(ref)
    except AgentCliError as error:
        message = getattr(error, "detail", error.message)
        raise ConfigError(
            f"{where(info, fallback)}: script assertion {message}", hint=error.hint
        ) from None

"""What ``agent list`` shows: a summary of each package under a root, and ``--check``'s full
inspection of a package (package.yao, locales, prompts, hooks, connector, tool servers).

Nothing is started: stdio/http/sse servers are only read from their definitions, so their
tool counts are known only where ``mcp.servers`` lists the tools (else shown as ``?``).
Hook and tool modules are imported, which runs their top-level code.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.assistant.package import AssistantPackage, assistant_id, load_package
from agentcli.errors import AgentCliError, ConfigError

if TYPE_CHECKING:
    from agentcli.assistant.tools import ToolBox

__all__ = [
    "AliasReport",
    "PackageReport",
    "check_aliases",
    "check_package",
    "search_problems",
    "summarize_package",
    "tool_count",
]


@dataclass(slots=True)
class AliasReport:
    """One ``connectors.yml`` alias as ``agent list --check`` resolved it."""

    name: str
    target: str  # what the alias names (its model)
    error: str | None = None
    warning: str | None = None


def check_aliases(
    cwd: Path, root: Path | None, env: Mapping[str, str] | None = None
) -> tuple[Path | None, list[AliasReport]]:
    """Resolve every alias of the ``connectors.yml`` in use (no model is called): an offline
    target is checked for its kind only (``scripted`` finds its rules in each package)."""
    from agentcli.models.connectors import alias_targets, is_offline, resolve_connector

    env = os.environ if env is None else env
    try:
        file, targets = alias_targets(cwd, root)
    except ConfigError as error:
        return None, [AliasReport("connectors.yml", "", error=str(error))]
    reports = []
    for name, target in targets.items():
        report = AliasReport(name, target)
        if not is_offline(target):
            try:
                resolve_connector(name, cwd=cwd, assistants_root=root, env=env)
            except AgentCliError as error:
                if "API key" in error.message:  # the machine's business, as for packages
                    report.warning = str(error)
                else:
                    report.error = str(error)
        reports.append(report)
    return file, reports


@dataclass(slots=True)
class PackageReport:
    """One package as ``agent list`` shows it; ``errors``/``warnings`` are filled by checks."""

    id: str
    path: Path
    name: str = ""
    description: str = ""
    connector: str = ""
    tools: str = ""
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "id": self.id,
            "name": self.name,
            "description": self.description,
            "connector": self.connector,
            "tools": int(self.tools) if self.tools.isdigit() else None,  # None: not known
            "path": str(self.path),
            "errors": self.errors,
            "warnings": self.warnings,
        }


def tool_count(package: AssistantPackage, env: Mapping[str, str] | None = None) -> str:
    """How many tools the model gets: a number, ``?`` or ``N+?`` when some servers are only
    known once started."""
    from agentcli.assistant.mcps import load_tool_servers

    specs = {spec.id: spec for spec in load_tool_servers(package.path, env=env or os.environ)}
    raw = package.raw.get("mcp")
    declared = isinstance(raw, list) or (isinstance(raw, dict) and raw.get("servers") is not None)
    refs = [(ref.server_id, ref.tools) for ref in package.mcp] if declared else []
    if not declared:
        refs = [(server_id, None) for server_id in specs]
    known, unknown = 0, False
    for server_id, tools in refs:
        spec = specs.get(server_id)
        if tools is not None:
            known += len(set(tools))
        elif spec is not None and spec.transport == "process":
            known += len(spec.tools)
        else:
            unknown = True
    if unknown:
        return f"{known}+?" if known else "?"
    return str(known)


def summarize_package(path: Path, root: Path | None, locale: str = "en-us") -> PackageReport:
    """Load a package for the listing; a failure becomes the report's only error."""
    from agentcli.assistant.locales import localize_package

    report = PackageReport(id=assistant_id(path, root), path=path)
    try:
        package = load_package(path, root=root)
        report.id = package.id
        localized = localize_package(package, locale)
        report.name, report.description = localized.name, localized.description
        report.connector = package.connector or ""
        report.tools = tool_count(package)
    except AgentCliError as error:
        report.errors.append(str(error))
    return report


async def check_package(
    path: Path, root: Path | None, *, cwd: Path, env: Mapping[str, str] | None = None
) -> PackageReport:
    """Inspect everything of a package that can be checked without a model call; one broken
    part does not hide the problems of the others."""
    from agentcli.assistant.option_names import option_warnings
    from agentcli.errors import PackageError

    env = os.environ if env is None else env
    report = PackageReport(id=assistant_id(path, root), path=path)
    broken: list[PackageError] = []
    try:
        # Every broken field is reported and the package loaded without them, so the
        # checks of its other files still run.
        package = load_package(path, root=root, env=env, problems_out=broken)
    except AgentCliError as error:
        report.errors.append(str(error))
        return report
    report.errors += [str(error) for error in broken]
    report.id, report.connector = package.id, package.connector or ""
    report.warnings += [
        f"unknown field '{name}' (kept, not used)"
        for name in package.unknown_fields
        # a warning of the package already names it, with its line and a did-you-mean
        if not any(f"'{name}'" in warning for warning in package.warnings)
    ]
    report.warnings += package.warnings
    report.warnings += option_warnings(package)
    for check in (_locales, _prompts, _hooks, _knowledge, _db_models):
        _collect(report, check, package)
    _collect(report, _connector, package, cwd, env)
    _collect(report, _embedding, package, cwd, env)
    try:
        await _tools(report, package, env)
        report.tools = tool_count(package, env)
    except AgentCliError as error:
        report.errors.append(str(error))
    report.errors = list(dict.fromkeys(report.errors))
    return report


def search_problems(
    package: AssistantPackage, *, cwd: Path, env: Mapping[str, str] | None = None
) -> list[str]:
    """What ``agent list --check`` finds wrong with the package's search settings (a
    ``db.models`` name no data model has, a ``kb.embedding`` no connector answers), each at
    its package.yao line: a run refuses them before its first case, which would fail on each."""
    if package.search_config is None:
        return []
    report = PackageReport(id=package.id, path=package.path)
    for check in (_knowledge, _db_models):
        _collect(report, check, package)
    _collect(report, _embedding, package, cwd, os.environ if env is None else env)
    return list(dict.fromkeys(report.errors))


def _knowledge(report: PackageReport, package: AssistantPackage) -> None:
    """Every ``kb`` collection has its folder (a search of a missing one fails each case)."""
    search = package.search_config
    for name in search.kb.collections if search is not None else ():
        folder = package.path / "kb" / str(name)
        if not folder.is_dir():
            report.errors.append(
                f"{package.path / 'package.yao'}: kb collection {name!r} has no folder "
                f"kb/{name}/ (put its .md, .txt and .json files there)"
            )


def _db_models(report: PackageReport, package: AssistantPackage) -> None:
    """Every ``db.models`` name is a data model of the package (``models/<name>.mod.yao``);
    a db search of another one fails each case."""
    from agentcli.assistant.data.schema import did_you_mean, load_models

    wanted = package.search_config.db_models if package.search_config is not None else ()
    if not wanted:
        return
    specs = load_models(package.path, package.id)  # a broken model file: that error
    own = {name for spec in specs for name in (spec.id, spec.process_id)}
    ids = sorted(spec.id for spec in specs)
    for index, name in enumerate(wanted):
        if name in own or (
            name.startswith("agents.") and not name.startswith(f"agents.{package.id}.")
        ):
            continue  # another package's model is known only once that package loads
        line = _line(package, "db", "models", index)
        if not specs:
            problem = "but the package has no data models (no models/*.mod.yao)"
        else:
            problem = f"which is no data model of the package{did_you_mean(name, ids)} " + (
                f"(models: {', '.join(ids)})"
            )
        report.errors.append(f"{package.file}{line}: db.models names {name!r}, {problem}")


def _embedding(
    report: PackageReport, package: AssistantPackage, cwd: Path, env: Mapping[str, str]
) -> None:
    """``kb.embedding`` resolves to a connector with an embeddings endpoint, as the kb
    search of each case would resolve it (a missing key is the machine's: a warning)."""
    from agentcli.assistant.search.embeddings import resolve_embedder

    spec = package.search_config.kb.embedding if package.search_config is not None else None
    if not spec or not package.search_config or not package.search_config.kb.collections:
        return
    try:
        resolve_embedder(
            spec, package_dir=package.path, cwd=cwd, assistants_root=package.root, env=env
        )
    except AgentCliError as error:
        line = _line(package, "kb", "embedding")
        problem = f"{package.file}{line}: kb.embedding {spec!r}: {error}"
        (report.warnings if "API key" in error.message else report.errors).append(problem)


def _line(package: AssistantPackage, *path: str | int) -> str:
    """``:line`` of a value of package.yao, or nothing when it cannot be told."""
    from agentcli.assistant.data.positions import value_lines
    from agentcli.assistant.jsonc import read_text

    line = value_lines(read_text(package.file)).get(path)
    return f":{line}" if line is not None else ""


def _collect(report: PackageReport, check: Any, *args: Any) -> None:
    try:
        check(report, *args)
    except AgentCliError as error:
        report.errors.append(str(error))


def _locales(report: PackageReport, package: AssistantPackage) -> None:
    from agentcli.assistant.locales import load_locales, locale_file_problems, localize_package

    unreadable = locale_file_problems(package)
    if unreadable:  # each file's problem; the templates are checked once they all read
        report.errors += [str(error) for error in unreadable]
        return
    locales = load_locales(package)
    for code in sorted(locales.messages) or ["en-us"]:
        localize_package(package, code, locales=locales)
    localized = localize_package(package, "en-us", locales=locales)
    report.name, report.description = localized.name, localized.description


def _prompts(report: PackageReport, package: AssistantPackage) -> None:
    from agentcli.assistant.prompts import (
        global_prompts,
        load_presets,
        load_prompts,
        prompt_file_problems,
        prompt_files,
    )

    broken = [str(error) for file in prompt_files(package) for error in prompt_file_problems(file)]
    if broken:  # every item of every prompts file; the rest is checked once they load
        report.errors += broken
        return
    load_prompts(package)
    presets = load_presets(package)
    global_prompts(package)
    for mode in package.modes:
        if mode not in presets and mode != package.default_mode:
            report.warnings.append(f"mode '{mode}' has no preset prompts/{mode}.yml")


def _hooks(report: PackageReport, package: AssistantPackage) -> None:
    from agentcli.assistant.hooks import Hooks, unported_hooks

    report.warnings += unported_hooks(package.path)
    hooks = Hooks.load(package.id, package.path)
    if hooks.path is not None and hooks.create is None and hooks.next is None:
        report.warnings.append(f"{hooks.path} defines neither Create nor Next")


def _connector(
    report: PackageReport, package: AssistantPackage, cwd: Path, env: Mapping[str, str]
) -> None:
    from agentcli.models.connectors import resolve_connector
    from agentcli.models.scripted import ScriptedModel

    spec = package.connector or env.get("AGENT_CONNECTOR")
    if not spec:
        report.warnings.append("no connector: pass -c or set AGENT_CONNECTOR to run it")
        return
    rules = package.path / "scripted.yml"
    if spec == "scripted" and rules.is_file():
        broken = ScriptedModel.file_problems(rules)  # every rule, not just the first
        if broken:
            report.errors += [str(error) for error in broken]
            return
    try:
        resolve_connector(
            spec, package_dir=package.path, cwd=cwd, assistants_root=package.root, env=env
        )
    except ConfigError as error:
        # A key belongs to the machine, not to the package: worth knowing, not an error.
        if "API key" in error.message:
            report.warnings.append(str(error))
        else:
            report.errors.append(str(error))


async def _tools(report: PackageReport, package: AssistantPackage, env: Mapping[str, str]) -> None:
    from agentcli.assistant.data import DATABASE_URL_VARIABLE
    from agentcli.assistant.mcps import server_file_problems

    unloadable = server_file_problems(package.path, env=env)
    if unloadable:  # each server file's problem; its tools are checked once they all load
        report.errors += [str(error) for error in unloadable]
        return

    # Process tools resolve every Process name, a data model's method too: the package's
    # models are registered in a throw-away database for it, never the user's.
    from agentcli.assistant.data.schema import load_models
    from agentcli.assistant.process import Processes
    from agentcli.assistant.session import AssistantRegistry
    from agentcli.assistant.state import StateDir
    from agentcli.assistant.tools import ToolBox

    state = StateDir.fresh()
    scratch = {key: value for key, value in env.items() if key != DATABASE_URL_VARIABLE}
    registry = AssistantRegistry(package.root, cwd=package.path, state=state, env=scratch)
    try:
        specs = load_models(package.path, package.id)
        if specs:
            registry.data.register(specs)
        box = ToolBox.for_package(package, env=env)
        box.processes = Processes(package, registry)
        await _check_tools(report, package, box)
    finally:
        await registry.aclose()
        state.remove()


async def _check_tools(report: PackageReport, package: AssistantPackage, box: ToolBox) -> None:
    """The process servers' tools, resources and prompts resolve (each error reported)."""
    from agentcli.assistant.tools import check_src_function

    for spec in box.specs.values():
        report.warnings += spec.warnings
        if spec.transport != "process":
            continue
        try:
            await box.list_tools(spec.id)
            for named in [*spec.resources.values(), *spec.prompts.values()]:
                check_src_function(spec.src_dir or package.path / "src", named, path=spec.path)
        except AgentCliError as error:
            report.errors.append(str(error))
            continue
        for tool in sorted(set(spec.schemas) - set(spec.tools)):
            report.warnings.append(
                f"{spec.schema_paths[tool]}: schema for a tool server {spec.id!r} does not define"
            )
    for ref in box.selection or []:
        spec = box.specs[ref.server_id]
        if spec.transport == "process" and ref.tools is not None:
            missing = [name for name in ref.tools if name not in spec.tools]
            if missing:
                report.errors.append(
                    f"{package.file}: mcp.servers selects {', '.join(missing)} from "
                    f"{spec.id!r}, which has {', '.join(sorted(spec.tools))}"
                )

"""Assistant packages on disk: ``package.yao`` loading and validation, ids, roots, ``$ENV``.

A package is a folder holding ``package.yao`` (else ``package.json``, else
``package.jsonc``), checked against the shipped ``package.schema.json``. Its id is the path below the nearest ``assistants/`` folder with ``/``
replaced by ``.``. This module only reads and validates; prompts, locales, hooks and tools
live in their own modules and take the :class:`AssistantPackage` returned here.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.assistant.jsonc import parse_jsonc, read_text
from agentcli.datafiles import load_yaml
from agentcli.errors import ConfigError, PackageError, UnknownAssistantError
from agentcli.jsonsafe import expected_words, json_type_words
from agentcli.schemas import ShippedSchema
from agentcli.words import counted

if TYPE_CHECKING:
    from agentcli.assistant.sandbox.spec import SandboxSpec
    from agentcli.assistant.search.spec import SearchConfig
    from agentcli.runtime.agent import ToolExecution

__all__ = [
    "PACKAGE_FILES",
    "PACKAGE_SCHEMA",
    "SCHEMA_PATH",
    "AssistantPackage",
    "McpServerRef",
    "NearMiss",
    "SchemaProblems",
    "assistant_id",
    "find_assistants_root",
    "find_package_dir",
    "iter_packages",
    "load_package",
    "package_file",
    "read_yaml",
    "resolve_assistant",
    "substitute_env",
]

PACKAGE_FILES = ("package.yao", "package.json", "package.jsonc")

# Folders inside a package that hold its parts, never nested packages.
_PACKAGE_PARTS = frozenset({"src", "tests", "mcps", "locales", "prompts", "assets"})
_SKIPPED_ANYWHERE = frozenset({"__pycache__", "node_modules"})

_ENV_REF = re.compile(r"\$ENV\.([A-Za-z_][A-Za-z0-9_]*)")


@dataclass(slots=True)
class McpServerRef:
    """One entry of ``mcp.servers``: a server id, optionally limited to some tools/resources."""

    server_id: str
    tools: list[str] | None = None
    resources: list[str] | None = None


@dataclass(frozen=True, slots=True)
class NearMiss:
    """An unknown field of the package file that looks like a known one misspelt
    (``max_step`` for ``max_steps``): kept and not used, so every command that loads the
    package says so (a Yao extension, far from every known name, is not one)."""

    file: Path
    line: int | None
    key: str
    meant: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else str(self.file)
        return f"{where}: unknown field '{self.key}' (did you mean '{self.meant}'?); it is not used"


@dataclass(slots=True)
class AssistantPackage:
    """A validated ``package.yao`` with its id and location."""

    id: str
    path: Path
    name: str
    file: Path
    root: Path | None = None
    description: str = ""
    type: str = "assistant"
    avatar: str | None = None
    connector: str | None = None
    connector_options: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    placeholder: dict[str, Any] | None = None
    tags: list[str] = field(default_factory=list)
    sort: int = 0
    public: bool = False
    share: str = "private"
    readonly: bool = False
    built_in: bool = False
    mentionable: bool = False
    automated: bool = False
    modes: list[str] = field(default_factory=list)
    default_mode: str | None = None
    disable_global_prompts: bool = False
    max_steps: int | None = None  # None: the runtime's default (20)
    tool_execution: ToolExecution = "parallel"
    mcp: list[McpServerRef] = field(default_factory=list)
    uses: dict[str, Any] = field(default_factory=dict)
    search: dict[str, Any] = field(default_factory=dict)
    kb: dict[str, Any] | None = None
    db: dict[str, Any] | None = None
    sandbox: SandboxSpec | None = None  # ctx.sandbox for every request (None: no sandbox)
    # kb, db, search and uses read as one (None: the package uses none of them)
    search_config: SearchConfig | None = None
    raw: dict[str, Any] = field(default_factory=dict)
    unknown_fields: list[str] = field(default_factory=list)
    # the near misses among unknown_fields; warnings holds them too, as text
    near_misses: list[NearMiss] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------------- $ENV


def substitute_env(
    data: Any,
    *,
    path: str,
    env: Mapping[str, str] | None = None,
    required: tuple[str, ...] = (),
    warnings: list[str] | None = None,
) -> Any:
    """Replace ``$ENV.NAME`` in every string of ``data`` (a copy is returned).

    For a dotted field listed in ``required`` an unset or empty variable is a PackageError;
    elsewhere an unset one becomes ``""`` and a warning is appended to ``warnings``.
    """
    env = os.environ if env is None else env

    def text(value: str, field_name: str) -> str:
        def replace(match: re.Match[str]) -> str:
            name = match.group(1)
            found = env.get(name)
            if field_name in required and not found:
                state = "not set" if found is None else "empty"
                raise PackageError(
                    f"environment variable {name} is {state} (used by field '{field_name}')",
                    path=path,
                    hint=f"export {name}=... or put the value in the file",
                )
            if found is None and warnings is not None:
                warnings.append(
                    f"{path}: $ENV.{name} is not set (field '{field_name}'); using an empty string"
                )
            return found or ""

        return _ENV_REF.sub(replace, value) if "$ENV." in value else value

    def walk(value: Any, field_name: str) -> Any:
        if isinstance(value, str):
            return text(value, field_name)
        if isinstance(value, dict):
            prefix = f"{field_name}." if field_name else ""
            return {key: walk(item, f"{prefix}{key}") for key, item in value.items()}
        if isinstance(value, list):
            return [walk(item, f"{field_name}.{index}") for index, item in enumerate(value)]
        return value

    return walk(data, "")


# ---------------------------------------------------------------------------- YAML


_yaml_cache: dict[Path, tuple[tuple[int, int], Any]] = {}


def read_yaml(path: Path) -> Any:
    """Parse a YAML file, cached by modification time and size; treat the result as read-only."""
    try:
        stat = path.stat()
    except OSError as exc:
        raise PackageError(f"cannot read file: {exc.strerror}", path=str(path)) from None
    key = (stat.st_mtime_ns, stat.st_size)
    cached = _yaml_cache.get(path)
    if cached is not None and cached[0] == key:
        return cached[1]
    value = load_yaml(read_text(path), path)
    _yaml_cache[path] = (key, value)
    return value


# ---------------------------------------------------------------------------- validation

SCHEMA_PATH = Path(__file__).with_name("package.schema.json")
PACKAGE_SCHEMA = ShippedSchema(SCHEMA_PATH)

# A typo of a known field is told apart from a Yao extension by how close it is.
_SUGGEST_CUTOFF = 0.8


class SchemaProblems:
    """Turns the schema errors of one JSON(C) file (a package file by default; a ``--ctx``
    file too) into PackageErrors with the field's name, its line and what to do."""

    def __init__(self, file: Path, text: str, schema: ShippedSchema | None = None) -> None:
        self.file = file
        self.text = text
        self.schema = schema or PACKAGE_SCHEMA
        self._lines: dict[tuple[str, ...], int] | None = None

    def fail(self, field_name: str, message: str, hint: str | None = None) -> PackageError:
        """A PackageError for ``field_name``, with its line when the key occurs only once."""
        return PackageError(
            f"field '{field_name}' {message}",
            path=str(self.file),
            line=self.line(field_name),
            hint=hint,
        )

    def line(self, field_name: str) -> int | None:
        """The line of ``field_name`` (``search.web.provider``, ``mcp.0.server_id``), else of
        its nearest enclosing field in the file (a missing key: the object that lacks it);
        None for a problem of the whole file. The text is walked only when an error or a
        warning needs a line."""
        if self._lines is None:
            from agentcli.assistant.data.positions import value_lines

            found = value_lines(self.text)
            self._lines = {tuple(str(part) for part in path): line for path, line in found.items()}
        parts = tuple(field_name.split(".")) if field_name else ()
        while parts:
            if parts in self._lines:
                return self._lines[parts]
            parts = parts[:-1]
        return None

    def first(self, data: dict[str, Any]) -> PackageError | None:
        """The error of the first field (in file order) that breaks the schema, or None."""
        if self.schema.conforms(data):
            return None
        found = self.every(data)
        return found[0][1] if found else None

    def every(self, data: dict[str, Any]) -> list[tuple[str, PackageError]]:
        """Each field that breaks the schema (nested ones too: ``options.max_tokens``), in
        file order, with its top-level key (``""`` for a problem of the whole object, such
        as a missing ``name``): by top-level key, then line, a field before its parts."""
        order = {key: index for index, key in enumerate(data)}
        found: dict[str, tuple[tuple[int, int, int], str, PackageError]] = {}
        for error in self.schema.errors(data):
            path = error.absolute_path
            top = str(path[0]) if path else ""
            rank = order.get(path[0], -1) if path else -1
            if error.validator == "additionalProperties":  # one problem per unknown key
                named = self.unknown(error)
            else:
                named = [(".".join(str(part) for part in path), self.explain(error))]
            for field_name, problem in named:
                place = (rank, problem.line or 0, field_name.count(".") + bool(field_name))
                # one problem per field is enough (a field may break several keywords)
                if field_name not in found or place < found[field_name][0]:
                    found[field_name] = (place, top, problem)
        ranked = sorted(found.values(), key=lambda item: item[0])
        return [(top, problem) for _place, top, problem in ranked]

    def unknown(self, error: Any) -> list[tuple[str, PackageError]]:
        """An error for each key of an object that takes only the keys it knows (``search``
        and its parts): a misspelt setting there would otherwise be silently ignored."""
        parent = ".".join(str(part) for part in error.absolute_path)
        known = list(error.schema.get("properties", {}))
        problems = []
        for key in error.instance:
            if key in known:
                continue
            field_name = f"{parent}.{key}" if parent else str(key)
            close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.6)
            also = f" (did you mean '{close[0]}'?)" if close else ""
            problem = PackageError(
                f"unknown field '{field_name}'{also}",
                path=str(self.file),
                line=self.line(field_name),
                hint=f"the fields of {parent or self.file.name}: {', '.join(known)}",
            )
            problems.append((field_name, problem))
        return problems

    def explain(self, error: Any) -> PackageError:
        """The PackageError for one jsonschema error."""
        name = ".".join(str(part) for part in error.absolute_path)
        kind, schema, instance = error.validator, error.schema, error.instance
        if kind == "required":
            key = next(k for k in error.validator_value if k not in instance)
            wanted = schema["properties"][key]
            examples = wanted.get("examples") or schema.get("examples")
            if not name:
                hint = f'add "{key}": {json.dumps(examples[0])}' if examples else None
                return PackageError(
                    f"missing required field '{key}'", path=str(self.file), hint=hint
                )
            hint = f"e.g. {json.dumps(examples[0])}" if examples else None
            return self.fail(name, f"needs a '{key}' {wanted['type']}", hint)
        if kind == "type":
            return self.fail(name, f"must be {_expected(schema)}, got {json_type_words(instance)}")
        if kind == "minLength":
            return self.fail(name, "must not be empty")
        if kind == "minimum":
            return self.fail(name, f"must be at least {error.validator_value}, got {instance}")
        if kind == "maximum":
            return self.fail(name, f"must be at most {error.validator_value}, got {instance}")
        if kind == "additionalProperties":
            return self.unknown(error)[0][1]
        if kind == "enum":
            choices = ", ".join(str(c) for c in error.validator_value if c is not None)
            return self.fail(name, f"must be one of {choices}, got {json.dumps(instance)}")
        return self.fail(name, str(error.message))


def _expected(schema: dict[str, Any]) -> str:
    """What a field must be, in words: ``an array of strings``, ``true or false`` (null,
    which means "not set", is not mentioned)."""
    types = [schema["type"]] if isinstance(schema["type"], str) else schema["type"]
    items = schema.get("items", {}).get("type")
    return " or ".join(
        f"an array of {items}s"
        if name == "array" and isinstance(items, str)
        else expected_words(name)
        for name in types
        if name != "null"
    )


def _values(data: dict[str, Any]) -> dict[str, Any]:
    """The package's fields from schema-valid ``data`` (null fields left out) as the
    dataclass holds them: integers as ints, shorthands expanded. ``data`` is already a
    copy of the file's value (``substitute_env`` builds new containers)."""
    known = PACKAGE_SCHEMA.schema["properties"]
    values = {key: value for key, value in data.items() if key in known and value is not None}
    for key in ("sort", "max_steps"):
        if key in values:
            values[key] = int(values[key])  # 1.0 is an integer to JSON Schema
    options = values.get("options", {})
    for key in ("max_tokens", "max_completion_tokens"):
        if options.get(key) is not None:
            options[key] = int(options[key])
    if isinstance(values.get("tags"), str):  # Yao accepts a single tag as a plain string
        values["tags"] = [values["tags"]]
    if "mcp" in values:
        values["mcp"] = _mcp(values["mcp"])
    for key, ids in (("kb", "collections"), ("db", "models")):
        if isinstance(values.get(key), list):  # the id list alone
            values[key] = {ids: values[key]}
    return values


def _sandbox(raw: dict[str, Any], file: Path, problems: SchemaProblems) -> SandboxSpec:
    """``sandbox``: what every request's workspace is (backend, timeout, network, tools)."""
    from agentcli.assistant.sandbox.spec import parse_spec, spec_problems

    found = spec_problems(raw)
    if found:
        raise PackageError("; ".join(found), path=str(file), line=problems.line("sandbox"))
    return parse_spec(raw)


def _search(values: dict[str, Any], path: Path, problems: SchemaProblems) -> SearchConfig:
    """``kb``, ``db``, ``search`` and ``uses``: what ctx.search and the automatic search use."""
    from agentcli.assistant.search.spec import parse_search

    config, found = parse_search(values, path)
    if found:
        field_name, message = found[0]
        raise problems.fail(field_name, message)
    return config


def _mcp(value: dict[str, Any] | list[Any]) -> list[McpServerRef]:
    """``mcp``: ``{"servers": [...]}`` or the list itself; an entry is an id or an object."""
    servers = value if isinstance(value, list) else value.get("servers", [])
    refs = []
    for entry in servers:
        if isinstance(entry, str):
            refs.append(McpServerRef(server_id=entry))
            continue
        refs.append(
            McpServerRef(
                entry["server_id"], tools=entry.get("tools"), resources=entry.get("resources")
            )
        )
    return refs


def _is_bookkeeping(key: str) -> bool:
    """Keys editors and Yao add that are neither used nor worth a warning."""
    return key == "$schema" or key.startswith("__yao_")


def _near_misses(file: Path, problems: SchemaProblems, unknown: list[str]) -> list[NearMiss]:
    """Each unknown field that looks like a known one misspelt."""
    known = list(PACKAGE_SCHEMA.schema["properties"])
    found = []
    for key in unknown:
        close = difflib.get_close_matches(key, known, n=1, cutoff=_SUGGEST_CUTOFF)
        if close:
            found.append(NearMiss(file, problems.line(key), key, close[0]))
    return found


# ---------------------------------------------------------------------------- loading


def package_file(folder: Path) -> Path | None:
    """The package file of ``folder`` (package.yao, else .json, else .jsonc), or None."""
    for name in PACKAGE_FILES:
        candidate = folder / name
        if candidate.is_file():
            return candidate
    return None


def load_package(
    path: Path,
    *,
    root: Path | None = None,
    env: Mapping[str, str] | None = None,
    problems_out: list[PackageError] | None = None,
) -> AssistantPackage:
    """Load and validate the package in folder ``path`` (its id is computed against ``root``).

    With ``problems_out`` (``agent list --check``) every field that breaks the schema is
    appended to it instead of raising the first, and the package is loaded without those
    fields, so the checks of its other files can still run."""
    path = Path(path).absolute()
    if path.is_file() and path.name in PACKAGE_FILES:
        path = path.parent
    file = package_file(path)
    if file is None:
        where = "folder" if path.is_dir() else "path (it does not exist)"
        raise PackageError(
            f"no package.yao in {where} {path}",
            hint="an assistant package is a folder with a package.yao file",
        )
    text = read_text(file)
    raw = parse_jsonc(text, path=str(file))
    if not isinstance(raw, dict):
        raise PackageError(
            f"must contain a JSON object, got {json_type_words(raw)}",
            path=str(file),
            hint='start from {"name": "My assistant", "connector": "echo"}',
        )
    warnings: list[str] = []
    data = substitute_env(raw, path=str(file), env=env, required=("connector",), warnings=warnings)

    problems = SchemaProblems(file, text)
    # null means "not set": a null name is a missing one
    present = {key: value for key, value in data.items() if value is not None}
    if problems_out is None:
        error = problems.first(present)
        if error is not None:
            raise error
    else:
        broken = problems.every(present)
        problems_out.extend(error for _key, error in broken)
        data = {key: value for key, value in present.items() if key not in dict(broken)}
        if not isinstance(data.get("name"), str) or not data["name"].strip():
            data["name"] = path.name  # a stand-in, so the other files can be checked
    values = _values(data)
    if "sandbox" in values:
        values["sandbox"] = _sandbox(values["sandbox"], file, problems)
    if any(key in values for key in ("kb", "db", "search", "uses")):
        values["search_config"] = _search(values, path, problems)
    if not values["name"].strip():
        raise problems.fail("name", "must not be empty")
    if values.get("connector") == "":
        del values["connector"]
    modes = values.get("modes")
    if modes and values.get("default_mode") and values["default_mode"] not in modes:
        warnings.append(
            f"{file}: default_mode '{values['default_mode']}' is not one of modes {modes}"
        )
    known = PACKAGE_SCHEMA.schema["properties"]
    unknown = [key for key in data if key not in known and not _is_bookkeeping(key)]
    near_misses = _near_misses(file, problems, unknown)
    warnings += [str(miss) for miss in near_misses]

    package_root = _package_root(path, root)
    return AssistantPackage(
        id=assistant_id(path, package_root),
        path=path,
        file=file,
        root=package_root,
        raw=raw,
        unknown_fields=unknown,
        near_misses=near_misses,
        warnings=warnings,
        **values,
    )


# ---------------------------------------------------------------------------- ids and roots


def _relative(path: Path, root: Path) -> Path | None:
    """``path`` relative to ``root`` (trying symlink-resolved forms too), or None."""
    for a, b in ((path, root), (path.resolve(), root.resolve())):
        try:
            return a.relative_to(b)
        except ValueError:
            continue
    return None


def _package_root(path: Path, root: Path | None) -> Path | None:
    """The assistants root a package belongs to: ``root`` if it contains it, else its
    nearest ``assistants/`` ancestor."""
    if root is not None and _relative(path, Path(root).absolute()) is not None:
        return Path(root).absolute()
    for parent in path.parents:
        if parent.name == "assistants":
            return parent
    return None


def assistant_id(path: Path, root: Path | None = None) -> str:
    """The id of the package at ``path``: its path below ``root`` (or the nearest
    ``assistants/`` folder) with ``/`` -> ``.``; else the folder name."""
    path = Path(path).absolute()
    if root is not None:
        relative = _relative(path, Path(root).absolute())
        if relative is not None and relative.parts:
            return ".".join(relative.parts)
    parts = path.parts
    for index in range(len(parts) - 2, -1, -1):
        if parts[index] == "assistants":
            return ".".join(parts[index + 1 :])
    return path.name


def find_assistants_root(
    cwd: Path | None = None, explicit: Path | str | None = None
) -> Path | None:
    """The assistants root: ``explicit`` (--root), else ``$AGENT_ROOT``, else ``./assistants``,
    else the first ``assistants/`` folder found walking up from ``cwd``; None if none."""
    cwd = Path(cwd) if cwd is not None else Path.cwd()
    for value, source in ((explicit, "--root"), (os.environ.get("AGENT_ROOT"), "AGENT_ROOT")):
        if value is None or value == "":
            continue
        candidate = (cwd / Path(value).expanduser()).absolute()
        if not candidate.is_dir():
            raise ConfigError(
                f"{source} {value!s} is not a directory",
                hint="point it at the folder that holds your assistant packages",
            )
        return candidate
    for folder in (cwd, *cwd.absolute().parents):
        candidate = folder / "assistants"
        if candidate.is_dir():
            return candidate.absolute()
    return None


def iter_packages(root: Path) -> Iterator[Path]:
    """Every package folder under ``root`` (sorted), not looking inside a package's
    src/tests/mcps/locales/prompts/assets folders or into hidden folders."""
    root = Path(root)
    for folder, dirnames, _files in os.walk(root):
        current = Path(folder)
        is_package = package_file(current) is not None
        dirnames[:] = sorted(
            name
            for name in dirnames
            if not name.startswith(".")
            and name not in _SKIPPED_ANYWHERE
            and not (is_package and name in _PACKAGE_PARTS)
        )
        if is_package:
            yield current


def find_package_dir(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` (a file or folder) holding a package file."""
    start = Path(start).absolute()
    folder = start if start.is_dir() else start.parent
    for candidate in (folder, *folder.parents):
        if package_file(candidate) is not None:
            return candidate
    return None


def _looks_like_path(ref: str) -> bool:
    """Whether an assistant reference is a filesystem path rather than a dotted id."""
    return "/" in ref or os.sep in ref or ref in (".", "..") or ref.startswith("~")


def resolve_assistant(
    ref: str, *, root: Path | str | None = None, cwd: Path | None = None
) -> AssistantPackage:
    """Load the assistant named by ``ref``: an id resolved against the assistants root, or a
    path to a package folder (absolute or relative to ``cwd``)."""
    cwd = Path(cwd) if cwd is not None else Path.cwd()
    ref = ref.strip()
    if not ref:
        raise UnknownAssistantError("empty assistant reference", hint="give an id or a path")
    assistants_root = find_assistants_root(cwd=cwd, explicit=root)

    if _looks_like_path(ref):
        candidate = (cwd / Path(ref).expanduser()).absolute()
        if package_file(candidate) is not None or (
            candidate.is_file() and candidate.name in PACKAGE_FILES
        ):
            return load_package(candidate, root=assistants_root)
        if assistants_root is not None and not Path(ref).is_absolute():
            below_root = assistants_root / ref
            if package_file(below_root) is not None:
                return load_package(below_root, root=assistants_root)
        if candidate.is_dir():
            raise PackageError(
                f"no package.yao in folder {candidate}",
                hint="an assistant package is a folder with a package.yao file",
            )
        raise UnknownAssistantError(f"no assistant at path {ref} ({candidate} does not exist)")

    if assistants_root is not None:
        direct = assistants_root.joinpath(*ref.split("."))
        if package_file(direct) is not None:
            return load_package(direct, root=assistants_root)
        head, _, rest = ref.partition(".")
        if rest and head in ("assistants", assistants_root.name):
            # the seed's literal form: `assistants.expense` names the root's `expense`
            return resolve_assistant(rest, root=assistants_root, cwd=cwd)
        known = {assistant_id(p, assistants_root): p for p in iter_packages(assistants_root)}
        if ref in known:
            return load_package(known[ref], root=assistants_root)
    else:
        known = {}
    if package_file(cwd / ref) is not None:
        return load_package(cwd / ref, root=assistants_root)
    shipped = _builtin_package(ref)
    if shipped is not None:
        return shipped
    raise _unknown(ref, assistants_root, sorted(known))


def _builtin_package(ref: str) -> AssistantPackage | None:
    """A helper shipped with agentcli (``builtin.simulator``), found from any project once
    the project has no package of that id."""
    from agentcli.builtin import PACKAGES_ROOT, builtin_dir

    folder = builtin_dir(ref)
    if folder is None or package_file(folder) is None:
        return None
    return load_package(folder, root=PACKAGES_ROOT)


def _unknown(ref: str, root: Path | None, known: list[str]) -> UnknownAssistantError:
    """The error for an id that matches no package, with suggestions."""
    if ref.startswith("builtin."):
        from agentcli.builtin import BUILTIN_NAMES

        shipped = ", ".join(f"builtin.{name}" for name in BUILTIN_NAMES)
        return UnknownAssistantError(
            f"unknown assistant '{ref}'", hint=f"the helpers shipped with agentcli: {shipped}"
        )
    if root is None:
        return UnknownAssistantError(
            f"unknown assistant '{ref}': no assistants root found",
            hint="pass --root DIR or set AGENT_ROOT, run from a folder that contains "
            "assistants/, or give the path of the package folder",
        )
    by_suffix = [i for i in known if i.endswith("." + ref)]
    close = difflib.get_close_matches(ref, known, n=3, cutoff=0.6)
    suggestions = list(dict.fromkeys(by_suffix + close))[:5]
    if suggestions:
        hint = f"did you mean {', '.join(suggestions)}? (searched {root})"
    elif known:
        hint = f"{counted(len(known), 'assistant')} under {root}; none is close to '{ref}'"
    else:
        hint = f"no assistant packages found under {root}"
    return UnknownAssistantError(f"unknown assistant '{ref}'", hint=hint)

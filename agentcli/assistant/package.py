"""Assistant packages on disk: ``package.yao`` loading and validation, ids, roots, ``$ENV``.

A package is a folder holding ``package.yao`` (else ``package.json``, else
``package.jsonc``). Its id is the path below the nearest ``assistants/`` folder with ``/``
replaced by ``.``. This module only reads and validates; prompts, locales, hooks and tools
live in their own modules and take the :class:`AssistantPackage` returned here.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentcli.assistant.jsonc import parse_jsonc, read_text
from agentcli.datafiles import load_yaml
from agentcli.errors import ConfigError, PackageError, UnknownAssistantError

__all__ = [
    "PACKAGE_FILES",
    "AssistantPackage",
    "McpServerRef",
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
    mcp: list[McpServerRef] = field(default_factory=list)
    uses: dict[str, Any] = field(default_factory=dict)
    search: dict[str, Any] = field(default_factory=dict)
    kb: dict[str, Any] | None = None
    db: dict[str, Any] | None = None
    raw: dict[str, Any] = field(default_factory=dict)
    unknown_fields: list[str] = field(default_factory=list)
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


def _json_type(value: Any) -> str:
    """The JSON name of a Python value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


class _Validator:
    """Type checks for one package file, producing errors that name the file and field."""

    def __init__(self, file: Path, text: str) -> None:
        self.file = file
        self.text = text

    def fail(self, field_name: str, message: str, hint: str | None = None) -> PackageError:
        """A PackageError for ``field_name``, with its line when the key occurs only once."""
        key = field_name.rsplit(".", 1)[-1]
        occurrences = [m.start() for m in re.finditer(rf'"{re.escape(key)}"\s*:', self.text)]
        line = self.text.count("\n", 0, occurrences[0]) + 1 if len(occurrences) == 1 else None
        return PackageError(
            f"field '{field_name}' {message}", path=str(self.file), line=line, hint=hint
        )

    def string(self, value: Any, name: str) -> str:
        """A string field."""
        if not isinstance(value, str):
            raise self.fail(name, f"must be a string, got {_json_type(value)}")
        return value

    def boolean(self, value: Any, name: str) -> bool:
        """A boolean field."""
        if not isinstance(value, bool):
            raise self.fail(name, f"must be true or false, got {_json_type(value)}")
        return value

    def integer(self, value: Any, name: str) -> int:
        """An integer field (an integral float such as 1.0 is accepted)."""
        if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
            raise self.fail(name, f"must be an integer, got {_json_type(value)}")
        return int(value)

    def number(self, value: Any, name: str) -> float | int:
        """A numeric field."""
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(name, f"must be a number, got {_json_type(value)}")
        return value

    def obj(self, value: Any, name: str) -> dict[str, Any]:
        """An object field."""
        if not isinstance(value, dict):
            raise self.fail(name, f"must be an object, got {_json_type(value)}")
        return value

    def strings(self, value: Any, name: str) -> list[str]:
        """An array-of-strings field."""
        if not isinstance(value, list):
            raise self.fail(name, f"must be an array of strings, got {_json_type(value)}")
        for index, item in enumerate(value):
            self.string(item, f"{name}.{index}")
        return list(value)


def _connector_options(v: _Validator, value: Any) -> dict[str, Any]:
    options = dict(v.obj(value, "connector_options"))
    for key, check in (("optional", v.boolean), ("connectors", v.strings), ("filters", v.strings)):
        if options.get(key) is not None:
            options[key] = check(options[key], f"connector_options.{key}")
    return options


def _options(v: _Validator, value: Any) -> dict[str, Any]:
    options = dict(v.obj(value, "options"))
    for key in ("temperature", "top_p", "presence_penalty", "frequency_penalty"):
        if options.get(key) is not None:
            v.number(options[key], f"options.{key}")
    for key in ("max_tokens", "max_completion_tokens"):
        if options.get(key) is not None:
            options[key] = v.integer(options[key], f"options.{key}")
    return options


def _placeholder(v: _Validator, value: Any) -> dict[str, Any]:
    placeholder = dict(v.obj(value, "placeholder"))
    for key in ("title", "description"):
        if placeholder.get(key) is not None:
            v.string(placeholder[key], f"placeholder.{key}")
    if placeholder.get("prompts") is not None:
        placeholder["prompts"] = v.strings(placeholder["prompts"], "placeholder.prompts")
    return placeholder


def _tags(v: _Validator, value: Any) -> list[str]:
    # Yao accepts a single tag as a plain string.
    return [value] if isinstance(value, str) else v.strings(value, "tags")


def _mcp(v: _Validator, value: Any) -> list[McpServerRef]:
    # ``{"servers": [...]}``, or the list itself.
    servers = value if isinstance(value, list) else v.obj(value, "mcp").get("servers", [])
    if not isinstance(servers, list):
        raise v.fail("mcp.servers", f"must be an array, got {_json_type(servers)}")
    refs = []
    for index, entry in enumerate(servers):
        name = f"mcp.servers.{index}"
        if isinstance(entry, str):
            refs.append(McpServerRef(server_id=entry))
            continue
        entry = v.obj(entry, name)
        server_id = entry.get("server_id")
        if not isinstance(server_id, str) or not server_id:
            raise v.fail(
                name,
                "needs a 'server_id' string",
                hint='e.g. {"server_id": "tools", "tools": ["search"]}',
            )
        tools, resources = (
            None if entry.get(key) is None else v.strings(entry[key], f"{name}.{key}")
            for key in ("tools", "resources")
        )
        refs.append(McpServerRef(server_id=server_id, tools=tools, resources=resources))
    return refs


def _collection(v: _Validator, value: Any, key: str) -> dict[str, Any]:
    """``kb``/``db``: an object, or an array shorthand for its id list."""
    if isinstance(value, list):
        return {"collections" if key == "kb" else "models": v.strings(value, key)}
    return dict(v.obj(value, key))


# Fields checked by one _Validator method, by method name.
_SIMPLE_FIELDS = {
    name: method
    for method, names in (
        ("string", ("name", "type", "avatar", "description", "connector", "share", "default_mode")),
        ("boolean", ("public", "readonly", "built_in", "mentionable", "automated")),
        ("boolean", ("disable_global_prompts",)),
        ("integer", ("sort",)),
        ("strings", ("modes",)),
        ("obj", ("uses", "search")),
    )
    for name in names
}
_COMPOUND_FIELDS = {
    "connector_options": _connector_options,
    "options": _options,
    "placeholder": _placeholder,
    "tags": _tags,
    "mcp": _mcp,
    "kb": lambda v, value: _collection(v, value, "kb"),
    "db": lambda v, value: _collection(v, value, "db"),
}


def _check_field(v: _Validator, key: str, value: Any) -> Any:
    """The validated value of known field ``key`` (a copy for objects)."""
    if key in _SIMPLE_FIELDS:
        checked = getattr(v, _SIMPLE_FIELDS[key])(value, key)
        return dict(checked) if isinstance(checked, dict) else checked
    return _COMPOUND_FIELDS[key](v, value)


def _is_bookkeeping(key: str) -> bool:
    """Keys editors and Yao add that are neither used nor worth a warning."""
    return key == "$schema" or key.startswith("__yao_")


# ---------------------------------------------------------------------------- loading


def package_file(folder: Path) -> Path | None:
    """The package file of ``folder`` (package.yao, else .json, else .jsonc), or None."""
    for name in PACKAGE_FILES:
        candidate = folder / name
        if candidate.is_file():
            return candidate
    return None


def load_package(
    path: Path, *, root: Path | None = None, env: Mapping[str, str] | None = None
) -> AssistantPackage:
    """Load and validate the package in folder ``path`` (its id is computed against ``root``)."""
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
            f"must contain a JSON object, got {_json_type(raw)}",
            path=str(file),
            hint='start from {"name": "My assistant", "connector": "echo"}',
        )
    warnings: list[str] = []
    data = substitute_env(raw, path=str(file), env=env, required=("connector",), warnings=warnings)

    validator = _Validator(file, text)
    if data.get("name") is None:
        raise PackageError(
            "missing required field 'name'", path=str(file), hint='add "name": "My assistant"'
        )
    values: dict[str, Any] = {}
    unknown: list[str] = []
    for key, value in data.items():
        if key not in _SIMPLE_FIELDS and key not in _COMPOUND_FIELDS:
            if not _is_bookkeeping(key):
                unknown.append(key)
        elif value is not None:
            values[key] = _check_field(validator, key, value)
    if not values["name"].strip():
        raise validator.fail("name", "must not be empty")
    if values.get("connector") == "":
        del values["connector"]
    modes = values.get("modes")
    if modes and values.get("default_mode") and values["default_mode"] not in modes:
        warnings.append(
            f"{file}: default_mode '{values['default_mode']}' is not one of modes {modes}"
        )

    package_root = _package_root(path, root)
    return AssistantPackage(
        id=assistant_id(path, package_root),
        path=path,
        file=file,
        root=package_root,
        raw=raw,
        unknown_fields=unknown,
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
        known = {assistant_id(p, assistants_root): p for p in iter_packages(assistants_root)}
        if ref in known:
            return load_package(known[ref], root=assistants_root)
    else:
        known = {}
    if package_file(cwd / ref) is not None:
        return load_package(cwd / ref, root=assistants_root)
    raise _unknown(ref, assistants_root, sorted(known))


def _unknown(ref: str, root: Path | None, known: list[str]) -> UnknownAssistantError:
    """The error for an id that matches no package, with suggestions."""
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
        hint = f"{len(known)} assistants under {root}; none is close to '{ref}'"
    else:
        hint = f"no assistant packages found under {root}"
    return UnknownAssistantError(f"unknown assistant '{ref}'", hint=hint)

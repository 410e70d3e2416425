"""Prompts of an assistant package: prompts.yml, presets, ``@assets`` and request-time variables.

Message lists are plain OpenAI-style dicts ``{"role", "content", "name"?}``. Parsed YAML is
cached per file (keyed on mtime and size, see :func:`read_yaml`), so selecting and rendering
prompts on every request costs a few ``stat`` calls and a regex pass.

Variables (:func:`render_variables`) are a single regex pass, not a template engine, so a value
that itself contains ``$ENV.X`` or ``$CTX.X`` is never expanded again:

- ``$SYS.TIME DATE DATETIME TIMEZONE WEEKDAY YEAR MONTH DAY HOUR MINUTE SECOND UNIX``; an
  unknown ``$SYS.X`` is left as written.
- ``$ENV.X`` is the environment variable, ``""`` when unset. A variable whose name contains
  KEY, TOKEN, SECRET or PASSWORD is never put into a prompt (prompts reach the provider and
  the reports): it becomes ``""`` and a warning is recorded.
- ``$CTX.X`` looks ``X`` up in the context variables, first exactly as written, then
  case-insensitively (``$CTX.USER_TIER`` finds metadata key ``user_tier``); unknown -> ``""``.
  Names are letters, digits and ``_``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from agentcli.assistant.package import AssistantPackage, read_yaml
from agentcli.datafiles import line_of, read_yaml_lines
from agentcli.errors import PackageError

__all__ = [
    "ROLES",
    "SECRET_MARKERS",
    "context_variables",
    "global_prompts",
    "load_presets",
    "load_prompts",
    "render_prompts",
    "render_variables",
    "select_prompts",
    "truthy",
]

ROLES = ("system", "user", "assistant", "developer")
SECRET_MARKERS = ("KEY", "TOKEN", "SECRET", "PASSWORD")

_PROMPT_KEYS = ("role", "content", "name")
_YAML_SUFFIXES = (".yml", ".yaml")
_ASSET_REF = re.compile(r"(?<![\w@/])@assets/([\w.\-/]*[\w\-])")
_VARIABLE = re.compile(r"\$(SYS|ENV|CTX)\.([A-Za-z_][A-Za-z0-9_]*)")
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


# ---------------------------------------------------------------------------- files


def _yaml_file(base: Path) -> Path | None:
    """``base`` + .yml, else + .yaml, if such a file exists."""
    for suffix in _YAML_SUFFIXES:
        candidate = base.with_name(base.name + suffix)
        if candidate.is_file():
            return candidate
    return None


def _node_line(file: Path, index: int, key: str | None = None) -> int | None:
    """The 1-based line of list item ``index`` (or of its ``key``) in a YAML file."""
    try:
        _data, lines = read_yaml_lines(file)
    except PackageError:
        return None
    if (index,) not in lines:
        return None
    return line_of(lines, (index, key) if key is not None else (index,))


def _item_error(file: Path, index: int, message: str, key: str | None = None) -> PackageError:
    """An error about prompt ``index`` of ``file``, located at the item (or its ``key``)."""
    return PackageError(
        f"prompt {index + 1}: {message}", path=str(file), line=_node_line(file, index, key)
    )


def _messages(data: Any, file: Path) -> list[dict[str, str]]:
    """Validate a parsed prompts file and return fresh message dicts."""
    if data is None:
        return []
    if not isinstance(data, list):
        raise PackageError(
            "must be a YAML list of {role, content} items",
            path=str(file),
            line=1,
            hint="- role: system\n    content: You are a helpful assistant.",
        )
    return [_message(item, index, file) for index, item in enumerate(data)]


def prompt_file_problems(file: Path) -> list[PackageError]:
    """Every problem of one prompts file, each item checked (``agent list --check``)."""
    try:
        data = read_yaml(file)
        if not isinstance(data, list):
            _messages(data, file)
            return []
    except PackageError as error:
        return [error]
    found = []
    for index, item in enumerate(data):
        try:
            _message(item, index, file)
        except PackageError as error:
            found.append(error)
    if not found:
        try:
            _load_file(file, file.parent / "assets")  # its @assets references
        except PackageError as error:
            found.append(error)
    return found


def prompt_files(package: AssistantPackage) -> list[Path]:
    """The package's prompts.yml and preset files (those that exist)."""
    default = _yaml_file(package.path / "prompts")
    return ([default] if default is not None else []) + sorted(_preset_files(package).values())


def _message(item: Any, index: int, file: Path) -> dict[str, str]:
    """One validated prompt item as a fresh message dict."""
    if not isinstance(item, dict):
        raise _item_error(file, index, "must be a mapping with role and content")
    for key in item:
        if key not in _PROMPT_KEYS:
            message = f"unknown key '{key}' (allowed: role, content, name)"
            raise _item_error(file, index, message, str(key))
    role = item.get("role")
    if role not in ROLES:
        message = f"role must be one of {', '.join(ROLES)}, got {role!r}"
        raise _item_error(file, index, message, "role")
    content = item.get("content")
    if not isinstance(content, str):
        key = "content" if "content" in item else None
        raise _item_error(file, index, "content must be a string", key)
    entry = {"role": role, "content": content}
    if item.get("name") is not None:
        if not isinstance(item["name"], str):
            raise _item_error(file, index, "name must be a string", "name")
        entry["name"] = item["name"]
    return entry


# ---------------------------------------------------------------------------- @assets


_asset_cache: dict[Path, tuple[tuple[int, int], str]] = {}


def _read_asset(ref: str, assets_dir: Path, source: Path) -> str:
    """The text of ``assets/<ref>``, refusing anything that leaves the assets folder."""
    relative = Path(ref)
    escape = PackageError(
        f"@assets/{ref} points outside the package's assets/ folder",
        path=str(source),
        hint="reference files inside assets/ only, e.g. @assets/rules.md",
    )
    if relative.is_absolute() or ".." in relative.parts:
        raise escape
    target = assets_dir / relative
    try:
        resolved = target.resolve(strict=True)
        stat = resolved.stat()
    except FileNotFoundError:
        raise PackageError(f"@assets/{ref}: file not found ({target})", path=str(source)) from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the name
        reason = getattr(exc, "strerror", None) or str(exc)
        raise PackageError(f"@assets/{ref}: cannot read ({reason})", path=str(source)) from None
    # A symlink inside assets/ may point anywhere; only the resolved location counts.
    if not resolved.is_relative_to(assets_dir.resolve()):
        raise escape
    if not resolved.is_file():
        raise PackageError(f"@assets/{ref} is not a file", path=str(source))
    key = (stat.st_mtime_ns, stat.st_size)
    cached = _asset_cache.get(resolved)
    if cached is not None and cached[0] == key:
        return cached[1]
    try:
        text = resolved.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise PackageError(f"@assets/{ref} is not UTF-8 text", path=str(source)) from None
    _asset_cache[resolved] = (key, text)
    return text


def _inline_assets(
    messages: list[dict[str, str]], assets_dir: Path, source: Path
) -> list[dict[str, str]]:
    """Replace ``@assets/<file>`` references in message contents by the files' text."""
    for message in messages:
        content = message["content"]
        if "@assets/" not in content:
            continue
        whole = _ASSET_REF.fullmatch(content.strip())
        if whole:
            message["content"] = _read_asset(whole.group(1), assets_dir, source)
        else:
            message["content"] = _ASSET_REF.sub(
                lambda m: _read_asset(m.group(1), assets_dir, source), content
            )
    return messages


def _load_file(file: Path, assets_dir: Path) -> list[dict[str, str]]:
    """Messages of one prompts file, validated and with assets inlined."""
    return _inline_assets(_messages(read_yaml(file), file), assets_dir, file)


# ---------------------------------------------------------------------------- prompts and presets


def load_prompts(package: AssistantPackage) -> list[dict[str, str]]:
    """The package's default prompts (``prompts.yml``), or ``[]`` when it has none."""
    file = _yaml_file(package.path / "prompts")
    return [] if file is None else _load_file(file, package.path / "assets")


def _preset_key(file: Path, presets_dir: Path) -> str:
    """``prompts/chat/friendly.yml`` -> ``chat.friendly``; Yao's folder form
    ``prompts/chat/prompts.yml`` -> ``chat``."""
    parts = file.relative_to(presets_dir).with_suffix("").parts
    if len(parts) > 1 and parts[-1] == "prompts":
        parts = parts[:-1]
    return ".".join(parts)


def _preset_files(package: AssistantPackage) -> dict[str, Path]:
    """Preset key -> file, for every YAML file under ``prompts/``."""
    presets_dir = package.path / "prompts"
    if not presets_dir.is_dir():
        return {}
    files: dict[str, Path] = {}
    for file in sorted(presets_dir.rglob("*")):
        if file.suffix not in _YAML_SUFFIXES or not file.is_file():
            continue
        if any(part.startswith(".") for part in file.relative_to(presets_dir).parts):
            continue
        key = _preset_key(file, presets_dir)
        if key in files:
            raise PackageError(
                f"prompt preset '{key}' is defined twice ({files[key].name} and {file.name})",
                path=str(file),
            )
        files[key] = file
    return dict(sorted(files.items()))


def load_presets(package: AssistantPackage) -> dict[str, list[dict[str, str]]]:
    """Every preset under ``prompts/``, keyed by path without extension with ``/`` -> ``.``."""
    assets_dir = package.path / "assets"
    return {key: _load_file(file, assets_dir) for key, file in _preset_files(package).items()}


def _find_preset(package: AssistantPackage, key: str) -> Path | None:
    """The file of preset ``key``, checking the obvious location before scanning."""
    base = package.path.joinpath("prompts", *key.split("."))
    direct = _yaml_file(base) or _yaml_file(base / "prompts")
    return direct if direct is not None else _preset_files(package).get(key)


def global_prompts(package: AssistantPackage) -> list[dict[str, str]]:
    """The prompts of ``<root>/prompts.yml`` shared by every assistant under the root."""
    if package.root is None:
        return []
    file = _yaml_file(package.root / "prompts")
    return [] if file is None else _load_file(file, package.root / "assets")


def truthy(value: Any) -> bool:
    """Metadata flags may arrive as strings from --ctx or case files."""
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)


def select_prompts(
    package: AssistantPackage,
    *,
    hook_preset: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    disable_global_prompts: bool | None = None,
    warnings: list[str] | None = None,
) -> list[dict[str, str]]:
    """Global prompts (unless disabled) followed by the selected preset or ``prompts.yml``.

    Preset: ``hook_preset`` (Create hook), else ``metadata["__prompt_preset"]``, else
    ``default_mode`` when a preset of that name exists, else prompts.yml. A preset named by
    the hook or metadata that does not exist is an error, or, given ``warnings``, a warning
    there and the next choice is taken (Yao falls back to the default prompts). Global prompts are disabled by
    ``disable_global_prompts`` (Create hook), else ``metadata["__disable_global_prompts"]``,
    else the package's ``disable_global_prompts``.
    """
    metadata = metadata or {}
    messages: list[dict[str, str]] | None = None
    for name, source in (
        (hook_preset, "the Create hook's prompt_preset"),
        (metadata.get("__prompt_preset"), "metadata __prompt_preset"),
    ):
        if not name:
            continue
        file = _find_preset(package, str(name))
        if file is None and warnings is not None:
            warnings.append(
                f"prompt preset '{name}' (from {source}) does not exist; "
                "the default prompts are used"
            )
            continue
        if file is None:
            available = sorted(_preset_files(package))
            raise PackageError(
                f"prompt preset '{name}' (from {source}) does not exist",
                path=str(package.path / "prompts"),
                hint=f"available presets: {', '.join(available)}"
                if available
                else f"create prompts/{str(name).replace('.', '/')}.yml",
            )
        messages = _load_file(file, package.path / "assets")
        break
    if messages is None and package.default_mode:
        file = _find_preset(package, package.default_mode)
        if file is not None:
            messages = _load_file(file, package.path / "assets")
    if messages is None:
        messages = load_prompts(package)

    if disable_global_prompts is not None:
        disabled = disable_global_prompts
    elif "__disable_global_prompts" in metadata:
        disabled = truthy(metadata["__disable_global_prompts"])
    else:
        disabled = package.disable_global_prompts
    return messages if disabled else global_prompts(package) + messages


# ---------------------------------------------------------------------------- variables


def context_variables(
    package: AssistantPackage,
    *,
    chat_id: str = "",
    locale: str = "",
    user_id: str = "",
    team_id: str = "",
    metadata: Mapping[str, Any] | None = None,
    name: str | None = None,
    description: str | None = None,
) -> dict[str, Any]:
    """The ``$CTX`` variables of a request: built-ins plus every metadata key as given.

    Built-ins win over metadata keys of the same name; pass the localized ``name`` and
    ``description`` when a locale is active.
    """
    variables: dict[str, Any] = dict(metadata or {})
    variables.update(
        ASSISTANT_ID=package.id,
        ASSISTANT_NAME=package.name if name is None else name,
        ASSISTANT_DESCRIPTION=package.description if description is None else description,
        ASSISTANT_TYPE=package.type,
        CHAT_ID=chat_id,
        LOCALE=locale,
        USER_ID=user_id,
        TEAM_ID=team_id,
    )
    return variables


def _text(value: Any) -> str:
    """A context value as prompt text (JSON for structures, true/false for booleans)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool | dict | list):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _timezone(now: datetime) -> str:
    """The zone name (``UTC``, ``CET``) or, when it has none, the offset (``+08:00``)."""
    name = now.tzname()
    if name:
        return name
    offset = now.utcoffset()
    minutes = int(offset.total_seconds() // 60) if offset else 0
    sign = "-" if minutes < 0 else "+"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def _clock(now: datetime | None) -> datetime:
    """``now`` as an aware datetime: the current local time, or a naive value taken as local."""
    if now is None:
        from agentcli.assistant.cassette import clock_reading  # a case's recorded time

        return clock_reading(lambda: datetime.now().astimezone())
    return now if now.tzinfo is not None else now.astimezone()


def _system(name: str, now: datetime) -> str | None:
    """The value of ``$SYS.<name>``, or None when the name is unknown."""
    formats = {
        "TIME": "%H:%M:%S",
        "DATE": "%Y-%m-%d",
        "DATETIME": "%Y-%m-%d %H:%M:%S",
        "YEAR": "%Y",
        "MONTH": "%m",
        "DAY": "%d",
        "HOUR": "%H",
        "MINUTE": "%M",
        "SECOND": "%S",
    }
    if name in formats:
        return now.strftime(formats[name])
    if name == "WEEKDAY":
        return _WEEKDAYS[now.weekday()]
    if name == "TIMEZONE":
        return _timezone(now)
    if name == "UNIX":
        return str(int(now.timestamp()))
    return None


def render_variables(
    text: str,
    *,
    ctx_vars: Mapping[str, Any],
    env: Mapping[str, str] | None = None,
    now: datetime | None = None,
    warnings: list[str] | None = None,
) -> str:
    """Replace ``$SYS.X``, ``$ENV.X`` and ``$CTX.X`` in ``text`` (see the module docstring)."""
    if "$" not in text:
        return text
    env = os.environ if env is None else env
    upper: dict[str, Any] | None = None
    clock: datetime | None = None

    def replace(match: re.Match[str]) -> str:
        nonlocal upper, clock
        kind, name = match.groups()
        if kind == "SYS":
            if clock is None:
                clock = _clock(now)
            value = _system(name, clock)
            return match.group() if value is None else value
        if kind == "ENV":
            if any(marker in name.upper() for marker in SECRET_MARKERS):
                warning = f"$ENV.{name} looks like a secret and was not put into the prompt"
                if warnings is not None and warning not in warnings:
                    warnings.append(warning)
                return ""
            return env.get(name, "")
        if name in ctx_vars:
            return _text(ctx_vars[name])
        if upper is None:
            upper = {str(key).upper(): value for key, value in ctx_vars.items()}
        return _text(upper.get(name.upper()))

    return _VARIABLE.sub(replace, text)


def render_prompts(
    messages: list[dict[str, str]],
    *,
    ctx_vars: Mapping[str, Any],
    env: Mapping[str, str] | None = None,
    now: datetime | None = None,
    warnings: list[str] | None = None,
) -> list[dict[str, str]]:
    """New message dicts with the variables of every content rendered."""
    now = _clock(now)
    return [
        {
            **message,
            "content": render_variables(
                message["content"], ctx_vars=ctx_vars, env=env, now=now, warnings=warnings
            ),
        }
        for message in messages
    ]

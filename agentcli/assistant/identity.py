"""Who a request runs as, for ``agent run`` and ``agent eval`` alike: the ``--ctx`` file
(chat_id, authorized{user_id, team_id}, metadata, locale; checked against the shipped
``context.schema.json``) and the ``--locale`` / ``-u`` / ``-t`` flags, combined by one
precedence (the first source that gives a value wins)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from agentcli.datafiles import loads_json, read_text
from agentcli.errors import ConfigError, PackageError
from agentcli.schemas import ShippedSchema

__all__ = ["CONTEXT_SCHEMA", "ContextFile", "Identity", "load_context_file", "resolve_identity"]

CONTEXT_SCHEMA = ShippedSchema(Path(__file__).with_name("context.schema.json"))


class Identity(NamedTuple):
    """Locale, user and team as one source gives them (None: this source does not say).
    A tuple: it is built several times for every eval case, and cheaply so."""

    locale: str | None = None
    user_id: str | None = None
    team_id: str | None = None


def resolve_identity(
    *sources: Identity, defaults: tuple[str, str, str] = ("", "", "")
) -> tuple[str, str, str]:
    """``(locale, user, team)``: each from the first of ``sources`` that gives it (an empty
    string gives nothing), else from ``defaults``."""
    picked = list(defaults)
    for part in range(3):
        for source in sources:
            given = source[part]
            if given:
                picked[part] = given
                break
    return picked[0], picked[1], picked[2]


@dataclass(slots=True)
class ContextFile:
    """A ``--ctx`` file, read: empty strings where it says nothing."""

    locale: str = ""
    user_id: str = ""
    team_id: str = ""
    chat_id: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    authorized: dict[str, Any] = field(default_factory=dict)

    @property
    def identity(self) -> Identity:
        """What the file says about locale, user and team."""
        return Identity(self.locale or None, self.user_id or None, self.team_id or None)


def load_context_file(path: Path) -> ContextFile:
    """The ``--ctx`` JSON at ``path``; a ConfigError naming the file (and line) when it cannot
    be read or is not a context object: an unknown field (with a did-you-mean) or a wrong
    type is refused, as a case file's are, since the run would otherwise go on as someone
    else without a word."""
    try:
        text = read_text(path, name=f"--ctx {path}")
    except PackageError as error:
        raise ConfigError(error.message, hint=error.hint) from None
    try:
        data = loads_json(text)
    except json.JSONDecodeError as error:
        raise ConfigError(
            f"{path}:{error.lineno}:{error.colno}: invalid JSON: {error.msg}"
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the context must be a JSON object")
    _refuse_schema_problems(path, text, data)
    authorized = data.get("authorized") or {}
    metadata = data.get("metadata") or {}
    return ContextFile(
        locale=str(data.get("locale") or ""),
        user_id=str(authorized.get("user_id") or data.get("user_id") or ""),
        team_id=str(
            authorized.get("team_id") or authorized.get("tenant_id") or data.get("team_id") or ""
        ),
        chat_id=str(data.get("chat_id") or ""),
        metadata=dict(metadata),
        authorized=dict(authorized),
    )


def _refuse_schema_problems(path: Path, text: str, data: dict[str, Any]) -> None:
    """A ConfigError listing every field of ``data`` that breaks the context schema, each
    as ``file:line: ...`` (the package file's messages and line finding)."""
    from agentcli.assistant.package import SchemaProblems

    found = [problem for _top, problem in SchemaProblems(path, text, CONTEXT_SCHEMA).every(data)]
    if not found:
        return
    found.sort(key=lambda problem: problem.line or 0)  # in file order, as they are read
    hints = [problem.hint for problem in found if problem.hint]
    raise ConfigError(
        "\n".join(problem.message for problem in found),
        hint=hints[0] if hints else 'the fields of a --ctx file: docs/eval.md, "The --ctx file"',
    )

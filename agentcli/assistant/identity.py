"""Who a request runs as, for ``agent run`` and ``agent eval`` alike: the ``--ctx`` file
(chat_id, authorized{user_id, team_id}, metadata, locale) and the ``--locale`` / ``-u`` /
``-t`` flags, combined by one precedence (the first source that gives a value wins)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from agentcli.datafiles import loads_json, read_text
from agentcli.errors import ConfigError, PackageError

__all__ = ["ContextFile", "Identity", "load_context_file", "resolve_identity"]


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
    be read or is not a context object."""
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
    authorized = data.get("authorized") or {}
    metadata = data.get("metadata") or {}
    for name, value in (("authorized", authorized), ("metadata", metadata)):
        if not isinstance(value, dict):
            raise ConfigError(f"{path}: {name} must be an object")
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

"""Chat sessions of ``agent run``: JSONL logs under ``$AGENTCLI_HOME/sessions/<name>.jsonl``.

A log holds the runtime's entries (messages, turn events) after a header entry
``{"type": "event", "data": {"type": "session", "assistant": ..., "created": ...}}``
(with ``"connector"`` when ``-c`` chose one). ``/reset`` appends a
``{"type": "event", "data": {"type": "reset"}}`` marker instead of deleting anything, and a
resumed session starts after the last marker, so a log is never rewritten; a resumed
session given another ``-c`` appends ``{"type": "connector", "connector": ...}`` the same way.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentcli.errors import ConfigError
from agentcli.runtime.storage import Entry, JsonlStorage
from agentcli.secrets import redact_data

__all__ = ["Session", "SessionLog", "open_session", "session_exists", "sessions_dir"]

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def sessions_dir() -> Path:
    """``$AGENTCLI_HOME/sessions`` (default ``~/.local/share/agentcli/sessions``)."""
    from agentcli.home import data_home

    return data_home() / "sessions"


def session_exists(name: str) -> bool:
    """Whether a session of this name has a log to resume (so it knows its assistant)."""
    return bool(_NAME.fullmatch(name)) and (sessions_dir() / f"{name}.jsonl").is_file()


class SessionLog:
    """A ``Storage`` over a JSONL file whose ``clear`` appends a reset marker."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = JsonlStorage(path)

    def append(self, entry: Entry) -> None:
        """Record one entry, secrets redacted (a model may echo a key back)."""
        entry.data = redact_data(entry.data)
        self._file.append(entry)

    def read(self) -> list[Entry]:
        """The entries since the last reset."""
        entries = self._file.read()
        for index in range(len(entries) - 1, -1, -1):
            if _is_event(entries[index], "reset"):
                return entries[index + 1 :]
        return entries

    def clear(self) -> None:
        """Start over: later reads see nothing before this point."""
        self._file.append(Entry(type="event", data={"type": "reset"}))

    def close(self) -> None:
        """Close the file."""
        self._file.close()

    def header(self) -> dict[str, Any]:
        """The session header (``assistant``, ``created``), or ``{}``."""
        for entry in self._file.read():
            if _is_event(entry, "session"):
                header: dict[str, Any] = entry.data  # a JSON object: _is_event checked it
                return header
        return {}

    def message_count(self) -> int:
        """How many messages a resumed conversation starts with."""
        return sum(1 for entry in self.read() if entry.type == "message")

    def connector(self) -> str | None:
        """The connector ``-c`` last chose for this session (None: the package's own)."""
        chosen = None
        for entry in self._file.read():
            if _is_event(entry, "session") or _is_event(entry, "connector"):
                chosen = entry.data.get("connector") or chosen
        return str(chosen) if chosen else None

    def last_turns(self, count: int) -> tuple[list[tuple[str, str]], int]:
        """The ``(role, text)`` of the user messages and text answers of the last ``count``
        turns since the last reset, and how many earlier turns are left out."""
        said: list[tuple[str, str]] = []
        for entry in self.read():
            data = entry.data if entry.type == "message" and isinstance(entry.data, dict) else {}
            text = _text(data.get("content"))
            if data.get("role") in ("user", "assistant") and text.strip():
                said.append((str(data["role"]), text))
        starts = [i for i, (role, _) in enumerate(said) if role == "user"]
        if len(starts) <= count:
            return said, 0
        return said[starts[-count] :], len(starts) - count


def _text(content: Any) -> str:
    """The text of a message's content (a string, or text parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


def _is_event(entry: Entry, kind: str) -> bool:
    return entry.type == "event" and isinstance(entry.data, dict) and entry.data.get("type") == kind


@dataclass(slots=True)
class Session:
    """An opened session: its name, log and the assistant it belongs to."""

    name: str
    log: SessionLog
    assistant_id: str
    resumed: bool
    connector: str | None = None  # what -c chose for it; None: the package's connector


def _latest(folder: Path, assistant_id: str | None) -> Path | None:
    logs = sorted(folder.glob("*.jsonl"), key=lambda p: p.stat().st_mtime, reverse=True)
    for path in logs:
        if assistant_id is None or SessionLog(path).header().get("assistant") == assistant_id:
            return path
    return None


def open_session(
    assistant_id: str | None,
    *,
    name: str | None = None,
    latest: bool = False,
    connector: str | None = None,
) -> Session:
    """Open session ``name`` (resumed when its log exists), the most recent one (``latest``,
    of ``assistant_id`` when given), or a new one named ``<assistant>-<time>``. A resumed
    session keeps the connector it was started with unless ``connector`` (``-c``) is given,
    which it then keeps from here on."""
    folder = sessions_dir()
    if name is not None and latest:
        raise ConfigError("--session and --continue cannot be used together")
    if latest:
        path = _latest(folder, assistant_id) if folder.is_dir() else None
        if path is None:
            whose = f" with {assistant_id}" if assistant_id else ""
            raise ConfigError(
                f"no session{whose} to continue in {folder}",
                hint="start one with: agent run <assistant>",
            )
        name = path.stem
    elif name is not None:
        if not _NAME.fullmatch(name):
            raise ConfigError(
                f"invalid session name {name!r}",
                hint="use letters, digits, '.', '_' and '-' (no slashes)",
            )
    else:
        if assistant_id is None:
            raise ConfigError("a new session needs an assistant")
        stamp = time.strftime("%Y%m%d-%H%M%S")
        name = f"{assistant_id}-{stamp}"
        suffix = 1
        while (folder / f"{name}.jsonl").exists():
            suffix += 1
            name = f"{assistant_id}-{stamp}-{suffix}"
    log = SessionLog(folder / f"{name}.jsonl")
    owner = log.header().get("assistant")
    if owner is None:
        if assistant_id is None:
            raise ConfigError(f"session {name!r} does not say which assistant it talks to")
        created = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        header = {"type": "session", "assistant": assistant_id, "created": created}
        if connector:
            header["connector"] = connector
        log.append(Entry(type="event", data=header))
        return Session(name, log, assistant_id, resumed=False, connector=connector)
    if assistant_id is not None and owner != assistant_id:
        raise ConfigError(
            f"session {name!r} belongs to assistant {owner!r}, not {assistant_id!r}",
            hint=f"agent run {owner} --session {name}, or pick another session name",
        )
    kept = log.connector()
    if connector and connector != kept:
        log.append(Entry(type="event", data={"type": "connector", "connector": connector}))
        kept = connector
    return Session(name, log, str(owner), resumed=True, connector=kept)

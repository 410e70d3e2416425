"""Append-only storage of typed entries (``message | event | state``).

Two backends: ``MemoryStorage`` and ``JsonlStorage`` (one JSON object a line, flushed per
append, so a crashed process keeps everything it recorded). Any other backend only needs
``append``, ``read`` and ``clear``.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, TextIO, get_args

from agentcli.choices import one_of
from agentcli.errors import StorageError
from agentcli.runtime.messages import new_id

__all__ = [
    "ENTRY_TYPES",
    "Entry",
    "EntryType",
    "JsonlStorage",
    "MemoryStorage",
    "Storage",
    "StorageError",
]

EntryType = Literal["message", "event", "state"]
ENTRY_TYPES: tuple[EntryType, ...] = get_args(EntryType)


@dataclass(slots=True)
class Entry:
    """One stored record."""

    type: EntryType
    data: Any  # JSON: a message's or event's JSON form, or the state
    id: str = field(default_factory=new_id)
    timestamp: float = field(default_factory=time.time)
    turn_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        data: dict[str, Any] = {
            "type": self.type,
            "id": self.id,
            "timestamp": self.timestamp,
            "data": self.data,
        }
        if self.turn_id is not None:
            data["turn_id"] = self.turn_id
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Entry:
        """Inverse of ``to_dict``; raises ``ValueError`` for a malformed record."""
        if not isinstance(data, dict):
            raise ValueError("an entry must be a JSON object")
        kind = one_of(data.get("type"), ENTRY_TYPES)
        if kind is None:
            raise ValueError(
                f"unknown entry type {data.get('type')!r} (expected one of {ENTRY_TYPES})"
            )
        return cls(
            type=kind,
            data=data.get("data"),
            id=str(data.get("id") or new_id()),
            timestamp=float(data.get("timestamp") or 0.0),
            turn_id=data.get("turn_id"),
        )


class Storage(Protocol):
    """Where an agent's entries live."""

    def append(self, entry: Entry) -> None:
        """Record one entry."""
        ...

    def read(self) -> list[Entry]:
        """Every entry, oldest first."""
        ...

    def clear(self) -> None:
        """Forget everything."""
        ...


class MemoryStorage:
    """Entries in a list."""

    def __init__(self) -> None:
        self._entries: list[Entry] = []

    def append(self, entry: Entry) -> None:
        """Record one entry."""
        self._entries.append(entry)

    def read(self) -> list[Entry]:
        """Every entry, oldest first."""
        return list(self._entries)

    def clear(self) -> None:
        """Forget everything."""
        self._entries.clear()


class JsonlStorage:
    """Entries as JSON Lines in a file, appended and flushed one by one."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._file: TextIO | None = None

    def append(self, entry: Entry) -> None:
        """Record one entry and flush it."""
        if self._file is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = self.path.open("a", encoding="utf-8")
        self._file.write(json.dumps(entry.to_dict(), ensure_ascii=False, default=str) + "\n")
        self._file.flush()

    def read(self) -> list[Entry]:
        """Every entry; a corrupt line raises ``StorageError`` naming it (a torn last line,
        as a crash leaves it, is skipped)."""
        if not self.path.exists():
            return []
        lines = self.path.read_text(encoding="utf-8").split("\n")
        entries: list[Entry] = []
        last = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
        for index, line in enumerate(lines):
            if not line.strip():
                continue
            try:
                entries.append(Entry.from_dict(json.loads(line)))
            except (ValueError, TypeError) as error:
                torn = index == last and not lines[index].endswith("}")
                if torn:
                    break
                raise StorageError(
                    f"{self.path}:{index + 1}: corrupt session entry: {error}",
                    hint="fix or delete that line; every other line is intact",
                ) from None
        return entries

    def clear(self) -> None:
        """Truncate the file."""
        self.close()
        self.path.write_text("", encoding="utf-8")

    def close(self) -> None:
        """Close the file handle (appending reopens it)."""
        if self._file is not None:
            self._file.close()
            self._file = None

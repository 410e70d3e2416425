"""``ctx.memory``: key-value memory for hooks, tools and script tests.

Four namespaces, each scoped by the kind and an owner id::

    memory.user      per user id   persisted in the SQLite store
    memory.team      per team id   persisted in the SQLite store
    memory.chat      per chat id   persisted in the SQLite store (default ttl 24 h, as in Yao)
    memory.context   per request   in memory only, gone when the request ends

Values are JSON (what ``get`` returns is a fresh copy). Every call is one transaction, so
counters and lists stay correct across threads and processes. Expired keys are invisible
and removed lazily. The store file is ``memory.sqlite3`` in a state folder (``state.py``):
the user's, ``$AGENTCLI_HOME`` (default ``~/.local/share/agentcli``), unless the run chose
another (``agent eval`` uses a fresh one per run); it is created on first use.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from agentcli.assistant.state import StateDir
from agentcli.errors import AgentRuntimeError, ConfigError, StorageError
from agentcli.pascal import PascalAliases

__all__ = [
    "DEFAULT_TTLS",
    "Memory",
    "MemoryStore",
    "Namespace",
    "default_memory_path",
]

# Yao expires chat memory after a day; without it every eval run's chat ids would pile up.
DEFAULT_TTLS: dict[str, float | None] = {
    "user": None,
    "team": None,
    "chat": 24 * 3600.0,
    "context": None,
}

_SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS memory (
    kind TEXT NOT NULL,
    owner TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    expires_at REAL,
    PRIMARY KEY (kind, owner, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS memory_expires ON memory (expires_at) WHERE expires_at IS NOT NULL;
"""
_MISSING: Any = object()
# What a read-modify-write hands back to the caller (a count, the popped items, ...).
_Result = TypeVar("_Result")


def default_memory_path() -> Path:
    """Where the persistent memory lives: in ``$AGENTCLI_HOME`` or ``~/.local/share/agentcli``."""
    return StateDir.persistent().memory_path


class MemoryStore:
    """A SQLite key-value store shared by the memory namespaces of many requests."""

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        clock: Callable[[], float] = time.time,
        busy_timeout: float = 5.0,
    ) -> None:
        self.path: Path | None = None if path == ":memory:" else Path(path or default_memory_path())
        self._clock = clock
        self._busy_timeout = busy_timeout
        # One connection guarded by a lock: every operation is a few microseconds, and a
        # shared ":memory:" database must be one connection anyway.
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None

    @classmethod
    def in_memory(cls, *, clock: Callable[[], float] = time.time) -> MemoryStore:
        """A private store that lives as long as the object (used for ``memory.context``)."""
        return cls(":memory:", clock=clock)

    def now(self) -> float:
        """The store's clock, in seconds since the epoch."""
        return self._clock()

    def close(self) -> None:
        """Close the connection; the next operation reopens it."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """Run a block as one write transaction (atomic across threads and processes)."""
        with self._lock:
            conn = self._connection()
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                raise self._busy_error(exc) from exc
            try:
                yield conn
                conn.commit()
            except sqlite3.OperationalError as exc:
                conn.rollback()
                raise self._busy_error(exc) from exc
            except BaseException:
                conn.rollback()
                raise

    def snapshot(self) -> dict[str, dict[str, dict[str, Any]]]:
        """Every live (unexpired) value: ``{kind: {owner: {key: value}}}`` (for the eval
        ``state`` assertion)."""
        with self.transaction() as conn:
            rows = conn.execute(
                "SELECT kind, owner, key, value FROM memory"
                " WHERE expires_at IS NULL OR expires_at > ? ORDER BY kind, owner, key",
                (self.now(),),
            ).fetchall()
        found: dict[str, dict[str, dict[str, Any]]] = {}
        for kind, owner, key, value in rows:
            found.setdefault(kind, {}).setdefault(owner, {})[key] = json.loads(value)
        return found

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = self._open()
        return self._conn

    def _open(self) -> sqlite3.Connection:
        if self.path is None:
            conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
            conn.executescript(_SCHEMA)
            return conn
        where = str(self.path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                where,
                timeout=self._busy_timeout,
                isolation_level=None,
                check_same_thread=False,
            )
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(
                f"cannot open the memory store {where}: {exc}",
                hint="set AGENTCLI_HOME to a writable folder",
            ) from exc
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            # WAL + NORMAL survives process crashes and keeps commits free of fsync.
            conn.execute("PRAGMA synchronous=NORMAL")
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > _SCHEMA_VERSION:
                raise ConfigError(
                    f"the memory store {where} was written by a newer agentcli "
                    f"(schema {version}, this one knows {_SCHEMA_VERSION})",
                    hint="upgrade agentcli or set AGENTCLI_HOME to another folder",
                )
            conn.executescript(_SCHEMA + f"PRAGMA user_version={_SCHEMA_VERSION};")
            # Expired keys of owners nobody asks for again would otherwise stay forever.
            conn.execute("DELETE FROM memory WHERE expires_at <= ?", (self.now(),))
        except sqlite3.OperationalError as exc:
            conn.close()
            raise self._busy_error(exc) from exc
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise ConfigError(
                f"the memory store {where} is not a usable SQLite database: {exc}",
                hint="move the file away; a new one is created on the next run",
            ) from exc
        except ConfigError:
            conn.close()
            raise
        return conn

    def _busy_error(self, exc: sqlite3.OperationalError) -> StorageError:
        """The error for a store SQLite cannot use now: locked by another process (once
        the busy timeout has passed), or failing to write."""
        where = self.path or ":memory:"
        if "locked" in str(exc) or "busy" in str(exc):
            return StorageError(
                f"the memory store {where} is locked by another process"
                f" (still after {self._busy_timeout:g}s)",
                hint="another agent process is writing to it: retry when it is done,"
                " or set AGENTCLI_HOME to another folder",
            )
        return StorageError(
            f"cannot use the memory store {where}: {exc}",
            hint="check the disk and the file's permissions, or set AGENTCLI_HOME to another folder",
        )


class Namespace(PascalAliases):
    """One memory namespace (``user``, ``team``, ``chat`` or ``context``) of one owner."""

    __slots__ = ("default_ttl", "kind", "owner", "store")

    def __init__(
        self, store: MemoryStore, kind: str, owner: str = "", default_ttl: float | None = None
    ) -> None:
        self.store = store
        self.kind = kind
        self.owner = owner or ""
        self.default_ttl = default_ttl

    def __repr__(self) -> str:
        return f"Namespace({self.kind}:{self.owner!r})"

    # -- key-value -------------------------------------------------------------------

    def get(self, key: str, default: Any = None) -> Any:
        """The value of ``key``, or ``default`` when it is missing or expired."""
        with self._txn() as (conn, now):
            value = self._read(conn, now, key)
        return default if value is _MISSING else value

    def set(self, key: str, value: Any, ttl: float | None = None) -> None:
        """Store ``value`` (any JSON value); ``ttl`` in seconds, else the namespace default."""
        if ttl is not None and (not _is_number(ttl) or ttl <= 0):
            raise AgentRuntimeError(
                f"memory.{self.kind}.set({key!r}): ttl must be a positive number of seconds, "
                f"not {ttl!r}",
                hint="leave ttl out (or None) for the namespace default",
            )
        life = ttl if ttl is not None else self.default_ttl
        encoded = self._encode(key, value)
        with self._txn() as (conn, now):
            self._write(conn, key, encoded, None if life is None else now + life)

    def has(self, key: str) -> bool:
        """Whether ``key`` exists and has not expired."""
        with self._txn() as (conn, now):
            return self._read(conn, now, key) is not _MISSING

    def delete(self, key: str) -> int:
        """Delete ``key``; a key containing ``*`` is a glob pattern. Returns how many went."""
        with self._txn() as (conn, now):
            self._purge(conn, now)
            op = "GLOB" if "*" in key else "="
            cursor = conn.execute(
                f"DELETE FROM memory WHERE kind = ? AND owner = ? AND key {op} ?",
                (self.kind, self.owner, key),
            )
            return cursor.rowcount

    def getdel(self, key: str, default: Any = None) -> Any:
        """Return the value of ``key`` and delete it, atomically."""
        with self._txn() as (conn, now):
            value = self._read(conn, now, key)
            if value is _MISSING:
                return default
            self._remove(conn, key)
            return value

    def keys(self, pattern: str | None = None) -> list[str]:
        """Live keys, sorted; ``pattern`` is a glob (``*``, ``?``, ``[abc]``, case-sensitive)."""
        with self._txn() as (conn, now):
            self._purge(conn, now)
            sql = "SELECT key FROM memory WHERE kind = ? AND owner = ?"
            params: tuple[Any, ...] = (self.kind, self.owner)
            if pattern:
                sql += " AND key GLOB ?"
                params += (pattern,)
            return [row[0] for row in conn.execute(sql + " ORDER BY key", params)]

    def len(self, pattern: str | None = None) -> int:
        """How many live keys (matching ``pattern``, a glob) the namespace holds."""
        return len(self.keys(pattern))

    def __len__(self) -> int:
        return self.len()

    def clear(self) -> int:
        """Delete every key of this namespace and owner; returns how many went."""
        with self._txn() as (conn, _now):
            cursor = conn.execute(
                "DELETE FROM memory WHERE kind = ? AND owner = ?", (self.kind, self.owner)
            )
            return cursor.rowcount

    # -- counters --------------------------------------------------------------------

    def incr(self, key: str, delta: float = 1) -> float:
        """Add ``delta`` to the number at ``key`` (a missing key counts as 0); returns it."""
        if not _is_number(delta):
            raise AgentRuntimeError(f"memory.{self.kind}.incr({key!r}): delta must be a number")

        def add(current: Any) -> tuple[float, float]:
            current = 0 if current is _MISSING else current
            if not _is_number(current):
                raise AgentRuntimeError(
                    f"memory.{self.kind}: cannot incr/decr {key!r}: it holds "
                    f"{type(current).__name__} {_preview(current)}, not a number",
                    hint="delete the key or store a number in it first",
                )
            total = current + delta
            return total, total

        return self._update(key, add)

    def decr(self, key: str, delta: float = 1) -> float:
        """Subtract ``delta`` from the number at ``key``; returns the new value."""
        if not _is_number(delta):
            raise AgentRuntimeError(f"memory.{self.kind}.decr({key!r}): delta must be a number")
        return self.incr(key, -delta)

    # -- lists -----------------------------------------------------------------------

    def push(self, key: str, *values: Any) -> int:
        """Append values to the list at ``key``; returns its new length.

        As in the seed, ``push(key, [a, b])`` appends ``a`` and ``b``; to append one list
        as an element, wrap it: ``push(key, [[a, b]])``.
        """
        items = _spread(values)
        for item in items:
            self._encode(key, item)
        return self._update_list(key, lambda lst: (lst + items, len(lst) + len(items)))

    def pop(self, key: str) -> Any:
        """Remove and return the last element of the list at ``key`` (``None`` when empty)."""
        return self._update_list(key, lambda lst: (lst[:-1], lst[-1]) if lst else (lst, None))

    def pull(self, key: str, count: int) -> list[Any]:
        """Remove and return the last ``count`` elements, in list order."""
        if count <= 0:
            return []
        return self._update_list(key, lambda lst: (lst[:-count], lst[-count:]))

    def pull_all(self, key: str) -> list[Any]:
        """Remove and return every element; the list stays, empty."""
        return self._update_list(key, lambda lst: ([], lst))

    def add_to_set(self, key: str, *values: Any) -> int:
        """Append the values not already in the list (JSON equality); returns its size."""
        items = _spread(values)
        for item in items:
            self._encode(key, item)

        def add(lst: list[Any]) -> tuple[list[Any], int]:
            seen = {_canonical(item) for item in lst}
            for item in items:
                mark = _canonical(item)
                if mark not in seen:
                    seen.add(mark)
                    lst.append(item)
            return lst, len(lst)

        return self._update_list(key, add)

    # -- array access ----------------------------------------------------------------

    def array_len(self, key: str) -> int:
        """Length of the list at ``key`` (0 when missing)."""
        return len(self._list(key))

    def array_get(self, key: str, index: int) -> Any:
        """Element at ``index`` (negative counts from the end); ``None`` when out of range."""
        lst = self._list(key)
        return lst[index] if -len(lst) <= index < len(lst) else None

    def array_set(self, key: str, index: int, value: Any) -> None:
        """Replace the element at ``index`` (negative counts from the end)."""
        self._encode(key, value)

        def put(lst: list[Any]) -> tuple[list[Any], None]:
            if not -len(lst) <= index < len(lst):
                raise AgentRuntimeError(
                    f"memory.{self.kind}.array_set({key!r}, {index}): index out of range "
                    f"(the list has {len(lst)} element(s))"
                )
            lst[index] = value
            return lst, None

        self._update_list(key, put)

    def array_slice(self, key: str, start: int, end: int) -> list[Any]:
        """Elements ``start`` through ``end`` *inclusive*; negative indexes count from the end.

        As in the seed (and Redis ``LRANGE``), ``array_slice(key, -10, -1)`` is the last 10.
        """
        lst = self._list(key)
        size = len(lst)
        first = max(start + size if start < 0 else start, 0)
        last = min(end + size if end < 0 else end, size - 1)
        return lst[first : last + 1] if first <= last else []

    def array_page(self, key: str, page: int, size: int) -> list[Any]:
        """Page ``page`` (from 1) of ``size`` elements; empty when out of range."""
        if page < 1 or size < 1:
            return []
        return self._list(key)[(page - 1) * size : page * size]

    def array_all(self, key: str) -> list[Any]:
        """Every element of the list at ``key`` (empty when missing)."""
        return self._list(key)

    # -- internals -------------------------------------------------------------------

    @contextmanager
    def _txn(self) -> Iterator[tuple[sqlite3.Connection, float]]:
        with self.store.transaction() as conn:
            yield conn, self.store.now()

    def _read(self, conn: sqlite3.Connection, now: float, key: str) -> Any:
        row = self._row(conn, now, key)
        return _MISSING if row is None else json.loads(row[0])

    def _row(self, conn: sqlite3.Connection, now: float, key: str) -> tuple[str, float] | None:
        conn.execute(
            "DELETE FROM memory WHERE kind = ? AND owner = ? AND key = ? AND expires_at <= ?",
            (self.kind, self.owner, key, now),
        )
        row: tuple[str, float] | None = conn.execute(
            "SELECT value, expires_at FROM memory WHERE kind = ? AND owner = ? AND key = ?",
            (self.kind, self.owner, key),
        ).fetchone()
        return row

    def _write(
        self, conn: sqlite3.Connection, key: str, encoded: str, expires_at: float | None
    ) -> None:
        conn.execute(
            "INSERT OR REPLACE INTO memory (kind, owner, key, value, expires_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (self.kind, self.owner, key, encoded, expires_at),
        )

    def _remove(self, conn: sqlite3.Connection, key: str) -> None:
        conn.execute(
            "DELETE FROM memory WHERE kind = ? AND owner = ? AND key = ?",
            (self.kind, self.owner, key),
        )

    def _purge(self, conn: sqlite3.Connection, now: float) -> None:
        conn.execute(
            "DELETE FROM memory WHERE kind = ? AND owner = ? AND expires_at <= ?",
            (self.kind, self.owner, now),
        )

    def _update(self, key: str, change: Callable[[Any], tuple[Any, _Result]]) -> _Result:
        """Read-modify-write ``key`` in one transaction; ``change`` returns (value, result),
        value ``_MISSING`` meaning "write nothing"."""
        with self._txn() as (conn, now):
            row = self._row(conn, now, key)
            current = _MISSING if row is None else json.loads(row[0])
            value, result = change(current)
            if value is _MISSING:
                return result
            if row is not None:
                expires_at = row[1]  # an existing key keeps its expiry, as in Redis
            elif self.default_ttl is None:
                expires_at = None
            else:
                expires_at = now + self.default_ttl
            self._write(conn, key, self._encode(key, value), expires_at)
            return result

    def _update_list(
        self, key: str, change: Callable[[list[Any]], tuple[list[Any], _Result]]
    ) -> _Result:
        def on_list(current: Any) -> tuple[Any, _Result]:
            value, result = change(self._as_list(key, [] if current is _MISSING else current))
            # Reading a missing list (pop, pull, ...) must not create the key.
            return (_MISSING if current is _MISSING and not value else value), result

        return self._update(key, on_list)

    def _list(self, key: str) -> list[Any]:
        with self._txn() as (conn, now):
            value = self._read(conn, now, key)
        return [] if value is _MISSING else self._as_list(key, value)

    def _as_list(self, key: str, value: Any) -> list[Any]:
        if not isinstance(value, list):
            raise AgentRuntimeError(
                f"memory.{self.kind}: {key!r} holds {type(value).__name__} "
                f"{_preview(value)}, not a list",
                hint="list operations need a key set by push/add_to_set or to a list",
            )
        return value

    def _encode(self, key: str, value: Any) -> str:
        try:
            return json.dumps(value, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise AgentRuntimeError(
                f"memory.{self.kind}: cannot store {key!r}: {exc}",
                hint="memory holds JSON values: dict, list, str, int, float, bool, None",
            ) from exc


@dataclass(slots=True)
class Memory(PascalAliases):
    """The four namespaces a request sees as ``ctx.memory``."""

    user: Namespace
    team: Namespace
    chat: Namespace
    context: Namespace

    @classmethod
    def for_request(
        cls,
        store: MemoryStore,
        user_id: str | None = "",
        team_id: str | None = "",
        chat_id: str | None = "",
        *,
        ttls: dict[str, float | None] | None = None,
    ) -> Memory:
        """Bind the shared ``store`` to one request's owners; ``context`` is private to it."""
        limits = {**DEFAULT_TTLS, **(ttls or {})}
        context_store = MemoryStore.in_memory(clock=store.now)
        return cls(
            user=Namespace(store, "user", user_id or "", limits["user"]),
            team=Namespace(store, "team", team_id or "", limits["team"]),
            chat=Namespace(store, "chat", chat_id or "", limits["chat"]),
            context=Namespace(context_store, "context", "", limits["context"]),
        )

    def close(self) -> None:
        """End the request: drop the ``context`` namespace (the shared store stays open)."""
        self.context.store.close()


def _spread(values: tuple[Any, ...]) -> list[Any]:
    if len(values) == 1 and isinstance(values[0], list | tuple):
        return list(values[0])
    return list(values)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _preview(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."

"""The database behind the data models of a run: SQLite in the state folder
(``data.sqlite3``, so ``agent eval --state fresh`` starts empty), or the database
``AGENTCLI_DATABASE_URL`` names (``postgresql://user:pass@host/db``, through psycopg 3:
``pip install 'agentcli[postgres]'``).

A package's models are registered when it loads: their tables are created or migrated
then (``migrate.py``), once per run.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa

from agentcli.assistant.data import DATABASE_URL_VARIABLE
from agentcli.assistant.data.methods import DataModel
from agentcli.assistant.data.migrate import migrate, reset
from agentcli.assistant.data.schema import ModelSpec, did_you_mean
from agentcli.assistant.state import StateDir
from agentcli.errors import ConfigError, PackageError, StorageError, ToolError

__all__ = ["DATABASE_URL_VARIABLE", "DATA_FILE", "DataStore", "database_url"]

DATA_FILE = "data.sqlite3"
_BUSY_SECONDS = 30  # how long a SQLite writer waits for another one
_CONNECT_SECONDS = 10  # how long reaching a PostgreSQL server may take


def database_url(state: StateDir, env: Mapping[str, str]) -> str:
    """``AGENTCLI_DATABASE_URL`` (PostgreSQL URLs read by psycopg 3), else the state
    folder's SQLite file."""
    given = env.get(DATABASE_URL_VARIABLE, "").strip()
    if not given:
        return f"sqlite:///{state.path / DATA_FILE}"
    for prefix in ("postgres://", "postgresql://"):
        if given.startswith(prefix):
            return "postgresql+psycopg://" + given[len(prefix) :]
    return given


class DataStore:
    """The data models of a run by their ``Process`` names, in one database."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.metadata = sa.MetaData()
        self._engine: sa.Engine | None = None
        self._models: dict[str, DataModel] = {}
        self._lock = threading.Lock()

    @classmethod
    def for_state(cls, state: StateDir, env: Mapping[str, str]) -> DataStore:
        """The store of a run whose state folder is ``state``."""
        return cls(database_url(state, env))

    @property
    def shown_url(self) -> str:
        """The URL without its password, for messages."""
        return sa.engine.make_url(self.url).render_as_string(hide_password=True)

    @property
    def engine(self) -> sa.Engine:
        """The engine (created on first use; a SQLite file's folder is created then)."""
        if self._engine is None:
            self._engine = self._create_engine()
        return self._engine

    def _create_engine(self) -> sa.Engine:
        try:
            url = sa.engine.make_url(self.url)
        except sa.exc.ArgumentError as error:
            raise ConfigError(
                f"{DATABASE_URL_VARIABLE}: not a database URL ({error})",
                hint="e.g. postgresql://user:password@127.0.0.1:5432/agents",
            ) from None
        options: dict[str, Any] = {}
        if url.get_backend_name() == "sqlite":
            if url.database:
                from pathlib import Path

                Path(url.database).parent.mkdir(parents=True, exist_ok=True)
            # Methods run in threads of their own; SQLite serialises writers with a wait.
            options["connect_args"] = {"check_same_thread": False, "timeout": _BUSY_SECONDS}
        elif url.get_backend_name() == "postgresql" and "connect_timeout" not in url.query:
            # Every wait is bounded: an unreachable server fails the load, it does not hang it.
            options["connect_args"] = {"connect_timeout": _CONNECT_SECONDS}
        try:
            return sa.create_engine(url, **options)
        except ModuleNotFoundError as error:
            raise ConfigError(
                f"{DATABASE_URL_VARIABLE} needs the {error.name} driver, which is not installed",
                hint="pip install 'agentcli[postgres]'",
            ) from None
        except sa.exc.ArgumentError as error:
            raise ConfigError(f"{DATABASE_URL_VARIABLE}: {error}") from None

    def register(self, specs: list[ModelSpec]) -> None:
        """Add a package's models and bring their tables up to date (once per run)."""
        with self._lock:
            fresh = [spec for spec in specs if spec.process_id not in self._models]
            if not fresh:
                return
            tables = {spec.id: self._table(spec) for spec in fresh}
            self._run(lambda connection: migrate(connection, fresh, tables), fresh[0])
            for spec in fresh:
                self._models[spec.process_id] = DataModel(spec, tables[spec.id], self)

    def reset(self, specs: list[ModelSpec]) -> list[str]:
        """Drop and recreate the tables of ``specs``; the names of the tables dropped."""
        with self._lock:
            tables = {spec.id: self._table(spec) for spec in specs}
            dropped: list[str] = self._run(lambda c: reset(c, specs, tables), specs[0])
            for spec in specs:
                self._models[spec.process_id] = DataModel(spec, tables[spec.id], self)
            return dropped

    def _table(self, spec: ModelSpec) -> sa.Table:
        from agentcli.assistant.data.tables import build_table

        existing = self.metadata.tables.get(spec.table)
        if existing is not None:
            owner = next(
                (m.name for m in self._models.values() if m.table is existing), "another model"
            )
            raise PackageError(
                f"table {spec.table!r} is already the table of {owner}",
                path=str(spec.path),
                hint='give this model another "table": {"name": ...}',
            )
        return build_table(spec, self.metadata)

    def _run(self, work: Any, spec: ModelSpec) -> Any:
        """``work(connection)`` in one transaction; an unreachable database is a
        ``StorageError`` naming it."""
        try:
            with self.engine.begin() as connection:
                return work(connection)
        except sa.exc.OperationalError as error:
            raise StorageError(
                f"data models of {spec.assistant}: cannot use the database {self.shown_url}:"
                f" {str(error.orig).strip().splitlines()[0]}"
            ) from None

    def model(self, name: str, *, assistant: str | None = None) -> DataModel:
        """The model called ``name``: ``agents.<id>.<model>``, or ``<model>`` of ``assistant``."""
        found = self._models.get(name)
        if found is None and assistant is not None:
            found = self._models.get(f"agents.{assistant}.{name}")
        if found is None:
            known = sorted(self._models)
            raise ToolError(
                f"unknown data model {name!r}{did_you_mean(name, known)}"
                f" (models: {', '.join(known) or 'none'})"
            )
        return found

    def has(self, name: str) -> bool:
        """Whether a model of that full name is registered."""
        return name in self._models

    def models(self) -> list[DataModel]:
        """Every registered model."""
        return list(self._models.values())

    def query(self, sql: str) -> list[dict[str, Any]]:
        """Rows of a SQL query (the ``state`` assertion's), run in a transaction that is
        rolled back: a check cannot change what it checks."""
        with self.engine.connect() as connection:
            transaction = connection.begin()
            try:
                result = connection.execute(sa.text(sql))
                return [dict(row._mapping) for row in result] if result.returns_rows else []
            finally:
                transaction.rollback()

    def close(self) -> None:
        """Close the engine's connections."""
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None

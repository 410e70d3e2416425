"""Tables follow their model files: created when missing, altered when a change only adds
(a column, an index, a table), and refused when it would lose or rewrite data (a column
removed, a type, length, nullability or enum changed) — ``agent migrate --reset`` drops
and recreates them.

What each table was created from is kept in ``_agentcli_models`` (one row per table: its
model and the columns' signatures), so a change is seen exactly, the same way on SQLite and
PostgreSQL, without reading types back from the database.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa

from agentcli.assistant.data.schema import ModelSpec
from agentcli.errors import PackageError

__all__ = ["RECORDS", "MigrationRefused", "migrate", "reset"]

_RECORDS_METADATA = sa.MetaData()
RECORDS = sa.Table(
    "_agentcli_models",
    _RECORDS_METADATA,
    sa.Column("table_name", sa.String(200), primary_key=True),
    sa.Column("model", sa.String(400), nullable=False),
    sa.Column("columns", sa.Text, nullable=False),
)


class MigrationRefused(PackageError):
    """A model changed in a way that would lose data in its table."""


def migrate(
    connection: sa.Connection, specs: Iterable[ModelSpec], tables: dict[str, sa.Table]
) -> None:
    """Create or alter the table of every spec (``tables`` maps model ids to tables) in
    the connection's transaction; raises ``MigrationRefused`` naming every problem."""
    RECORDS.create(connection, checkfirst=True)
    for spec in specs:
        _migrate_one(connection, spec, tables[spec.id])


def reset(
    connection: sa.Connection, specs: Iterable[ModelSpec], tables: dict[str, sa.Table]
) -> list[str]:
    """Drop the tables of ``specs`` (their rows are lost) and create them anew; returns the
    names of the tables dropped."""
    RECORDS.create(connection, checkfirst=True)
    dropped = []
    inspector = sa.inspect(connection)
    for spec in specs:
        if inspector.has_table(spec.table):
            sa.Table(spec.table, sa.MetaData()).drop(connection)
            dropped.append(spec.table)
        connection.execute(RECORDS.delete().where(RECORDS.c.table_name == spec.table))
        _create(connection, spec, tables[spec.id])
    return dropped


def _signatures(spec: ModelSpec) -> dict[str, Any]:
    return {column.name: column.signature() for column in spec.columns}


def _create(connection: sa.Connection, spec: ModelSpec, table: sa.Table) -> None:
    table.create(connection)
    if spec.values:
        from agentcli.assistant.data.methods import DataModel

        DataModel(spec, table, None).insert_rows(connection, spec.values)
    _record(connection, spec)


def _record(connection: sa.Connection, spec: ModelSpec) -> None:
    connection.execute(RECORDS.delete().where(RECORDS.c.table_name == spec.table))
    connection.execute(
        RECORDS.insert().values(
            table_name=spec.table,
            model=spec.process_id,
            columns=json.dumps(_signatures(spec), sort_keys=True),
        )
    )


def _migrate_one(connection: sa.Connection, spec: ModelSpec, table: sa.Table) -> None:
    inspector = sa.inspect(connection)
    if not inspector.has_table(spec.table):
        _create(connection, spec, table)
        return
    row = connection.execute(
        sa.select(RECORDS.c.model, RECORDS.c.columns).where(RECORDS.c.table_name == spec.table)
    ).first()
    recorded: dict[str, Any] = json.loads(row.columns) if row is not None else {}
    if row is not None and row.model != spec.process_id:
        _refuse(spec, [f"table {spec.table!r} belongs to model {row.model}"], reset=False)
    present = {column["name"] for column in inspector.get_columns(spec.table)}
    wanted = _signatures(spec)
    problems = [f"column {name!r} was removed" for name in sorted(present - set(wanted))]
    for name, signature in wanted.items():
        before = recorded.get(name)
        if name in present and before is not None and before != signature:
            changed = sorted(k for k in signature if before.get(k) != signature[k])
            problems.append(f"column {name!r} changed ({', '.join(changed)})")
    added = [c for c in spec.columns if c.name not in present]
    for column in added:
        if not column.nullable and not column.has_default:
            problems.append(
                f"new column {column.name!r} is NOT NULL without a default"
                " (existing rows would have no value; add a default or nullable: true)"
            )
    if problems:
        _refuse(spec, problems)
    for column in added:
        _add_column(connection, table, column.name)
    existing_indexes = {index["name"] for index in inspector.get_indexes(spec.table)}
    for index in table.indexes:
        if index.name not in existing_indexes:
            index.create(connection)
    for constraint in table.constraints:
        if isinstance(constraint, sa.UniqueConstraint) and any(
            c.name in {a.name for a in added} for c in constraint.columns
        ):
            # a UNIQUE column added later: SQLite cannot add the constraint, an index can
            names = [c.name for c in constraint.columns]
            sa.Index(f"uq_{spec.table}_{'_'.join(names)}", *constraint.columns, unique=True).create(
                connection
            )
    _record(connection, spec)


def _add_column(connection: sa.Connection, table: sa.Table, name: str) -> None:
    """``ALTER TABLE ... ADD COLUMN``, the column's DDL compiled by SQLAlchemy for the
    connection's dialect (both SQLite and PostgreSQL take this statement as it is)."""
    from sqlalchemy.schema import CreateColumn

    preparer = connection.dialect.identifier_preparer
    definition = CreateColumn(table.c[name]).compile(dialect=connection.dialect)
    connection.execute(
        sa.text(f"ALTER TABLE {preparer.format_table(table)} ADD COLUMN {definition}")
    )


def _refuse(spec: ModelSpec, problems: list[str], *, reset: bool = True) -> None:
    hint = (
        f"run `agent migrate --reset {spec.assistant}` to drop and recreate the tables of"
        " its models (their rows are lost), or undo the change"
        if reset
        else 'give this model another "table": {"name": ...}'
    )
    raise MigrationRefused(
        f"table {spec.table!r} cannot follow the model without losing data: " + "; ".join(problems),
        path=str(spec.path),
        hint=hint,
    )

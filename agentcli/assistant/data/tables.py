"""SQLAlchemy Core tables for the data models of a package (``schema.ModelSpec``).

Imported only for a package that has models: SQLAlchemy costs ~100 ms to import.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from agentcli.assistant.data.schema import ColumnSpec, ModelSpec

__all__ = ["build_table", "column_type"]


def column_type(column: ColumnSpec) -> sa.types.TypeEngine[Any]:
    """The SQLAlchemy type a column is stored as, the same on SQLite and PostgreSQL."""
    kind = column.kind
    if kind == "id":
        # SQLite autoincrements only an INTEGER PRIMARY KEY; PostgreSQL gets a bigint.
        return sa.BigInteger().with_variant(sa.Integer(), "sqlite")
    if kind in ("string", "char"):
        return sa.String(column.length)
    if kind == "enum":
        # Not a native enum: a PostgreSQL enum type is an object of its own that outlives
        # the table and cannot gain a value inside a transaction.
        return sa.Enum(
            *column.options,
            name=f"ck_{column.name}_enum",
            native_enum=False,
            create_constraint=True,
            length=column.length,
            validate_strings=True,
        )
    if kind == "decimal":
        return sa.Numeric(column.precision, column.scale, asdecimal=False)
    simple: dict[str, sa.types.TypeEngine[Any]] = {
        "text": sa.Text(),
        "small_integer": sa.SmallInteger(),
        "integer": sa.Integer(),
        "big_integer": sa.BigInteger(),
        "float": sa.Float(),
        "double": sa.Double(),
        "boolean": sa.Boolean(),
        "json": sa.JSON(),
        "date": sa.Date(),
        "datetime": sa.DateTime(),
        "time": sa.Time(),
    }
    return simple[kind]


def _column(spec: ColumnSpec) -> sa.Column[Any]:
    """One ``sa.Column``; a default is both a Python and a server default, so a column added
    to a table that has rows gets it too."""
    options: dict[str, Any] = {
        "primary_key": spec.primary,
        "nullable": spec.nullable,
        "unique": spec.unique or None,
        "index": (spec.index and not spec.unique and not spec.primary) or None,
    }
    if spec.kind == "id":
        options["autoincrement"] = True
    if spec.has_default:
        options["default"] = spec.default
        options["server_default"] = _server_default(spec)
    if spec.comment:
        options["comment"] = spec.comment
    return sa.Column(spec.name, column_type(spec), **options)


def _server_default(spec: ColumnSpec) -> Any:
    """A column default as DDL (a literal rendered by SQLAlchemy, never by hand)."""
    value = spec.default
    if spec.kind == "json":
        import json

        value = json.dumps(value)
    elif spec.kind == "boolean":
        return sa.true() if value else sa.false()
    return sa.literal(value, column_type(spec)) if not isinstance(value, str) else value


def build_table(spec: ModelSpec, metadata: sa.MetaData) -> sa.Table:
    """The table of a model in ``metadata``, with its indexes."""
    table = sa.Table(spec.table, metadata, *(_column(c) for c in spec.columns))
    for index in spec.indexes:
        sa.Index(index.name, *(table.c[name] for name in index.columns), unique=index.unique)
    return table

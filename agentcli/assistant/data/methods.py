"""The methods ``Process`` calls on a data model, with Yao's arguments and results:
``Find(id, query)``, ``Get(query)``, ``Paginate(query, page, pagesize)``, ``Create(row)``,
``Update(id, row)``, ``Save(row)``, ``Delete(id)``, ``Destroy(id)``, ``Insert(columns,
rows)``, ``UpdateWhere(query, row)``, ``DeleteWhere(query)``, ``DestroyWhere(query)``,
``EachSave(rows, eachrow)``.

Rows come back as plain JSON (datetimes as ISO text). With ``soft_deletes`` a deleted row
keeps its ``deleted_at`` and is left out of every query; ``Destroy`` removes it for good.
With ``timestamps`` ``created_at``/``updated_at`` are set on write. Every method is
synchronous (one short transaction); ``Process`` runs it off the event loop.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from agentcli.assistant.data.query import Query, Where, condition, parse_query
from agentcli.assistant.data.schema import SOFT_DELETE_COLUMN, ModelSpec, did_you_mean
from agentcli.errors import ToolError

if TYPE_CHECKING:
    from agentcli.assistant.data.store import DataStore

__all__ = ["METHODS", "DataModel"]

METHODS = (
    "Find", "Get", "Paginate", "Create", "Update", "Save", "Delete", "Destroy", "Insert",
    "UpdateWhere", "DeleteWhere", "DestroyWhere", "EachSave",
)  # fmt: skip
_DEFAULT_PAGESIZE = 20  # Yao's


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None, microsecond=0)


class DataModel:
    """One model's table and its methods; ``store`` resolves related models (``withs``)."""

    def __init__(self, spec: ModelSpec, table: sa.Table, store: DataStore | None) -> None:
        self.spec = spec
        self.table = table
        self.store = store
        self.name = spec.process_id

    def method(self, name: str) -> Callable[..., Any]:
        """The bound method ``name`` (one of ``METHODS``)."""
        if name not in METHODS:
            raise ToolError(
                f"models.{self.name} has no method {name!r}{did_you_mean(name, METHODS)}"
                f" (methods: {', '.join(METHODS)})"
            )
        method: Callable[..., Any] = getattr(self, name)
        return method

    # -- reading -----------------------------------------------------------------------

    def Find(self, id: Any, query: Any = None) -> dict[str, Any]:
        """The row with primary key ``id`` (with ``query.withs``/``select``); an error if none."""
        parsed = parse_query(query)
        key = self.table.c[self.spec.primary]
        rows = self._select(parsed, extra=key == self.coerce(self.spec.primary, id), limit=1)
        if not rows:
            raise ToolError(f"models.{self.name}: no row with {self.spec.primary} {id!r}")
        return rows[0]

    def Get(self, query: Any = None) -> list[dict[str, Any]]:
        """The rows ``query`` selects."""
        parsed = parse_query(query)
        return self._select(parsed, limit=parsed.limit)

    def Paginate(self, query: Any = None, page: Any = None, pagesize: Any = None) -> dict[str, Any]:
        """One page: ``{data, page, pagesize, pagecnt, total, next, prev}`` (next/prev -1
        at the ends), as Yao answers; page and size from the arguments, else the query."""
        parsed = parse_query(query)
        page_no = _positive(page, "page") or parsed.page or 1
        size = (
            _positive(pagesize, "pagesize") or parsed.pagesize or parsed.limit or _DEFAULT_PAGESIZE
        )
        with self._connect() as connection:
            total = connection.execute(
                sa.select(sa.func.count())
                .select_from(self.table)
                .where(*self._filters(parsed.wheres))
            ).scalar_one()
        pages = max(1, math.ceil(total / size))
        data = self._select(parsed, limit=size, offset=(page_no - 1) * size)
        return {
            "data": data,
            "page": page_no,
            "pagesize": size,
            "pagecnt": pages,
            "total": total,
            "next": page_no + 1 if page_no < pages else -1,
            "prev": page_no - 1 if page_no > 1 else -1,
        }

    # -- writing -----------------------------------------------------------------------

    def Create(self, row: Any) -> Any:
        """Insert ``row``; returns its primary key."""
        values = self._values(row, "Create", creating=True)
        with self._begin() as connection:
            return self._insert(connection, values)

    def Update(self, id: Any, row: Any) -> None:
        """Change the row with primary key ``id``; an error if there is none."""
        values = self._values(row, "Update")
        values.pop(self.spec.primary, None)
        key = self.table.c[self.spec.primary] == self.coerce(self.spec.primary, id)
        with self._begin() as connection:
            if self._update(connection, [key], values) == 0:
                raise ToolError(f"models.{self.name}: no row with {self.spec.primary} {id!r}")

    def Save(self, row: Any) -> Any:
        """Update the row when ``row`` has the primary key of an existing one, else create
        it; returns the primary key."""
        values = self._values(row, "Save", creating=True)
        key_name = self.spec.primary
        with self._begin() as connection:
            if values.get(key_name) is not None:
                key = self.table.c[key_name] == values[key_name]
                changes = {k: v for k, v in self._values(row, "Save").items() if k != key_name}
                if self._update(connection, [key], changes) > 0:
                    return values[key_name]
            return self._insert(connection, values)

    def Delete(self, id: Any) -> None:
        """Delete the row (soft: marks ``deleted_at`` when the model has soft_deletes)."""
        key = self.table.c[self.spec.primary] == self.coerce(self.spec.primary, id)
        with self._begin() as connection:
            self._delete(connection, [key], soft=self.spec.soft_deletes)

    def Destroy(self, id: Any) -> None:
        """Remove the row for good, soft_deletes or not."""
        key = self.table.c[self.spec.primary] == self.coerce(self.spec.primary, id)
        with self._begin() as connection:
            connection.execute(self.table.delete().where(key))

    def Insert(self, columns: Any, rows: Any) -> None:
        """Insert many rows given as ``columns`` (names) and ``rows`` (lists of values)."""
        if not isinstance(columns, list) or not all(isinstance(c, str) for c in columns):
            raise ToolError(f"models.{self.name}.Insert: columns must be a list of names")
        if not isinstance(rows, list) or not all(
            isinstance(r, list) and len(r) == len(columns) for r in rows
        ):
            raise ToolError(
                f"models.{self.name}.Insert: rows must be lists of {len(columns)} values (one per column)"
            )
        with self._begin() as connection:
            self.insert_rows(connection, [dict(zip(columns, r, strict=True)) for r in rows])

    def UpdateWhere(self, query: Any, row: Any) -> int:
        """Change every row ``query.wheres`` selects; returns how many."""
        values = self._values(row, "UpdateWhere")
        values.pop(self.spec.primary, None)
        wheres = parse_query(query).wheres
        with self._begin() as connection:
            return self._update(connection, self._filters(wheres), values)

    def DeleteWhere(self, query: Any) -> int:
        """Delete (soft, with soft_deletes) every row ``query.wheres`` selects; returns how many."""
        wheres = parse_query(query).wheres
        with self._begin() as connection:
            return self._delete(connection, self._filters(wheres), soft=self.spec.soft_deletes)

    def DestroyWhere(self, query: Any) -> int:
        """Remove for good every row ``query.wheres`` selects; returns how many."""
        wheres = parse_query(query).wheres
        with self._begin() as connection:
            return self._delete(connection, self._filters(wheres, deleted=True), soft=False)

    def EachSave(self, rows: Any, eachrow: Any = None) -> list[Any]:
        """``Save`` every row (``eachrow`` merged into each); returns their primary keys."""
        if not isinstance(rows, list):
            raise ToolError(f"models.{self.name}.EachSave: rows must be a list of objects")
        if eachrow is not None and not isinstance(eachrow, dict):
            raise ToolError(f"models.{self.name}.EachSave: eachrow must be an object")
        return [
            self.Save({**row, **(eachrow or {})}) if isinstance(row, dict) else self.Save(row)
            for row in rows
        ]

    # -- shared ------------------------------------------------------------------------

    def insert_rows(self, connection: sa.Connection, rows: Iterable[Any]) -> None:
        """Insert rows in the caller's transaction (fixtures, ``values``, ``Insert``)."""
        for row in rows:
            self._insert(connection, self._values(row, "Insert", creating=True))

    def clear(self, connection: sa.Connection) -> None:
        """Remove every row (a fixture replaces the table's content)."""
        connection.execute(self.table.delete())

    def coerce(self, name: str, value: Any) -> Any:
        """``value`` as the Python type of column ``name`` (ISO text for dates, numbers
        given as text); a value that cannot be is a ``ToolError``."""
        column = self.spec.column(name)
        if column is None or value is None:
            return value
        kind = column.kind
        try:
            if kind in ("datetime", "date", "time") and isinstance(value, str):
                text = value.replace("Z", "+00:00") if value.endswith("Z") else value
                parsed: dt.datetime | dt.date | dt.time
                if kind == "time":
                    parsed = dt.time.fromisoformat(text)
                elif kind == "date" and "T" not in text and " " not in text:
                    parsed = dt.date.fromisoformat(text)
                else:
                    parsed = dt.datetime.fromisoformat(text)
                    if kind == "date":
                        parsed = parsed.date()
                if isinstance(parsed, dt.datetime) and parsed.tzinfo is not None:
                    parsed = parsed.astimezone(dt.UTC).replace(tzinfo=None)
                return parsed
            if kind in ("id", "integer", "small_integer", "big_integer") and isinstance(
                value, str | float
            ):
                number = float(value)
                if not number.is_integer():
                    raise ValueError("not a whole number")
                return int(number)
            if kind in ("float", "double", "decimal") and isinstance(value, str):
                return float(value)
            if kind == "boolean" and isinstance(value, str):
                lowered = value.strip().lower()
                if lowered not in ("true", "false", "1", "0"):
                    raise ValueError("not true or false")
                return lowered in ("true", "1")
            if kind == "enum" and value not in column.options:
                raise ValueError(
                    f"not one of {', '.join(column.options)}{did_you_mean(str(value), column.options)}"
                )
            if kind in ("string", "char", "text") and not isinstance(value, str):
                return json.dumps(value) if isinstance(value, dict | list) else str(value)
        except ValueError as error:
            raise ToolError(f"models.{self.name}: {name} = {value!r}: {error}") from None
        return value

    def _connect(self) -> sa.Connection:
        assert self.store is not None
        return self.store.engine.connect()

    def _begin(self) -> Any:
        assert self.store is not None
        return self.store.engine.begin()

    def _values(self, row: Any, method: str, *, creating: bool = False) -> dict[str, Any]:
        """A row's values checked against the columns and coerced, timestamps set."""
        if not isinstance(row, dict):
            raise ToolError(
                f"models.{self.name}.{method}: the row must be an object, got {type(row).__name__}"
            )
        known = [c.name for c in self.spec.columns]
        values: dict[str, Any] = {}
        for key, value in row.items():
            if key not in known:
                raise ToolError(
                    f"models.{self.name}.{method}: unknown column {key!r}{did_you_mean(str(key), known)}"
                    f" (columns: {', '.join(known)})"
                )
            values[key] = self.coerce(key, value)
        if self.spec.timestamps:
            now = _now()
            if creating:
                values.setdefault("created_at", now)
            values["updated_at"] = now
        return values

    def _insert(self, connection: sa.Connection, values: dict[str, Any]) -> Any:
        try:
            result = connection.execute(self.table.insert().values(**values))
        except sa.exc.IntegrityError as error:
            raise ToolError(f"models.{self.name}: {_integrity(error)}") from None
        key = result.inserted_primary_key
        return key[0] if key else values.get(self.spec.primary)

    def _update(self, connection: sa.Connection, filters: list[Any], values: dict[str, Any]) -> int:
        if not values:
            return int(
                connection.execute(
                    sa.select(sa.func.count()).select_from(self.table).where(*filters)
                ).scalar_one()
            )
        statement = self.table.update().where(*filters, *self._live())
        try:
            return int(connection.execute(statement.values(**values)).rowcount)
        except sa.exc.IntegrityError as error:
            raise ToolError(f"models.{self.name}: {_integrity(error)}") from None

    def _delete(self, connection: sa.Connection, filters: list[Any], *, soft: bool) -> int:
        if soft:
            marked = self.table.update().where(*filters, *self._live())
            return int(connection.execute(marked.values({SOFT_DELETE_COLUMN: _now()})).rowcount)
        return int(connection.execute(self.table.delete().where(*filters)).rowcount)

    def _live(self) -> list[Any]:
        """The condition that hides soft-deleted rows (none without soft_deletes)."""
        if not self.spec.soft_deletes:
            return []
        return [self.table.c[SOFT_DELETE_COLUMN].is_(None)]

    def _filters(self, wheres: Any, *, deleted: bool = False) -> list[Any]:
        found = condition(self.table, wheres, self.coerce)
        filters = [] if found is None else [found]
        return filters if deleted else [*filters, *self._live()]

    def _select(
        self, query: Query, *, extra: Any = None, limit: int | None = None, offset: int = 0
    ) -> list[dict[str, Any]]:
        columns = self._columns(query)
        statement = sa.select(*columns).where(*self._filters(query.wheres))
        if extra is not None:
            statement = statement.where(extra)
        for order in query.orders:
            column = self._column(order.column, "orders")
            statement = statement.order_by(column.desc() if order.descending else column.asc())
        if not query.orders:
            statement = statement.order_by(self.table.c[self.spec.primary])
        if limit is not None:
            statement = statement.limit(limit)
        if offset:
            statement = statement.offset(offset)
        with self._connect() as connection:
            rows = [_plain(dict(row._mapping)) for row in connection.execute(statement)]
        for name, with_query in query.withs.items():
            self._load_relation(rows, name, with_query)
        return rows

    def _columns(self, query: Query) -> list[sa.ColumnElement[Any]]:
        if not query.select:
            return list(self.table.c)
        names = list(dict.fromkeys(query.select))
        # a relation needs the column it joins on, selected or not
        for name in query.withs:
            relation = self.spec.relations.get(name)
            if relation is not None and relation.foreign not in names:
                names.append(relation.foreign)
        return [self._column(name, "select") for name in names]

    def _column(self, name: str, where: str) -> sa.ColumnElement[Any]:
        column = self.table.c.get(name)
        if column is None:
            known = list(self.table.c.keys())
            raise ToolError(
                f"models.{self.name}: unknown column {name!r} in {where}{did_you_mean(name, known)}"
                f" (columns: {', '.join(known)})"
            )
        return column

    def _load_relation(self, rows: list[dict[str, Any]], name: str, query: Query) -> None:
        """Attach relation ``name`` to every row: a row (hasOne) or a list (hasMany)."""
        relation = self.spec.relations.get(name)
        if relation is None:
            known = list(self.spec.relations)
            raise ToolError(
                f"models.{self.name}: no relation {name!r} in withs{did_you_mean(name, known)}"
                f" (relations: {', '.join(known) or 'none'})"
            )
        assert self.store is not None
        target = self.store.model(relation.model, assistant=self.spec.assistant)
        keys = list({row.get(relation.foreign) for row in rows} - {None})
        related: list[dict[str, Any]] = []
        if keys:
            relation_query = parse_query(relation.query)
            wheres = [*relation_query.wheres, *query.wheres, Where(relation.key, "in", keys)]
            merged = Query(
                select=query.select or relation_query.select,
                wheres=wheres,
                orders=query.orders or relation_query.orders,
                withs=query.withs or relation_query.withs,
            )
            if merged.select and relation.key not in merged.select:
                merged.select = [*merged.select, relation.key]
            related = target._select(merged)
        for row in rows:
            matching = [
                item for item in related if item.get(relation.key) == row.get(relation.foreign)
            ]
            if relation.type == "hasOne":
                row[name] = matching[0] if matching else None
            else:
                limit = query.limit
                row[name] = matching[:limit] if limit is not None else matching


def _positive(value: Any, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ToolError(f"{name} must be an integer >= 1, got {value!r}")
    return value


def _plain(row: dict[str, Any]) -> dict[str, Any]:
    """A row as JSON values: dates and times as ISO text."""
    for key, value in row.items():
        if isinstance(value, dt.date | dt.time):
            row[key] = value.isoformat()
    return row


def _integrity(error: sa.exc.IntegrityError) -> str:
    """A constraint violation in a line (the driver's first line, without the SQL)."""
    detail = str(error.orig).strip().splitlines()
    return f"constraint violated: {detail[0] if detail else type(error.orig).__name__}"

"""Yao's query parameters (``{select, wheres, orders, limit, page, pagesize, withs}``) as
typed values, and their SQLAlchemy form.

A where is ``{column, value, op?, method?}``: ``op`` one of ``=`` (the default), ``>``,
``>=``, ``<``, ``<=``, ``<>``, ``like`` (the value's own ``%``), ``match`` (contains,
ignoring case: Yao's full-text match, portably), ``in`` (a list), ``null``, ``notnull``;
Yao's names (``eq``, ``gt``, ``ge``, ``lt``, ``le``, ``ne``) work too. ``"method":
"orWhere"`` (or ``"or": true``) joins it with OR instead of AND; a where holding
``wheres`` is a parenthesised group. A mistake is a ``ToolError`` the caller (often a
model) can read and correct.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from agentcli.assistant.data.schema import did_you_mean
from agentcli.errors import ToolError

if TYPE_CHECKING:
    import sqlalchemy as sa

__all__ = [
    "OPERATORS",
    "Operator",
    "Order",
    "Query",
    "Where",
    "condition",
    "parse_query",
    "parse_wheres",
]

Operator = Literal["=", ">", ">=", "<", "<=", "<>", "like", "match", "in", "null", "notnull"]
OPERATORS: dict[str, Operator] = {
    "=": "=", "eq": "=", "==": "=",
    ">": ">", "gt": ">",
    ">=": ">=", "ge": ">=", "gte": ">=",
    "<": "<", "lt": "<",
    "<=": "<=", "le": "<=", "lte": "<=",
    "<>": "<>", "!=": "<>", "ne": "<>", "neq": "<>",
    "like": "like", "match": "match", "in": "in",
    "null": "null", "isnull": "null", "notnull": "notnull", "not null": "notnull",
}  # fmt: skip
_QUERY_KEYS = ("select", "wheres", "orders", "limit", "page", "pagesize", "withs")
_WHERE_KEYS = ("column", "field", "value", "op", "method", "or", "wheres", "comment")
_METHODS = ("where", "orwhere")


@dataclass(frozen=True, slots=True)
class Where:
    """One condition, or (``group`` set) a parenthesised group of them."""

    column: str = ""
    op: Operator = "="
    value: Any = None
    either: bool = False  # joined with OR to what comes before
    group: tuple[Where, ...] = ()


@dataclass(frozen=True, slots=True)
class Order:
    """``{column, option: asc|desc}``."""

    column: str
    descending: bool = False


@dataclass(slots=True)
class Query:
    """A parsed query parameter."""

    select: list[str] = field(default_factory=list)
    wheres: list[Where] = field(default_factory=list)
    orders: list[Order] = field(default_factory=list)
    limit: int | None = None
    page: int | None = None
    pagesize: int | None = None
    withs: dict[str, Query] = field(default_factory=dict)


def parse_query(raw: Any, where: str = "query") -> Query:
    """A ``Query`` from a query parameter (None: everything). Keys Yao does not know are
    ignored as Yao does, unless they look like a misspelt one."""
    if raw is None:
        return Query()
    if not isinstance(raw, dict):
        raise ToolError(
            f"{where} must be an object {{wheres, orders, limit, ...}}, got {_kind(raw)}"
        )
    for key in raw:
        if key not in _QUERY_KEYS and did_you_mean(key, _QUERY_KEYS):
            raise ToolError(f"{where}: unknown key {key!r}{did_you_mean(key, _QUERY_KEYS)}")
    return Query(
        select=_names(raw.get("select"), f"{where}.select"),
        wheres=parse_wheres(raw.get("wheres"), f"{where}.wheres"),
        orders=_orders(raw.get("orders"), f"{where}.orders"),
        limit=_count(raw.get("limit"), f"{where}.limit"),
        page=_count(raw.get("page"), f"{where}.page", low=1),
        pagesize=_count(raw.get("pagesize"), f"{where}.pagesize", low=1),
        withs=_withs(raw.get("withs"), f"{where}.withs"),
    )


def parse_wheres(raw: Any, where: str = "wheres") -> list[Where]:
    """The list of wheres (None: none)."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ToolError(f"{where} must be a list of {{column, value, op}}, got {_kind(raw)}")
    return [_where(item, f"{where}[{index}]") for index, item in enumerate(raw)]


def _where(raw: Any, where: str) -> Where:
    if not isinstance(raw, dict):
        raise ToolError(f"{where} must be an object {{column, value, op}}, got {_kind(raw)}")
    for key in raw:
        if key not in _WHERE_KEYS:
            raise ToolError(f"{where}: unknown key {key!r}{did_you_mean(key, _WHERE_KEYS)}")
    method = str(raw.get("method") or "where").lower()
    if method not in _METHODS:
        raise ToolError(f'{where}: method must be "where" or "orWhere", got {raw["method"]!r}')
    either = method == "orwhere" or raw.get("or") is True
    if "wheres" in raw:
        return Where(either=either, group=tuple(parse_wheres(raw["wheres"], f"{where}.wheres")))
    column = raw.get("column", raw.get("field"))
    if not isinstance(column, str) or not column:
        raise ToolError(f'{where} needs "column"')
    op_name = str(raw.get("op") or "=").lower()
    op = OPERATORS.get(op_name)
    if op is None:
        raise ToolError(
            f"{where}: unknown op {raw['op']!r}{did_you_mean(op_name, OPERATORS)}"
            f" (use one of =, >, >=, <, <=, <>, like, match, in, null, notnull)"
        )
    value = raw.get("value")
    if op == "in" and not isinstance(value, list):
        raise ToolError(f'{where}: op "in" needs a list "value"')
    if op in ("like", "match") and not isinstance(value, str):
        raise ToolError(f'{where}: op "{op}" needs a string "value"')
    if op not in ("null", "notnull", "in") and "value" not in raw:
        raise ToolError(f'{where}: op "{op}" needs a "value"')
    return Where(column=column, op=op, value=value, either=either)


def _orders(raw: Any, where: str) -> list[Order]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ToolError(f"{where} must be a list of {{column, option}}")
    orders = []
    for index, item in enumerate(raw):
        if isinstance(item, str):
            orders.append(Order(item))
            continue
        if not isinstance(item, dict) or not isinstance(item.get("column"), str):
            raise ToolError(f"{where}[{index}] must be {{column, option: asc|desc}}")
        option = str(item.get("option") or "asc").lower()
        if option not in ("asc", "desc"):
            raise ToolError(f'{where}[{index}]: option must be "asc" or "desc", got {option!r}')
        orders.append(Order(item["column"], option == "desc"))
    return orders


def _withs(raw: Any, where: str) -> dict[str, Query]:
    if raw is None:
        return {}
    if isinstance(raw, list):  # ["items"] as a shorthand of {"items": {}}
        raw = {str(key): {} for key in raw}
    if not isinstance(raw, dict):
        raise ToolError(f'{where} must be an object {{relation: {{"query": {{...}}}}}}')
    withs = {}
    for name, item in raw.items():
        body = item if isinstance(item, dict) else {}
        withs[str(name)] = parse_query(body.get("query"), f"{where}.{name}.query")
    return withs


def _names(raw: Any, where: str) -> list[str]:
    if raw is None:
        return []
    if not isinstance(raw, list) or not all(isinstance(n, str) and n for n in raw):
        raise ToolError(f"{where} must be a list of column names")
    return list(raw)


def _count(raw: Any, where: str, *, low: int = 0) -> int | None:
    if raw is None:
        return None
    if isinstance(raw, str) and raw.strip().isdigit():
        raw = int(raw)
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < low:
        raise ToolError(f"{where} must be an integer >= {low}, got {raw!r}")
    return raw


def _kind(value: Any) -> str:
    return type(value).__name__


def condition(table: sa.Table, wheres: list[Where], coerce: Any) -> sa.ColumnElement[bool] | None:
    """The SQL condition of ``wheres`` (None when there are none); ``coerce(column,
    value)`` turns a where's value into the column's Python type."""
    import sqlalchemy as sa

    result: sa.ColumnElement[bool] | None = None
    for item in wheres:
        if item.group:
            part = condition(table, list(item.group), coerce)
            if part is None:
                continue
            part = part.self_group()
        else:
            part = _comparison(table, item, coerce)
        if result is None:
            result = part
        else:
            result = sa.or_(result, part) if item.either else sa.and_(result, part)
    return result


def _comparison(table: sa.Table, item: Where, coerce: Any) -> sa.ColumnElement[bool]:
    column = table.c.get(item.column)
    if column is None:
        known = list(table.c.keys())
        raise ToolError(
            f"unknown column {item.column!r} in wheres{did_you_mean(item.column, known)}"
            f" (columns: {', '.join(known)})"
        )
    op = item.op
    if op == "null":
        return column.is_(None)
    if op == "notnull":
        return column.is_not(None)
    if op == "like":
        return column.like(item.value)
    if op == "match":
        return column.ilike(f"%{item.value}%")
    if op == "in":
        return column.in_([coerce(item.column, v) for v in item.value or []])
    value = coerce(item.column, item.value)
    comparisons = {
        "=": column.__eq__,
        ">": column.__gt__,
        ">=": column.__ge__,
        "<": column.__lt__,
        "<=": column.__le__,
        "<>": column.__ne__,
    }
    compared: sa.ColumnElement[bool] = comparisons[op](value)
    return compared

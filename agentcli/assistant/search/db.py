"""``ctx.search.db``: full-text search over the text columns (string, char, text) of a
package's data models (``db.models``), with Yao's ``wheres`` filters and ``max_results``.

One method on SQLite and PostgreSQL alike: the database finds the rows holding any word
of the query in any text column (``ILIKE``, case-insensitive on both, through
SQLAlchemy), filtered by ``wheres`` and soft deletes, at most ``CANDIDATES`` of them; they
are then ranked here by Okapi BM25 (k1 1.2, b 0.75; document frequency from those rows,
the collection size from a count of the table). An FTS5 table or a tsvector index would
be faster on large tables, but would have to be kept in step with the model's migrations
on each database; a helpdesk's tables are small. Scores are ``x / (x + 1)`` of the BM25
sum, as for the knowledge base.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import TYPE_CHECKING, Any

from agentcli.assistant.search.result import SearchItem
from agentcli.errors import SearchError

if TYPE_CHECKING:
    from agentcli.assistant.data.methods import DataModel
    from agentcli.assistant.data.store import DataStore

__all__ = ["CANDIDATES", "search_db"]

CANDIDATES = 5000
_TEXT_KINDS = ("string", "char", "text")
_TITLE_NAMES = ("title", "name", "subject", "summary")
_WORD = re.compile(r"\w+", re.UNICODE)
_K1, _B = 1.2, 0.75


def search_db(
    store: DataStore,
    assistant: str,
    models: list[str],
    query: str,
    wheres: Any,
    limit: int,
) -> tuple[list[SearchItem], int]:
    """The best ``limit`` rows of ``models`` for ``query`` (blocking), and how many rows
    matched in all."""
    from agentcli.errors import ToolError

    terms = list(dict.fromkeys(word.lower() for word in _WORD.findall(query)))
    if not terms:
        return [], 0
    scored: list[tuple[float, SearchItem]] = []
    for name in models:
        try:
            model = store.model(name, assistant=assistant)
        except ToolError as error:
            raise SearchError(f"db search: {error.message}") from None
        scored.extend(_search_model(model, terms, wheres))
    scored.sort(key=lambda pair: -pair[0])
    return [item for _score, item in scored[:limit]], len(scored)


def _search_model(
    model: DataModel, terms: list[str], wheres: Any
) -> list[tuple[float, SearchItem]]:
    import sqlalchemy as sa

    from agentcli.assistant.data.query import condition, parse_wheres
    from agentcli.assistant.data.schema import SOFT_DELETE_COLUMN
    from agentcli.errors import ToolError

    spec, table = model.spec, model.table
    columns = [c.name for c in spec.columns if c.kind in _TEXT_KINDS]
    if not columns:
        raise SearchError(f"db search: model {model.name} has no text column to search")
    filters: list[Any] = []
    try:
        found = condition(table, parse_wheres(wheres, "wheres"), model.coerce)
    except ToolError as error:
        raise SearchError(f"db search over {model.name}: {error.message}") from None
    if found is not None:
        filters.append(found)
    if spec.soft_deletes:
        filters.append(table.c[SOFT_DELETE_COLUMN].is_(None))
    contains = [table.c[c].ilike(f"%{_escape(t)}%", escape="\\") for c in columns for t in terms]
    statement = sa.select(table).where(*filters, sa.or_(*contains)).limit(CANDIDATES)
    counted = sa.select(sa.func.count()).select_from(table).where(*filters)
    with model.store.engine.connect() if model.store else _no_store() as connection:
        rows = [dict(row._mapping) for row in connection.execute(statement)]
        total = int(connection.execute(counted).scalar() or 0)
    documents = [
        [w.lower() for c in columns for w in _WORD.findall(str(row.get(c) or ""))] for row in rows
    ]
    if not documents:
        return []
    average = sum(len(d) for d in documents) / len(documents) or 1.0
    frequency = {t: sum(1 for d in documents if t in d) for t in terms}
    title_column = next((c for c in _TITLE_NAMES if c in columns), columns[0])
    results = []
    for row, words in zip(rows, documents, strict=True):
        counts = Counter(words)
        strength = 0.0
        for term in terms:
            tf = counts.get(term, 0)
            if not tf:
                continue
            df = frequency[term]
            idf = math.log(1 + (max(total, len(rows)) - df + 0.5) / (df + 0.5))
            strength += idf * tf * (_K1 + 1) / (tf + _K1 * (1 - _B + _B * len(words) / average))
        if strength <= 0:
            continue  # the substring matched inside a longer word only
        key = row.get(spec.primary)
        plain = _plain(row)
        content = "\n".join(
            f"{c}: {plain[c]}" for c in columns if c != title_column and plain.get(c)
        )
        item = SearchItem(
            title=str(plain.get(title_column) or f"{model.name} {key}"),
            url=f"db://{model.name}/{key}",
            content=content,
            score=strength / (strength + 1),
            model=model.name,
            record_id=key,
            data=plain,
        )
        results.append((strength, item))
    return results


def _escape(term: str) -> str:
    return term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _plain(row: dict[str, Any]) -> dict[str, Any]:
    """The row as JSON values (dates as ISO text, decimals as numbers)."""
    import datetime as dt
    import decimal

    plain: dict[str, Any] = {}
    for key, value in row.items():
        if isinstance(value, dt.date | dt.time):
            value = value.isoformat()
        elif isinstance(value, decimal.Decimal):
            value = float(value)
        plain[key] = value
    return plain


def _no_store() -> Any:
    raise SearchError("db search: the data models have no database")

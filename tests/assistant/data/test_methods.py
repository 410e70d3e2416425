"""Every Process method of a data model and every where operator, against SQLite and a
real PostgreSQL (the ``database_url`` fixture runs each test on both)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from agentcli.assistant.data.schema import load_models
from agentcli.assistant.data.store import DataStore
from agentcli.assistant.data.store import database_url as resolve_url
from agentcli.assistant.state import StateDir
from agentcli.errors import ToolError
from tests.assistant.data.models import CUSTOMER, ORDER, write_models


def open_store(url: str, package: Path) -> DataStore:
    """A store at ``url`` with the package's models registered (tables created)."""
    store = DataStore(resolve_url(StateDir(package), {"AGENTCLI_DATABASE_URL": url}))
    store.register(load_models(package, "shop"))
    return store


@pytest.fixture
def store(database_url: str, tmp_path: Path) -> Iterator[DataStore]:
    package = write_models(tmp_path / "shop", customer=CUSTOMER, order=ORDER)
    store = open_store(database_url, package)
    yield store
    store.close()


@pytest.fixture
def orders(store: DataStore):
    """Three orders of two customers: totals 10, 20, 30; the third without a note."""
    customers = store.model("agents.shop.customer")
    ada = customers.Create({"name": "Ada", "email": "ada@example.com"})
    alan = customers.Create({"name": "Alan", "email": "alan@example.com"})
    model = store.model("order", assistant="shop")
    model.Create({"customer_id": ada, "item": "red mug", "total": 10, "note": "gift"})
    model.Create({"customer_id": ada, "item": "blue mug", "total": "20.00", "note": "x"})
    model.Create({"customer_id": alan, "item": "teapot", "total": 30, "status": "paid"})
    return model


def ids(rows):
    return [row["id"] for row in rows]


def test_create_fills_defaults_and_find_reads_it_back(store):
    model = store.model("agents.shop.order")
    new = model.Create({"customer_id": 1, "item": "mug", "total": 9.5, "meta": {"gift": True}})
    row = model.Find(new)
    assert row["quantity"] == 1 and row["status"] == "new" and row["paid"] is False
    assert row["total"] == 9.5 and row["meta"] == {"gift": True}
    assert row["created_at"] and row["updated_at"] and row["deleted_at"] is None
    with pytest.raises(ToolError, match="no row with id 999"):
        model.Find(999)


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ({"column": "total", "value": 20}, [2]),
        ({"column": "total", "value": 20, "op": "="}, [2]),
        ({"column": "total", "value": 10, "op": ">"}, [2, 3]),
        ({"column": "total", "value": 20, "op": ">="}, [2, 3]),
        ({"column": "total", "value": 20, "op": "<"}, [1]),
        ({"column": "total", "value": 20, "op": "<="}, [1, 2]),
        ({"column": "total", "value": 20, "op": "<>"}, [1, 3]),
        ({"column": "total", "value": "20", "op": "ge"}, [2, 3]),  # Yao's name, text value
        ({"column": "item", "value": "%mug", "op": "like"}, [1, 2]),
        ({"column": "item", "value": "MUG", "op": "match"}, [1, 2]),
        ({"column": "total", "value": [10, 30], "op": "in"}, [1, 3]),
        ({"column": "note", "op": "null"}, [3]),
        ({"column": "note", "op": "notnull"}, [1, 2]),
    ],
)
def test_every_where_operator(orders, where, expected):
    assert ids(orders.Get({"wheres": [where]})) == expected


def test_or_and_groups(orders):
    either = [
        {"column": "total", "value": 10},
        {"column": "total", "value": 30, "method": "orWhere"},
    ]
    assert ids(orders.Get({"wheres": either})) == [1, 3]
    grouped = [{"column": "status", "value": "new"}, {"wheres": [either[0], {**either[1]}]}]
    assert ids(orders.Get({"wheres": grouped})) == [1]
    shorthand = [
        {"column": "item", "value": "teapot"},
        {"column": "total", "value": 10, "or": True},
    ]
    assert ids(orders.Get({"wheres": shorthand})) == [1, 3]


def test_orders_limit_and_select(orders):
    rows = orders.Get(
        {"orders": [{"column": "total", "option": "desc"}], "limit": 2, "select": ["id", "item"]}
    )
    assert rows == [{"id": 3, "item": "teapot"}, {"id": 2, "item": "blue mug"}]


def test_paginate(orders):
    page = orders.Paginate({"orders": [{"column": "id"}]}, 2, 2)
    assert ids(page["data"]) == [3]
    assert {k: page[k] for k in ("page", "pagesize", "pagecnt", "total", "next", "prev")} == {
        "page": 2, "pagesize": 2, "pagecnt": 2, "total": 3, "next": -1, "prev": 1,
    }  # fmt: skip
    first = orders.Paginate({"wheres": [{"column": "item", "value": "%mug", "op": "like"}]})
    assert first["total"] == 2 and first["next"] == -1 and first["prev"] == -1


def test_update_save_and_each_save(orders):
    assert orders.Update(1, {"status": "paid", "paid": True}) is None
    assert orders.Find(1)["status"] == "paid" and orders.Find(1)["paid"] is True
    with pytest.raises(ToolError, match="no row with id 42"):
        orders.Update(42, {"status": "paid"})
    assert orders.Save({"id": 2, "note": "saved"}) == 2
    assert orders.Find(2)["note"] == "saved"
    created = orders.Save({"customer_id": 1, "item": "saucer", "total": 4})
    assert orders.Find(created)["item"] == "saucer"
    saved = orders.EachSave(
        [{"id": 3, "note": "n"}, {"customer_id": 2, "item": "cup", "total": 5}], {"quantity": 7}
    )
    assert (
        saved[0] == 3 and orders.Find(3)["quantity"] == 7 and orders.Find(saved[1])["quantity"] == 7
    )


def test_delete_is_soft_and_destroy_is_not(store, orders):
    orders.Delete(1)
    assert ids(orders.Get()) == [2, 3]
    with pytest.raises(ToolError):
        orders.Find(1)
    with store.engine.connect() as connection:  # the row is still there, marked
        kept = connection.execute(sa.text("select deleted_at from orders where id = 1")).scalar()
    assert kept is not None
    orders.Destroy(2)
    with store.engine.connect() as connection:
        assert connection.execute(sa.text("select count(*) from orders")).scalar() == 2


def test_insert_update_where_delete_where_destroy_where(store, orders):
    assert orders.Insert(["customer_id", "item", "total"], [[1, "jug", 3], [2, "pan", 4]]) is None
    assert ids(orders.Get()) == [1, 2, 3, 4, 5]
    mugs = {"wheres": [{"column": "item", "value": "%mug", "op": "like"}]}
    assert orders.UpdateWhere(mugs, {"status": "paid"}) == 2
    assert [r["status"] for r in orders.Get(mugs)] == ["paid", "paid"]
    assert orders.DeleteWhere(mugs) == 2
    assert ids(orders.Get()) == [3, 4, 5]
    assert orders.DestroyWhere({"wheres": [{"column": "total", "value": 3}]}) == 1
    with store.engine.connect() as connection:
        assert connection.execute(sa.text("select count(*) from orders")).scalar() == 4


def test_withs_load_has_many_and_has_one(store, orders):
    customers = store.model("agents.shop.customer")
    ada = customers.Find(1, {"withs": {"orders": {}}})
    assert ids(ada["orders"]) == [1, 2]
    filtered = customers.Get(
        {"withs": {"orders": {"query": {"wheres": [{"column": "total", "value": 20, "op": ">="}]}}}}
    )
    assert [ids(c["orders"]) for c in filtered] == [[2], [3]]
    order = orders.Find(3, {"withs": {"customer": {}}, "select": ["id", "item"]})
    assert order["customer"]["name"] == "Alan" and order["item"] == "teapot"
    orders.Delete(2)  # soft-deleted rows are left out of relations too
    assert ids(customers.Find(1, {"withs": ["orders"]})["orders"]) == [1]


def test_mistakes_are_tool_errors_a_model_can_read(orders):
    with pytest.raises(ToolError, match=r"unknown column 'totl'.*did you mean \"total\""):
        orders.Create({"totl": 1})
    with pytest.raises(ToolError, match="not one of new, paid"):
        orders.Create({"customer_id": 1, "item": "x", "total": 1, "status": "shipped"})
    with pytest.raises(ToolError, match="unknown op 'between'"):
        orders.Get({"wheres": [{"column": "total", "op": "between", "value": 1}]})
    with pytest.raises(ToolError, match="unknown column 'colour' in wheres"):
        orders.Get({"wheres": [{"column": "colour", "value": 1}]})
    with pytest.raises(ToolError, match=r"unknown key 'where'.*did you mean \"wheres\""):
        orders.Get({"where": []})
    with pytest.raises(ToolError, match="no relation 'items'"):
        orders.Get({"withs": {"items": {}}})
    with pytest.raises(ToolError, match="has no method 'Fnd'"):
        orders.method("Fnd")


def test_constraint_violations_are_tool_errors(store):
    customers = store.model("agents.shop.customer")
    customers.Create({"name": "Ada", "email": "ada@example.com"})
    with pytest.raises(ToolError, match="constraint violated"):
        customers.Create({"name": "Ada again", "email": "ada@example.com"})
    with pytest.raises(ToolError, match="constraint violated"):
        customers.Create({"email": "nameless@example.com"})  # name is NOT NULL, as in Yao


def test_datetimes_are_read_from_iso_text_and_answered_as_iso_text(orders):
    orders.Update(1, {"due": "2026-12-24T18:30:00Z"})
    assert orders.Find(1)["due"] == "2026-12-24T18:30:00"
    assert ids(orders.Get({"wheres": [{"column": "due", "value": "2026-12-24", "op": ">"}]})) == [1]


def test_values_of_a_model_file_are_inserted_when_its_table_is_created(database_url, tmp_path):
    seeded = {**CUSTOMER, "values": [{"name": "Ada", "email": "ada@example.com"}]}
    package = write_models(tmp_path / "shop", customer=seeded, order=ORDER)
    store = open_store(database_url, package)
    try:
        assert [c["name"] for c in store.model("agents.shop.customer").Get()] == ["Ada"]
    finally:
        store.close()
    again = open_store(database_url, package)  # loaded again: not inserted twice
    try:
        assert len(again.model("agents.shop.customer").Get()) == 1
    finally:
        again.close()


def test_an_unreachable_database_is_a_storage_error_naming_it(tmp_path):
    import socket

    from agentcli.errors import StorageError

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    package = write_models(tmp_path / "shop", customer=CUSTOMER, order=ORDER)
    url = f"postgresql://someone:secret@127.0.0.1:{port}/shop"
    with pytest.raises(
        StorageError,
        match=rf"cannot use the database postgresql\+psycopg://someone:\*\*\*@127\.0\.0\.1:{port}/shop",
    ):
        open_store(url, package)


def test_the_default_database_is_the_state_folders_sqlite_file(tmp_path):
    state = StateDir(tmp_path / "state", "dir")
    assert resolve_url(state, {}) == f"sqlite:///{tmp_path / 'state' / 'data.sqlite3'}"
    assert (
        resolve_url(state, {"AGENTCLI_DATABASE_URL": "postgres://u@h/d"})
        == "postgresql+psycopg://u@h/d"
    )

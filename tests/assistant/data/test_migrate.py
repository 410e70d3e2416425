"""Tables follow their model files: additive changes are applied on load, destructive
ones refused with a message naming ``agent migrate --reset`` (SQLite and PostgreSQL)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcli.assistant.data.migrate import MigrationRefused
from agentcli.cli.main import _register, app
from tests.assistant.data.models import CUSTOMER, ORDER, write_models
from tests.assistant.data.test_methods import open_store

_register()


def changed(**columns: dict) -> dict:
    """ORDER with columns replaced or added by name (None removes one)."""
    body = copy.deepcopy(ORDER)
    by_name = {c["name"]: c for c in body["columns"]}
    for name, column in columns.items():
        if column is None:
            by_name.pop(name)
        else:
            by_name[name] = {"name": name, **column}
    body["columns"] = list(by_name.values())
    return body


@pytest.fixture
def seeded(database_url: str, tmp_path: Path) -> tuple[str, Path]:
    """A package whose tables exist and hold an order."""
    package = write_models(tmp_path / "shop", customer=CUSTOMER, order=ORDER)
    store = open_store(database_url, package)
    store.model("agents.shop.order").Create({"customer_id": 1, "item": "mug", "total": 5})
    store.close()
    return database_url, package


def test_an_added_column_and_index_are_applied_and_rows_kept(seeded):
    url, package = seeded
    body = changed(
        colour={"type": "string", "nullable": True, "index": True},
        rank={"type": "integer", "default": 3},
        code={"type": "string", "nullable": True, "unique": True},
    )
    write_models(package, order=body)
    store = open_store(url, package)
    try:
        model = store.model("agents.shop.order")
        row = model.Find(1)
        assert row["item"] == "mug" and row["colour"] is None and row["rank"] == 3
        model.Create({"customer_id": 1, "item": "jug", "total": 2, "colour": "red", "code": "A"})
        assert [
            r["item"] for r in model.Get({"wheres": [{"column": "colour", "value": "red"}]})
        ] == ["jug"]
        from agentcli.errors import ToolError

        with pytest.raises(ToolError, match="constraint violated"):  # the unique index holds
            model.Create({"customer_id": 1, "item": "pan", "total": 2, "code": "A"})
    finally:
        store.close()


@pytest.mark.parametrize(
    ("columns", "problem"),
    [
        ({"note": None}, "column 'note' was removed"),
        ({"item": {"type": "integer"}}, "column 'item' changed (kind, length)"),
        ({"item": {"type": "string", "length": 10}}, "column 'item' changed (length)"),
        ({"note": {"type": "text"}}, "column 'note' changed (nullable)"),
        ({"status": {"type": "enum", "option": ["new"]}}, "column 'status' changed"),
        ({"rank": {"type": "integer"}}, "new column 'rank' is NOT NULL without a default"),
    ],
)
def test_a_destructive_change_is_refused_naming_migrate_reset(seeded, columns, problem):
    url, package = seeded
    write_models(package, order=changed(**columns))
    with pytest.raises(MigrationRefused) as caught:
        open_store(url, package)
    message = str(caught.value)
    assert problem in message and "order.mod.yao" in message
    assert "agent migrate --reset shop" in message


def test_agent_migrate_reset_recreates_the_tables(seeded, monkeypatch, tmp_path):
    url, package = seeded
    write_models(package, order=changed(note=None))
    monkeypatch.setenv("AGENTCLI_DATABASE_URL", url)
    refused = CliRunner().invoke(app, ["migrate", str(package)])
    assert refused.exit_code == 2 and "agent migrate --reset shop" in refused.output
    done = CliRunner().invoke(app, ["migrate", str(package), "--reset", "--yes"])
    assert done.exit_code == 0, done.output
    assert "Reset customer, orders" in done.output
    store = open_store(url, package)
    try:
        assert store.model("agents.shop.order").Get() == []  # the rows went with the table
    finally:
        store.close()
    again = CliRunner().invoke(app, ["migrate", str(package)])
    assert again.exit_code == 0 and "agents.shop.order: table orders up to date" in again.output


def test_migrate_uses_the_state_folder_by_default(tmp_path, monkeypatch):
    monkeypatch.delenv("AGENTCLI_DATABASE_URL", raising=False)
    package = write_models(tmp_path / "shop", customer=CUSTOMER, order=ORDER)
    result = CliRunner().invoke(app, ["migrate", str(package), "--state", str(tmp_path / "state")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "state" / "data.sqlite3").is_file()
    empty = tmp_path / "plain"
    empty.mkdir()
    (empty / "package.yao").write_text('{"name": "Plain", "connector": "echo"}')
    plain = CliRunner().invoke(app, ["migrate", str(empty)])
    assert plain.exit_code == 0 and "has no data models" in plain.output

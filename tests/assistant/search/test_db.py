"""``ctx.search.db`` over a package's data model, on SQLite and a real PostgreSQL (the
``database_url`` fixture runs each test on both): BM25 order, wheres, max_results, soft
deletes, and mistakes as error values."""

from __future__ import annotations

import json
from pathlib import Path

from tests.assistant.search.conftest import package

TICKET = {
    "name": "Ticket",
    "table": {"name": "tickets"},
    "columns": [
        {"name": "id", "type": "ID"},
        {"name": "title", "type": "string", "length": 200},
        {"name": "body", "type": "text", "nullable": True},
        {"name": "status", "type": "enum", "option": ["open", "closed"], "default": "open"},
        {"name": "priority", "type": "integer", "default": 1},
    ],
    "values": [
        {
            "title": "Printer jams",
            "body": "The office printer jams on every page.",
            "status": "open",
        },
        {
            "title": "Password reset mail missing",
            "body": "No reset mail arrives.",
            "status": "open",
        },
        {"title": "Printer toner", "body": "Order printer toner.", "status": "closed"},
        {"title": "VPN drops", "body": "The VPN drops at noon; printer fine.", "status": "open"},
    ],
    "option": {"soft_deletes": True},
}

NEXT = """
import json

def Next(ctx, payload):
    options = json.loads(payload["messages"][-1]["content"])
    query = options.pop("q")
    if options.pop("delete", None):
        ctx.process("models.agents.desk.ticket.Delete", 1)
    return {"data": ctx.search.DB(query, options).to_dict()}
"""


def _desk(assistants: Path) -> None:
    package(
        assistants,
        "desk",
        json.dumps(
            {
                "name": "Desk",
                "connector": "echo",
                "db": {"models": ["ticket"]},
                "search": {"db": {"max_results": 2}},
                "uses": {"search": "disabled"},
            }
        ),
        {"models/ticket.mod.yao": json.dumps(TICKET), "src/index.py": NEXT},
    )


async def _ask(registry, **options) -> dict:
    return (await registry.get("desk").respond(json.dumps(options))).next


async def test_rows_are_ranked_by_bm25_and_cut_at_max_results(
    assistants: Path, make_registry, database_url: str
) -> None:
    _desk(assistants)
    registry = make_registry({"AGENTCLI_DATABASE_URL": database_url})
    result = await _ask(registry, q="printer jams")
    assert "error" not in result, result
    assert result["type"] == "db" and result["total"] == 3  # three rows say "printer"
    first, second = result["items"]  # search.db.max_results
    assert first["title"] == "Printer jams" and first["model"] == "agents.desk.ticket"
    assert first["url"] == "db://agents.desk.ticket/1" and first["record_id"] == 1
    assert first["content"] == "body: The office printer jams on every page."
    assert first["data"]["status"] == "open" and 1 > first["score"] > second["score"] > 0
    assert [i["citation_id"] for i in result["items"]] == ["1", "2"]

    wide = await _ask(registry, q="PRINTER", limit=10)  # any case
    assert {i["record_id"] for i in wide["items"]} == {1, 3, 4}


async def test_wheres_filter_and_deleted_rows_are_not_found(
    assistants: Path, make_registry, database_url: str
) -> None:
    _desk(assistants)
    registry = make_registry({"AGENTCLI_DATABASE_URL": database_url})
    closed = await _ask(registry, q="printer", wheres=[{"column": "status", "value": "closed"}])
    assert [i["title"] for i in closed["items"]] == ["Printer toner"]
    gone = await _ask(registry, q="printer", limit=10, delete=True)
    assert {i["record_id"] for i in gone["items"]} == {3, 4}
    none = await _ask(registry, q="kangaroo")
    assert none["items"] == [] and none["total"] == 0 and "error" not in none


async def test_mistakes_are_error_values(
    assistants: Path, make_registry, database_url: str
) -> None:
    _desk(assistants)
    registry = make_registry({"AGENTCLI_DATABASE_URL": database_url})
    bad = await _ask(registry, q="printer", wheres=[{"column": "colour", "value": 1}])
    assert bad["error"].startswith("db search over agents.desk.ticket: unknown column 'colour'")
    unknown = await _ask(registry, q="printer", models=["tiket"])
    assert unknown["error"].startswith("db search: unknown data model 'tiket'")
    assert unknown["error"].endswith("(models: agents.desk.ticket)")

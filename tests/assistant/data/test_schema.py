"""Model files read into typed values; every mistake is a file:line error saying what to
write, with a did-you-mean where a name was misspelt."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from agentcli.assistant.data.schema import load_models
from agentcli.errors import PackageError
from tests.assistant.data.models import CUSTOMER, ORDER, write_models

ROOT = Path(__file__).resolve().parents[3]


def test_the_shop_example_loads():
    specs = {s.id: s for s in load_models(ROOT / "assistants" / "shop", "shop")}
    assert set(specs) == {"customer", "order"}
    order = specs["order"]
    assert order.process_id == "agents.shop.order" and order.table == "orders"
    assert order.primary == "id" and order.soft_deletes and order.timestamps
    assert [c.name for c in order.columns][-3:] == ["created_at", "updated_at", "deleted_at"]
    total = order.column("total")
    assert total is not None and (total.kind, total.precision, total.scale) == ("decimal", 10, 2)
    assert order.relations["customer"].type == "hasOne"
    assert specs["customer"].relations["orders"].key == "customer_id"


def test_nested_folders_are_dotted_and_defaults_are_yaos(tmp_path):
    log = {"columns": [{"name": "id", "type": "bigIncrements"}, {"name": "text", "type": "string"}]}
    write_models(tmp_path / "pkg", nested__log=log)
    (spec,) = load_models(tmp_path / "pkg", "pkg")
    assert spec.id == "nested.log" and spec.table == "nested_log"
    assert spec.process_id == "agents.pkg.nested.log"
    text = spec.column("text")
    assert text is not None and text.length == 200 and text.nullable is False


def write_raw(tmp_path: Path, text: str) -> Path:
    package = write_models(tmp_path / "pkg", customer=CUSTOMER)
    (package / "models" / "bad.mod.yao").write_text(text)
    return package


BAD = {
    "type": (
        '{\n  "columns": [\n    {"name": "id", "type": "ID"},\n    {"name": "title",\n     "type": "strnig"}\n  ]\n}',
        r'bad\.mod\.yao:5: column \'title\': unknown type \'strnig\' \(did you mean "string"\?\)',
    ),
    "key": (
        '{\n  "columns": [\n    {"name": "id", "type": "ID"},\n    {"name": "n", "type": "integer",\n      "nullabel": true}\n  ]\n}',
        r'bad\.mod\.yao:5: column: unknown key \'nullabel\' \(did you mean "nullable"\?\)',
    ),
    "primary": ('{"columns": [{"name": "n", "type": "integer"}]}', "needs a primary key"),
    "enum": (
        '{"columns": [{"name": "id", "type": "ID"},\n{"name": "s", "type": "enum"}]}',
        r"bad\.mod\.yao:2: enum column 's' needs \"option\"",
    ),
    "relation": (
        '{"columns": [{"name": "id", "type": "ID"}],\n "relations": {\n  "owner": {"type": "hasOne", "model": "custmer", "key": "id", "foreign": "id"}}}',
        r'bad\.mod\.yao:3: relation \'owner\': unknown model \'custmer\' \(did you mean "customer"\?\)',
    ),
    "relation type": (
        '{"columns": [{"name": "id", "type": "ID"}],\n "relations": {"o": {"type": "hasmany", "model": "customer", "key": "id", "foreign": "id"}}}',
        r'type must be hasOne or hasMany.*did you mean "hasMany"',
    ),
    "index": (
        '{"columns": [{"name": "id", "type": "ID"}],\n "indexes": [{"columns": ["nme"]}]}',
        r"bad\.mod\.yao:2: index over unknown column 'nme'",
    ),
    "scale": (
        '{"columns": [{"name": "id", "type": "ID"}, {"name": "d", "type": "decimal", "precision": 4, "scale": 6}]}',
        "scale 6 exceeds precision 4",
    ),
    "option": (
        '{"columns": [{"name": "id", "type": "ID"}], "option": {"timestamp": true}}',
        'did you mean "timestamps"',
    ),
    "json": (
        '{"columns": [\n  {"name": "id" "type": "ID"}]}',
        r"bad\.mod\.yao:2:\d+: invalid JSON",
    ),
}


@pytest.mark.parametrize("kind", BAD)
def test_mistakes_name_file_and_line(tmp_path, kind):
    text, pattern = BAD[kind]
    package = write_raw(tmp_path, text)
    with pytest.raises(PackageError, match=pattern):
        load_models(package, "pkg")


def test_two_models_on_one_table_are_refused(tmp_path):
    other = copy.deepcopy(ORDER)
    other["table"] = {"name": "customer"}
    package = write_models(tmp_path / "pkg", customer=CUSTOMER, order=other)
    with pytest.raises(PackageError, match="both use table 'customer'"):
        load_models(package, "pkg")


def test_a_package_without_models_has_none(tmp_path):
    (tmp_path / "pkg").mkdir()
    assert load_models(tmp_path / "pkg", "pkg") == []

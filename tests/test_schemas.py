"""The shipped JSON Schemas: valid Draft 2020-12, read alike by jsonschema and fastjsonschema."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

import agentcli
from agentcli.schemas import ShippedSchema

SHIPPED = sorted(Path(agentcli.__file__).parent.rglob("*.schema.json"))


def refs_with_siblings(schema: Any, where: str = "#") -> list[str]:
    """Where a ``$ref`` stands beside other keywords (draft 7 ignores those; 2020-12 not)."""
    if isinstance(schema, list):
        return [
            f for i, item in enumerate(schema) for f in refs_with_siblings(item, f"{where}/{i}")
        ]
    if not isinstance(schema, dict):
        return []
    found = [where] if "$ref" in schema and set(schema) - {"$ref", "description"} else []
    for key, value in schema.items():
        found += refs_with_siblings(value, f"{where}/{key}")
    return found


def test_the_schemas_are_shipped():
    assert [p.name for p in SHIPPED] == [
        "context.schema.json",
        "package.schema.json",
        "case.schema.json",
    ]


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_a_shipped_schema_is_valid_2020_12_and_means_the_same_to_fastjsonschema(path: Path):
    schema = ShippedSchema(path).schema
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert refs_with_siblings(schema) == []


def test_refs_with_siblings_are_found():
    assert refs_with_siblings({"a": {"$ref": "#/x", "type": "string"}}) == ["#/a"]
    assert refs_with_siblings({"a": {"allOf": [{"$ref": "#/x"}], "type": "string"}}) == []


def test_errors_are_empty_for_a_valid_value_and_complete_for_an_invalid_one(tmp_path: Path):
    path = tmp_path / "s.schema.json"
    path.write_text(
        '{"type": "object", "properties": {"a": {"type": "string"}, "b": {"minimum": 1}}}'
    )
    schema = ShippedSchema(path)
    assert schema.conforms({"a": "x", "b": 2}) and schema.errors({"a": "x", "b": 2}) == []
    errors = schema.errors({"a": 1, "b": 0})
    assert sorted(e.validator for e in errors) == ["minimum", "type"]


def test_the_compiled_validator_is_kept_as_code_and_imported_by_the_next_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path))
    case_schema = SHIPPED[[p.name for p in SHIPPED].index("case.schema.json")]
    first = ShippedSchema(case_schema)
    assert first.conforms({"id": "a", "input": "hi"}) and not first.conforms({"input": 5})
    [kept] = (tmp_path / "cache" / "schemas").glob("case_schema_root_*.py")
    again = ShippedSchema(case_schema)
    assert again.conforms({"id": "a", "input": "hi"}) and not again.conforms({"input": 5})
    # the second one came from the kept code: its function lives in that file
    validate = again.conforms.__closure__  # type: ignore[attr-defined]
    assert any(
        getattr(cell.cell_contents, "__code__", None) is not None
        and cell.cell_contents.__code__.co_filename == str(kept)
        for cell in validate or ()
    )


def test_a_damaged_or_unwritable_cache_costs_only_the_compile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    case_schema = SHIPPED[[p.name for p in SHIPPED].index("case.schema.json")]
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path))
    ShippedSchema(case_schema).conforms({"id": "a"})
    [kept] = (tmp_path / "cache" / "schemas").glob("case_schema_root_*.py")
    kept.write_text("this is not python (\n", encoding="utf-8")
    assert ShippedSchema(case_schema).conforms({"id": "a", "input": "hi"})  # compiled again
    blocked = tmp_path / "file"
    blocked.write_text("a file where the home folder should be", encoding="utf-8")
    monkeypatch.setenv("AGENTCLI_HOME", str(blocked))
    fresh = ShippedSchema(case_schema)
    assert fresh.conforms({"id": "a"}) and not fresh.conforms({"input": 5})

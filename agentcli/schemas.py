"""The JSON Schemas agentcli ships (``case.schema.json``, ``package.schema.json``), each
checked two ways: fastjsonschema compiles it once to Python code that answers "valid"
in microseconds, and only a value that fails pays for jsonschema (Draft 2020-12, imported
lazily), which finds every error for the messages.

fastjsonschema ignores the keywords beside a ``$ref`` (as draft 7 does; 2020-12 applies
them), so the shipped schemas put a ``$ref`` alone or inside ``allOf``, where both read it
alike; tests hold the two to the same answers on generated values.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["ShippedSchema"]


class ShippedSchema:
    """One schema file beside the code, compiled on first use; with ``definition``, the
    schema of one of its ``$defs`` (which may refer to the others)."""

    def __init__(self, path: Path, definition: str | None = None) -> None:
        self.path = path
        self.definition = definition

    @functools.cached_property
    def schema(self) -> dict[str, Any]:
        """The schema document (for a definition: one that refers to it, with the file's
        ``$defs``)."""
        schema: dict[str, Any] = json.loads(self.path.read_text(encoding="utf-8"))
        if self.definition is None:
            return schema
        return {
            "$schema": schema.get("$schema"),
            "$defs": schema.get("$defs", {}),
            "allOf": [{"$ref": f"#/$defs/{self.definition}"}],
        }

    @functools.cached_property
    def conforms(self) -> Callable[[Any], bool]:
        """Whether a value satisfies the schema (the compiled quick check)."""
        import fastjsonschema

        validate = fastjsonschema.compile(
            self.schema, detailed_exceptions=False, use_default=False, use_formats=False
        )
        invalid = fastjsonschema.JsonSchemaException

        def conforms(value: Any) -> bool:
            try:
                validate(value)
            except invalid:
                return False
            return True

        return conforms

    @functools.cached_property
    def validator(self) -> Any:
        """The jsonschema validator, which finds every error of an invalid value."""
        from jsonschema import Draft202012Validator

        return Draft202012Validator(self.schema)

    def errors(self, value: Any) -> list[Any]:
        """Every ``jsonschema.ValidationError`` of ``value`` ([] when it conforms)."""
        if self.conforms(value):
            return []
        return list(self.validator.iter_errors(value))

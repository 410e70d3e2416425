"""The JSON Schemas agentcli ships (``case.schema.json``, ``package.schema.json``), each
checked two ways: fastjsonschema compiles it once to Python code that answers "valid"
in microseconds, and only a value that fails pays for jsonschema (Draft 2020-12, imported
lazily), which finds every error for the messages.

fastjsonschema ignores the keywords beside a ``$ref`` (as draft 7 does; 2020-12 applies
them), so the shipped schemas put a ``$ref`` alone or inside ``allOf``, where both read it
alike; tests hold the two to the same answers on generated values.

Compiling the case schema takes ~25 ms, paid by every ``agent eval`` before its first
case; the generated code is therefore kept in ``$AGENTCLI_HOME/cache/schemas`` under a
hash of the schema and the fastjsonschema version, and imported (as bytecode) by later
runs. A cache that cannot be read or written costs only the compile.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentcli.home import data_home

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

        validate = _cached_validator(self.schema, self.path.stem, self.definition)
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


_OPTIONS: dict[str, Any] = {
    "detailed_exceptions": False,
    "use_default": False,
    "use_formats": False,
}
_ENTRY = "conforms_entry"  # the name the cached module gives the schema's function


def _cached_validator(
    schema: dict[str, Any], stem: str, definition: str | None
) -> Callable[[Any], Any]:
    """fastjsonschema's validator of ``schema``: imported from the cache when it holds this
    schema's code, else compiled (and the code written there for the next run)."""
    import fastjsonschema

    text = json.dumps([schema, fastjsonschema.VERSION, _OPTIONS], sort_keys=True)
    digest = hashlib.sha256(text.encode()).hexdigest()[:20]
    name = f"{stem.replace('.', '_')}_{definition or 'root'}_{digest}"
    path = data_home() / "cache" / "schemas" / f"{name}.py"
    if path.is_file():
        with contextlib.suppress(Exception):  # a damaged entry: compile as if it were absent
            return _imported(path, name)
    validate: Callable[[Any], Any] = fastjsonschema.compile(schema, **_OPTIONS)
    with contextlib.suppress(OSError):  # a read-only or full home: the next run compiles
        code = fastjsonschema.compile_to_code(schema, **_OPTIONS)
        _write(path, f"{code}\n\n{_ENTRY} = {validate.__name__}\n")
    return validate


def _imported(path: Path, name: str) -> Callable[[Any], Any]:
    """The entry function of the cached module at ``path`` (its bytecode cached beside it)."""
    spec = importlib.util.spec_from_file_location(f"agentcli_schema_cache.{name}", path)
    if spec is None or spec.loader is None:
        raise ImportError(path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    entry: Callable[[Any], Any] = getattr(module, _ENTRY)
    return entry


def _write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all (runs in parallel may race)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise

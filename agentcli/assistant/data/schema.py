"""Data model files (``models/**/*.mod.yao``, Yao's model format) read into typed values.

``models/order.mod.yao`` is the model ``order`` of its package (``agents.<id>.order`` to
``Process``), ``models/nested/log.mod.yao`` is ``nested.log``. Nothing here touches a
database or imports SQLAlchemy: a package's models are checked when it loads, and only a
package that has some pays for a database (``store.py``). Every mistake is a
``PackageError`` at ``file:line`` saying what to write instead.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NoReturn

from agentcli.assistant.data.positions import value_lines
from agentcli.assistant.jsonc import parse_jsonc, read_text
from agentcli.errors import PackageError

__all__ = [
    "SUFFIXES",
    "ColumnKind",
    "ColumnSpec",
    "IndexSpec",
    "ModelSpec",
    "RelationSpec",
    "load_models",
]

SUFFIXES = (".mod.yao", ".mod.json", ".mod.jsonc")

# What a column is stored as; Yao's many type names (``tinyInteger``, ``longText``,
# ``bigIncrements``...) each fall into one of these.
ColumnKind = Literal[
    "id",
    "string",
    "char",
    "text",
    "small_integer",
    "integer",
    "big_integer",
    "float",
    "double",
    "decimal",
    "boolean",
    "enum",
    "json",
    "date",
    "datetime",
    "time",
]
RelationKind = Literal["hasOne", "hasMany"]

_KINDS: dict[str, ColumnKind] = {
    **dict.fromkeys(
        ("id", "increments", "bigincrements", "smallincrements", "tinyincrements"), "id"
    ),
    **dict.fromkeys(("string", "uuid", "ipaddress", "macaddress"), "string"),
    "char": "char",
    **dict.fromkeys(("text", "mediumtext", "longtext"), "text"),
    **dict.fromkeys(
        ("tinyinteger", "unsignedtinyinteger", "smallinteger", "unsignedsmallinteger"),
        "small_integer",
    ),
    **dict.fromkeys(("integer", "unsignedinteger", "year"), "integer"),
    **dict.fromkeys(("biginteger", "unsignedbiginteger"), "big_integer"),
    **dict.fromkeys(("float", "unsignedfloat"), "float"),
    **dict.fromkeys(("double", "unsigneddouble"), "double"),
    **dict.fromkeys(("decimal", "unsigneddecimal"), "decimal"),
    "boolean": "boolean",
    "enum": "enum",
    **dict.fromkeys(("json", "jsonb"), "json"),
    "date": "date",
    **dict.fromkeys(("datetime", "datetimetz", "timestamp", "timestamptz"), "datetime"),
    **dict.fromkeys(("time", "timetz"), "time"),
}
_TYPE_NAMES = (
    "ID", "string", "char", "text", "mediumText", "longText", "tinyInteger", "smallInteger",
    "integer", "bigInteger", "float", "double", "decimal", "boolean", "enum", "json", "date",
    "datetime", "timestamp", "time", "uuid",
)  # fmt: skip
_COLUMN_KEYS = (
    "name", "type", "label", "title", "description", "comment", "length", "precision",
    "scale", "nullable", "option", "default", "default_raw", "example", "generate", "crypt",
    "validations", "index", "unique", "primary", "origin",
)  # fmt: skip
_MODEL_KEYS = (
    "name", "label", "description", "version", "table", "columns", "indexes", "relations",
    "option", "values", "comment",
)  # fmt: skip
_OPTION_KEYS = ("timestamps", "soft_deletes", "permission", "read_only", "trackings", "logging")
_RELATION_KEYS = ("type", "model", "key", "foreign", "query", "label", "links")
_INDEX_TYPES = ("index", "unique", "primary", "fulltext")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DEFAULT_STRING_LENGTH = 200  # Yao's
_DEFAULT_PRECISION, _DEFAULT_SCALE = 10, 2
TIMESTAMP_COLUMNS = ("created_at", "updated_at")
SOFT_DELETE_COLUMN = "deleted_at"


@dataclass(frozen=True, slots=True)
class ColumnSpec:
    """One column as the model file defines it (``type`` as written, ``kind`` as stored).
    As in Yao, a column is NOT NULL unless it says ``nullable: true``."""

    name: str
    type: str
    kind: ColumnKind
    length: int | None = None
    precision: int | None = None
    scale: int | None = None
    nullable: bool = False
    has_default: bool = False
    default: Any = None
    unique: bool = False
    index: bool = False
    primary: bool = False
    options: tuple[str, ...] = ()
    comment: str = ""

    def signature(self) -> dict[str, Any]:
        """What a migration compares: a change here alters stored data."""
        return {
            "kind": self.kind,
            "length": self.length,
            "precision": self.precision,
            "scale": self.scale,
            "nullable": self.nullable,
            "options": list(self.options),
            "primary": self.primary,
        }


@dataclass(frozen=True, slots=True)
class IndexSpec:
    """An index over one or more columns."""

    name: str
    columns: tuple[str, ...]
    unique: bool = False


@dataclass(frozen=True, slots=True)
class RelationSpec:
    """A ``hasOne`` / ``hasMany`` relation, loaded with ``withs``: rows of ``model`` whose
    ``key`` column equals this row's ``foreign`` column."""

    name: str
    type: RelationKind
    model: str
    key: str
    foreign: str
    query: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class ModelSpec:
    """One data model of a package."""

    id: str  # "order", "nested.log"
    assistant: str
    path: Path
    table: str
    columns: list[ColumnSpec]
    indexes: list[IndexSpec] = field(default_factory=list)
    relations: dict[str, RelationSpec] = field(default_factory=dict)
    timestamps: bool = False
    soft_deletes: bool = False
    values: list[dict[str, Any]] = field(default_factory=list)

    @property
    def process_id(self) -> str:
        """The name ``Process`` knows it by: ``agents.<assistant>.<model>``."""
        return f"agents.{self.assistant}.{self.id}"

    @property
    def primary(self) -> str:
        """The primary key column's name."""
        return next(c.name for c in self.columns if c.primary)

    def column(self, name: str) -> ColumnSpec | None:
        """The column called ``name``, if any."""
        return next((c for c in self.columns if c.name == name), None)


def load_models(package_dir: Path, assistant_id: str) -> list[ModelSpec]:
    """Every model under ``models/`` of a package, checked (relations included), by id."""
    root = Path(package_dir) / "models"
    if not root.is_dir():
        return []
    specs: dict[str, ModelSpec] = {}
    for path in sorted(root.rglob("*")):
        suffix = next((s for s in SUFFIXES if path.name.endswith(s)), None)
        if suffix is None or not path.is_file():
            continue
        model_id = path.relative_to(root).as_posix()[: -len(suffix)].replace("/", ".")
        if model_id in specs:
            raise PackageError(
                f"model {model_id!r} is defined twice (also in {specs[model_id].path})",
                path=str(path),
            )
        specs[model_id] = _Reader(path, model_id, assistant_id).read()
    tables: dict[str, ModelSpec] = {}
    for spec in specs.values():
        if spec.table in tables:
            raise PackageError(
                f"models {tables[spec.table].id!r} and {spec.id!r} both use table {spec.table!r}",
                path=str(spec.path),
                hint='give one of them another "table": {"name": ...}',
            )
        tables[spec.table] = spec
    for spec in specs.values():
        _check_relations(spec, specs)
    return [specs[key] for key in sorted(specs)]


def did_you_mean(value: str, choices: Iterable[str]) -> str:
    """`` (did you mean "x"?)`` for a near miss of one of ``choices``, else ""."""
    close = difflib.get_close_matches(value, list(choices), n=1, cutoff=0.6)
    return f' (did you mean "{close[0]}"?)' if close else ""


class _Reader:
    """Reads one model file; ``fail`` raises at the line of the value a path names."""

    def __init__(self, path: Path, model_id: str, assistant_id: str) -> None:
        self.path = path
        self.model_id = model_id
        self.assistant_id = assistant_id
        self.text = read_text(path)
        self._lines: dict[tuple[str | int, ...], int] | None = None

    def fail(self, where: tuple[str | int, ...], message: str, hint: str | None = None) -> NoReturn:
        """Raise ``message`` at the line of the value at ``where`` (or its nearest parent)."""
        if self._lines is None:
            self._lines = value_lines(self.text)
        line = None
        for cut in range(len(where), -1, -1):
            line = self._lines.get(where[:cut])
            if line is not None:
                break
        raise PackageError(message, path=str(self.path), line=line, hint=hint)

    def read(self) -> ModelSpec:
        """The checked ``ModelSpec`` of the file."""
        data = parse_jsonc(self.text, path=str(self.path))
        if not isinstance(data, dict):
            self.fail((), "a model must be a JSON object with columns")
        self._unknown_keys(data, (), _MODEL_KEYS, "model")
        table = data.get("table") or {}
        if not isinstance(table, dict):
            self.fail(("table",), '"table" must be an object such as {"name": "order"}')
        table_name = table.get("name") or self.model_id.replace(".", "_")
        if not isinstance(table_name, str) or not _NAME.fullmatch(table_name):
            self.fail(("table", "name"), f"table name {table_name!r} is not a plain identifier")
        option = data.get("option") or {}
        if not isinstance(option, dict):
            self.fail(("option",), '"option" must be an object such as {"timestamps": true}')
        self._unknown_keys(option, ("option",), _OPTION_KEYS, "option")
        spec = ModelSpec(
            id=self.model_id,
            assistant=self.assistant_id,
            path=self.path,
            table=table_name,
            columns=self._columns(data.get("columns")),
            timestamps=self._flag(option, "timestamps", ("option",)),
            soft_deletes=self._flag(option, "soft_deletes", ("option",)),
        )
        self._add_option_columns(spec)
        spec.indexes = self._indexes(data.get("indexes"), spec)
        spec.relations = self._relations(data.get("relations"))
        spec.values = self._values(data.get("values"), spec)
        return spec

    def _unknown_keys(
        self, data: dict[str, Any], where: tuple[str | int, ...], known: tuple[str, ...], what: str
    ) -> None:
        for key in data:
            if key not in known:
                self.fail(
                    (*where, key),
                    f"{what}: unknown key {key!r}{did_you_mean(key, known)}",
                    hint=f"known keys: {', '.join(known)}",
                )

    def _flag(self, data: dict[str, Any], key: str, where: tuple[str | int, ...]) -> bool:
        value = data.get(key, False)
        if not isinstance(value, bool):
            self.fail((*where, key), f'"{key}" must be true or false, got {value!r}')
        return bool(value)

    def _columns(self, raw: Any) -> list[ColumnSpec]:
        if not isinstance(raw, list) or not raw:
            self.fail(("columns",), 'a model needs "columns": a list of {name, type, ...}')
        columns: list[ColumnSpec] = []
        for index, item in enumerate(raw):
            column = self._column(item, ("columns", index))
            if any(c.name == column.name for c in columns):
                self.fail(("columns", index, "name"), f"column {column.name!r} is defined twice")
            columns.append(column)
        primaries = [c for c in columns if c.primary]
        if not primaries:
            ids = [c for c in columns if c.kind == "id"]
            if not ids:
                self.fail(
                    ("columns",),
                    "a model needs a primary key",
                    hint='add {"name": "id", "type": "ID"} to "columns"',
                )
            first = columns.index(ids[0])
            columns[first] = _replace(ids[0], primary=True)
        elif len(primaries) > 1:
            self.fail(
                ("columns",), "a model has one primary column; composite keys are not supported"
            )
        return columns

    def _column(self, item: Any, where: tuple[str | int, ...]) -> ColumnSpec:
        if not isinstance(item, dict):
            self.fail(
                where, 'a column must be an object such as {"name": "title", "type": "string"}'
            )
        self._unknown_keys(item, where, _COLUMN_KEYS, "column")
        name = item.get("name")
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            self.fail((*where, "name"), f"column name must be a plain identifier, got {name!r}")
        kind_name = item.get("type")
        kind = _KINDS.get(str(kind_name).lower()) if isinstance(kind_name, str) else None
        if kind is None:
            self.fail(
                (*where, "type"),
                f"column {name!r}: unknown type {kind_name!r}{did_you_mean(str(kind_name), _TYPE_NAMES)}",
                hint=f"use one of: {', '.join(_TYPE_NAMES)}",
            )
        flags = {k: self._flag(item, k, where) for k in ("unique", "index", "primary")}
        nullable = item.get("nullable", False)
        if not isinstance(nullable, bool):
            self.fail((*where, "nullable"), f'column {name!r}: "nullable" must be true or false')
        column = ColumnSpec(
            name=name,
            type=str(kind_name),
            kind=kind,
            length=self._size(item, "length", where, name),
            precision=self._size(item, "precision", where, name),
            scale=self._size(item, "scale", where, name, zero=True),
            nullable=bool(nullable) and not flags["primary"] and kind != "id",
            has_default="default" in item and item["default"] is not None,
            default=item.get("default"),
            unique=flags["unique"],
            index=flags["index"],
            primary=flags["primary"],
            options=self._enum_options(item, where, name, kind),
            comment=str(item.get("comment") or item.get("label") or ""),
        )
        return self._sized(column, where)

    def _size(
        self,
        item: dict[str, Any],
        key: str,
        where: tuple[str | int, ...],
        name: str,
        *,
        zero: bool = False,
    ) -> int | None:
        value = item.get(key)
        if value is None:
            return None
        low = 0 if zero else 1
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            self.fail(
                (*where, key),
                f"column {name!r}: {key!r} must be an integer >= {low}, got {value!r}",
            )
        return int(value)

    def _enum_options(
        self, item: dict[str, Any], where: tuple[str | int, ...], name: str, kind: ColumnKind
    ) -> tuple[str, ...]:
        raw = item.get("option")
        if kind != "enum":
            return ()
        if not isinstance(raw, list) or not raw or not all(isinstance(o, str) and o for o in raw):
            self.fail(
                (*where, "option"),
                f'enum column {name!r} needs "option": a list of its values',
                hint='e.g. "option": ["pending", "paid"]',
            )
        options = tuple(raw)
        default = item.get("default")
        if default is not None and default not in options:
            self.fail(
                (*where, "default"),
                f"enum column {name!r}: default {default!r} is not one of its options"
                f"{did_you_mean(str(default), options)}",
            )
        return options

    def _sized(self, column: ColumnSpec, where: tuple[str | int, ...]) -> ColumnSpec:
        """The column with Yao's default sizes filled in, checked."""
        if column.kind in ("string", "char") and column.length is None:
            length = 36 if column.type.lower() == "uuid" else _DEFAULT_STRING_LENGTH
            column = _replace(column, length=length)
        if column.kind == "enum":
            column = _replace(column, length=max(len(o) for o in column.options))
        if column.kind == "decimal":
            precision = column.precision or _DEFAULT_PRECISION
            scale = _DEFAULT_SCALE if column.scale is None else column.scale
            if scale > precision:
                self.fail(
                    (*where, "scale"),
                    f"column {column.name!r}: scale {scale} exceeds precision {precision}",
                )
            column = _replace(column, precision=precision, scale=scale)
        return column

    def _add_option_columns(self, spec: ModelSpec) -> None:
        """``timestamps`` and ``soft_deletes`` add their columns (unless defined already)."""
        extra = [*TIMESTAMP_COLUMNS] if spec.timestamps else []
        if spec.soft_deletes:
            extra.append(SOFT_DELETE_COLUMN)
        for name in extra:
            if spec.column(name) is None:
                spec.columns.append(
                    ColumnSpec(
                        name=name,
                        type="timestamp",
                        kind="datetime",
                        nullable=True,
                        index=name == SOFT_DELETE_COLUMN,
                    )
                )

    def _indexes(self, raw: Any, spec: ModelSpec) -> list[IndexSpec]:
        if raw is None:
            return []
        if not isinstance(raw, list):
            self.fail(("indexes",), '"indexes" must be a list of {name, columns, type}')
        indexes = []
        for position, item in enumerate(raw):
            where = ("indexes", position)
            if not isinstance(item, dict):
                self.fail(where, "an index must be an object {name, columns, type}")
            columns = item.get("columns")
            if (
                not isinstance(columns, list)
                or not columns
                or not all(isinstance(c, str) for c in columns)
            ):
                self.fail((*where, "columns"), 'an index needs "columns": a list of column names')
            for name in columns:
                if spec.column(name) is None:
                    known = [c.name for c in spec.columns]
                    self.fail(
                        (*where, "columns"),
                        f"index over unknown column {name!r}{did_you_mean(name, known)}",
                    )
            kind = item.get("type", "index")
            if kind not in _INDEX_TYPES:
                self.fail(
                    (*where, "type"),
                    f"index type must be one of {', '.join(_INDEX_TYPES)}, got {kind!r}",
                )
            name = item.get("name") or f"idx_{spec.table}_{'_'.join(columns)}"
            if not isinstance(name, str) or not _NAME.fullmatch(name):
                self.fail((*where, "name"), f"index name {name!r} is not a plain identifier")
            indexes.append(IndexSpec(name, tuple(columns), unique=kind in ("unique", "primary")))
        return indexes

    def _relations(self, raw: Any) -> dict[str, RelationSpec]:
        if raw is None:
            return {}
        if not isinstance(raw, dict):
            self.fail(
                ("relations",), '"relations" must be an object {name: {type, model, key, foreign}}'
            )
        relations = {}
        for name, item in raw.items():
            where = ("relations", name)
            if not isinstance(item, dict):
                self.fail(
                    where, f"relation {name!r} must be an object {{type, model, key, foreign}}"
                )
            self._unknown_keys(item, where, _RELATION_KEYS, f"relation {name!r}")
            kind = item.get("type")
            if kind not in ("hasOne", "hasMany"):
                self.fail(
                    (*where, "type"),
                    f"relation {name!r}: type must be hasOne or hasMany, got {kind!r}"
                    f"{did_you_mean(str(kind), ('hasOne', 'hasMany'))}",
                )
            for key in ("model", "key", "foreign"):
                if not isinstance(item.get(key), str) or not item[key]:
                    self.fail((*where, key), f'relation {name!r} needs "{key}"')
            query = item.get("query") or {}
            if not isinstance(query, dict):
                self.fail((*where, "query"), f'relation {name!r}: "query" must be an object')
            relations[name] = RelationSpec(
                name, kind, item["model"], item["key"], item["foreign"], query
            )
        return relations

    def _values(self, raw: Any, spec: ModelSpec) -> list[dict[str, Any]]:
        if raw is None:
            return []
        if not isinstance(raw, list) or not all(isinstance(row, dict) for row in raw):
            self.fail(("values",), '"values" must be a list of rows (objects)')
        return list(raw)


def _check_relations(spec: ModelSpec, specs: dict[str, ModelSpec]) -> None:
    """Every relation names a model of the package and columns both sides have."""
    lines: dict[tuple[str | int, ...], int] | None = None
    for relation in spec.relations.values():
        target = specs.get(relation.model.removeprefix(f"agents.{spec.assistant}."))
        problem = None
        if target is None:
            problem = f"relation {relation.name!r}: unknown model {relation.model!r}{did_you_mean(relation.model, specs)}"
        elif target.column(relation.key) is None:
            problem = f"relation {relation.name!r}: model {target.id!r} has no column {relation.key!r} (its key)"
        elif spec.column(relation.foreign) is None:
            problem = f"relation {relation.name!r}: this model has no column {relation.foreign!r} (its foreign)"
        if problem:
            lines = lines or value_lines(read_text(spec.path))
            line = lines.get(("relations", relation.name))
            raise PackageError(problem, path=str(spec.path), line=line)


def _replace(column: ColumnSpec, **changes: Any) -> ColumnSpec:
    import dataclasses

    return dataclasses.replace(column, **changes)

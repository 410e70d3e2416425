"""Model files the data-model tests write: a customer hasMany order pair."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CUSTOMER: dict[str, Any] = {
    "name": "Customer",
    "table": {"name": "customer"},
    "columns": [
        {"name": "id", "type": "ID"},
        {"name": "name", "type": "string", "length": 80},
        {"name": "email", "type": "string", "unique": True},
    ],
    "relations": {
        "orders": {"type": "hasMany", "model": "order", "key": "customer_id", "foreign": "id"}
    },
}
ORDER: dict[str, Any] = {
    "name": "Order",
    "table": {"name": "orders"},
    "columns": [
        {"name": "id", "type": "ID"},
        {"name": "customer_id", "type": "integer", "index": True},
        {"name": "item", "type": "string", "length": 50},
        {"name": "quantity", "type": "integer", "default": 1},
        {"name": "total", "type": "decimal", "precision": 10, "scale": 2},
        {"name": "status", "type": "enum", "option": ["new", "paid"], "default": "new"},
        {"name": "paid", "type": "boolean", "default": False},
        {"name": "meta", "type": "json", "nullable": True},
        {"name": "note", "type": "text", "nullable": True},
        {"name": "due", "type": "datetime", "nullable": True},
    ],
    "relations": {
        "customer": {"type": "hasOne", "model": "customer", "key": "id", "foreign": "customer_id"}
    },
    "indexes": [{"name": "idx_orders_customer_status", "columns": ["customer_id", "status"]}],
    "option": {"timestamps": True, "soft_deletes": True},
}


def write_models(package: Path, **models: dict[str, Any]) -> Path:
    """A package folder with ``models/<name>.mod.yao`` for each keyword (``__`` -> ``/``)."""
    (package / "models").mkdir(parents=True, exist_ok=True)
    (package / "package.yao").write_text(json.dumps({"name": package.name, "connector": "echo"}))
    for name, body in models.items():
        path = package / "models" / (name.replace("__", "/") + ".mod.yao")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(body, indent=2))
    return package

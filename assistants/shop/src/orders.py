"""The place_order tool: finds the customer, numbers the order and stores it, through
``process`` (Yao's Process) on the package's data models."""

from __future__ import annotations

from typing import Any

from agentcli import process


def Place(arguments: dict[str, Any]) -> dict[str, Any]:
    """Store an order for the customer with ``email``; the model sees what was stored."""
    found = process(
        "models.agents.shop.customer.Get",
        {"wheres": [{"column": "email", "value": arguments["email"]}], "limit": 1},
    )
    if not found:
        raise ValueError(f"no customer with email {arguments['email']!r}")
    quantity = int(arguments.get("quantity") or 1)
    total = round(quantity * float(arguments["price"]), 2)
    count = process("models.agents.shop.order.Paginate", {}, 1, 1)["total"]
    order_no = f"ORD-{count + 1:04d}"
    order_id = process(
        "models.agents.shop.order.Create",
        {
            "order_no": order_no,
            "customer_id": found[0]["id"],
            "item": arguments["item"],
            "quantity": quantity,
            "total": total,
        },
    )
    return {"id": order_id, "order_no": order_no, "status": "submitted", "total": total}

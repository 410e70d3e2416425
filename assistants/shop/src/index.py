"""The Create hook of the shop: tells the model who the customer is and what they ordered
before, read from the data models with ``ctx.process``."""

from __future__ import annotations

from typing import Any


def Create(ctx: Any, messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Add a system message about the customer named in metadata ``email`` (if any)."""
    email = ctx.metadata.get("email")
    if not email:
        return None
    customers = ctx.process(
        "models.agents.shop.customer.Get",
        {"wheres": [{"column": "email", "value": email}], "withs": {"orders": {}}},
    )
    if not customers:
        return None
    customer = customers[0]
    note = f"Customer: {customer['name']} ({customer['tier']}), {len(customer['orders'])} order(s)."
    ctx.memory.user.set("customer", customer["name"])  # eval: a `state` path checks it
    return {"messages": [{"role": "system", "content": note}, *messages]}

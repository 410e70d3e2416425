"""The expense tools (mcps/expense.mcp.yao maps the tool names to these functions).

Expenses are kept per user in ``ctx.memory.user`` — the SQLite store under
``$AGENTCLI_HOME`` — so they survive between runs and ``-u`` separates users.
"""

from __future__ import annotations

import time
from typing import Any

CATEGORIES = ("travel", "meals", "lodging", "office", "other")
_SYNONYMS = {
    "meal": "meals",
    "lunch": "meals",
    "dinner": "meals",
    "breakfast": "meals",
    "food": "meals",
    "hotel": "lodging",
    "flight": "travel",
    "taxi": "travel",
    "train": "travel",
    "supplies": "office",
}


def category_of(text: Any) -> str:
    """A known category for what the user (or the model) called it."""
    word = str(text or "").strip().lower()
    word = _SYNONYMS.get(word, word)
    return word if word in CATEGORIES else "other"


def SubmitExpense(args: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """Submit one expense and return it with its id."""
    amount = round(float(args["amount"]), 2)
    if amount <= 0:
        raise ValueError("amount must be greater than zero")
    number = int(ctx.memory.user.incr("expense_seq"))
    expense = {
        "id": f"EXP-{number:04d}",
        "amount": amount,
        "category": category_of(args.get("category")),
        "description": str(args.get("description") or ""),
        "status": "submitted",
        "submitted_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }
    ctx.memory.user.push("expenses", expense)
    return expense


def ListExpenses(args: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """The user's expenses (optionally of one category) and their total."""
    expenses = ctx.memory.user.get("expenses", [])
    if args.get("category"):
        wanted = category_of(args["category"])
        expenses = [e for e in expenses if e.get("category") == wanted]
    total = round(sum(float(e.get("amount", 0)) for e in expenses), 2)
    return {"expenses": expenses, "count": len(expenses), "total": total}


def Setup(args: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """Prepare the expense system (init), report its state (status) or delete the user's
    expenses (reset)."""
    action = args.get("action", "init")
    if action == "reset":
        ctx.memory.user.delete("expenses")
        ctx.memory.user.delete("expense_seq")
    if action in ("init", "reset"):
        ctx.memory.user.set("expense_system", {"status": "ready", "categories": list(CATEGORIES)})
    system = ctx.memory.user.get("expense_system")
    if system is None:
        return {"success": False, "status": "not_ready", "message": "Run setup with action init"}
    count = len(ctx.memory.user.get("expenses", []))
    message = {
        "init": "Expense system setup complete",
        "reset": "Expense system reset complete: every expense was deleted",
        "status": f"Expense system is ready with {count} expense(s)",
    }[action]
    return {
        "success": True,
        "status": system["status"],
        "message": message,
        "categories": system["categories"],
        "data": {"expenses": count},
    }

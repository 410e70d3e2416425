"""An offline user simulator: a ``python:`` model that answers the simulator contract.

Input (the last user message, JSON): ``{persona, goal, conversation, turn_number,
max_turns, checkpoints_reached, checkpoints_pending, extra}``. Output (JSON text):
``{message, goal_achieved, reasoning}``. It reads the agent's last message and answers
what was asked, taking the details (drink, size, amount, category, ...) from the goal.
"""

from __future__ import annotations

import json
import re
from typing import Any

DRINKS = ("latte", "cappuccino", "americano", "espresso", "mocha", "tea")
SIZES = ("small", "medium", "large")
CATEGORIES = ("travel", "meals", "lodging", "office")
DONE = re.compile(
    r"(?i)\b(submitted|confirmed|on its way|is ready|will be ready|placed|completed?|all set)\b"
)
ASKS = (
    ("confirm", re.compile(r"(?i)\bconfirm\b|is that (right|correct)|shall i\b|correct\?")),
    ("size", re.compile(r"(?i)\bsize\b")),
    ("drink", re.compile(r"(?i)what (can i get|would you like)|which drink|latte|cappuccino")),
    ("expense", re.compile(r"(?i)\b(type|category|how much|amount)\b")),
)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return "" if content is None else json.dumps(content)


def _request(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The simulator request: the last user message as JSON (plain text is the goal)."""
    for message in reversed(messages):
        if message.get("role") == "user":
            text = _text(message.get("content"))
            try:
                data = json.loads(text)
            except ValueError:
                return {"goal": text}
            return data if isinstance(data, dict) else {"goal": text}
    return {}


def _agent_said(conversation: Any) -> str:
    """The agent's last words in the conversation (a list of messages or of turns)."""
    for item in reversed(conversation if isinstance(conversation, list) else []):
        if not isinstance(item, dict):
            continue
        if item.get("role") == "assistant" and _text(item.get("content")):
            return _text(item.get("content"))
        for key in ("output", "agent", "response"):
            if item.get(key):
                return _text(item[key])
    return ""


def _pick(goal: str, words: tuple[str, ...], default: str) -> str:
    for word in words:
        if re.search(rf"(?i)\b{word}\b", goal):
            return word
    return default


def _answer(goal: str, agent: str) -> tuple[str, bool, str]:
    if not agent:
        opening = goal[:1].lower() + goal[1:] if goal else "get some help"
        return f"Hi! I'd like to {opening}.", False, "open the conversation with the goal"
    if DONE.search(agent) and not ASKS[0][1].search(agent):
        return "Great, thank you!", True, "the agent completed the goal"
    for kind, pattern in ASKS:
        if not pattern.search(agent):
            continue
        if kind == "confirm":
            return "Yes, that's right.", False, "confirm what the agent summarised"
        if kind == "size":
            return f"{_pick(goal, SIZES, 'medium').capitalize()}, please.", False, "give the size"
        if kind == "drink":
            drink = _pick(goal, DRINKS, "latte")
            return f"A {drink}, please.", False, "name the drink only, as asked"
        amount = re.search(r"\$\d+(?:\.\d+)?", goal)
        category = _pick(goal, CATEGORIES, "travel")
        return (
            f"{category.capitalize()}, {amount.group(0) if amount else '$100'}",
            False,
            "give the type and the amount",
        )
    return f"I'd like to {goal[:1].lower() + goal[1:]}.", False, "restate the goal"


def reply(messages: list[dict[str, Any]], tools: list[Any], settings: dict[str, Any]) -> str:
    """The simulated user's next message as ``{message, goal_achieved, reasoning}`` JSON."""
    request = _request(messages)
    goal = str(request.get("goal") or "").strip().rstrip(".")
    message, achieved, reasoning = _answer(goal, _agent_said(request.get("conversation")))
    persona = request.get("persona")
    if persona:
        reasoning = f"{reasoning} (as {persona})"
    return json.dumps(
        {"message": message, "goal_achieved": achieved, "reasoning": reasoning},
        ensure_ascii=False,
    )

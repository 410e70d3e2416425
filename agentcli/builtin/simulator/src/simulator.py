"""builtin.simulator offline: a ``python:`` model that plays the user of a dynamic case.

Input (the last user message, JSON): ``{persona, goal, conversation, turn_number,
max_turns, checkpoints_reached, checkpoints_pending, extra}``. Output (JSON text):
``{message, goal_achieved, reasoning}``.

It cannot understand the agent, so it follows rules, first that applies:

1. ``extra.replies``: ``[{"when": "<regex>", "say": "<message>"}]`` — the case's own
   scripted answers to what the agent says (``"when"`` searched in its last message);
2. the agent's last message says it is done (``extra.done``, a regex, else words such as
   confirmed, submitted, all set) — the goal is achieved;
3. the agent asks for a confirmation — "Yes, that's right.";
4. otherwise the user restates the goal, which carries its details ("Check order A-1001").
"""

from __future__ import annotations

import json
import re
from typing import Any

_DONE = re.compile(
    r"(?i)\b(submitted|confirmed|completed?|done|all set|placed|booked|is ready|"
    r"has been (sent|created|saved|updated))\b"
)
_CONFIRM = re.compile(r"(?i)\bconfirm\b|is that (right|correct|ok)|shall i\b|should i\b")


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else json.dumps(content, ensure_ascii=False)


def _request(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The simulator request in the last user message (plain text is taken as the goal)."""
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
    for item in reversed(conversation if isinstance(conversation, list) else []):
        if isinstance(item, dict) and item.get("role") == "assistant":
            text = _text(item.get("content"))
            if text:
                return text
    return ""


def _scripted(extra: dict[str, Any], said: str) -> str | None:
    """The first of the case's ``replies`` whose ``when`` is found in what the agent said."""
    replies = extra.get("replies")
    for rule in replies if isinstance(replies, list) else []:
        if not isinstance(rule, dict) or not isinstance(rule.get("say"), str):
            continue
        when = rule.get("when")
        if isinstance(when, str) and re.search(when, said):
            return str(rule["say"])
    return None


def _move(goal: str, said: str, extra: dict[str, Any]) -> tuple[str, bool, str]:
    restated = goal[:1].lower() + goal[1:] if goal else "get some help"
    if not said:
        return f"Hi! I'd like to {restated}.", False, "open the conversation with the goal"
    scripted = _scripted(extra, said)
    if scripted is not None:
        return scripted, False, "a reply the case scripted for this question"
    done = extra.get("done")
    finished = re.search(done, said) if isinstance(done, str) else _DONE.search(said)
    if finished and not _CONFIRM.search(said):
        return "Great, thank you!", True, "the agent completed the goal"
    if _CONFIRM.search(said):
        return "Yes, that's right.", False, "confirm what the agent summarised"
    return f"I'd like to {restated}.", False, "restate the goal, with its details"


def reply(messages: list[dict[str, Any]], tools: list[Any], settings: dict[str, Any]) -> str:
    """The simulated user's next message as ``{message, goal_achieved, reasoning}`` JSON."""
    request = _request(messages)
    goal = str(request.get("goal") or "").strip().rstrip(".")
    extra = request.get("extra")
    extra = extra if isinstance(extra, dict) else {}
    message, achieved, reasoning = _move(goal, _agent_said(request.get("conversation")), extra)
    if request.get("persona"):
        reasoning = f"{reasoning} (as {request['persona']})"
    return json.dumps(
        {"message": message, "goal_achieved": achieved, "reasoning": reasoning},
        ensure_ascii=False,
    )

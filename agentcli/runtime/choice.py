"""``tool_choice``: the forms it may take, and whether a response honoured it.

``"auto"`` and ``"none"`` leave the choice to the model (or forbid tools); ``"required"``
and a named tool are enforced: a response that ignores them fails the turn with
``ToolChoiceViolationError``. A bare tool name is accepted and sent in the OpenAI form.
"""

from __future__ import annotations

# The forms are the model layer's (ModelSettings carries one); re-exported here, where
# the runtime enforces them.
from agentcli.models.base import TOOL_CHOICE_MODES, ToolChoice, ToolChoiceMode
from agentcli.runtime.tools import ToolCall

__all__ = [
    "TOOL_CHOICE_MODES",
    "ToolChoice",
    "ToolChoiceMode",
    "normalize_choice",
    "tool_choice_problem",
]


def normalize_choice(choice: ToolChoice) -> ToolChoice:
    """A bare tool name as the OpenAI ``{"type": "function", ...}`` form."""
    if isinstance(choice, str) and choice not in TOOL_CHOICE_MODES:
        return {"type": "function", "function": {"name": choice}}
    return choice


def tool_choice_problem(choice: ToolChoice, calls: list[ToolCall]) -> str | None:
    """Why the response ignores an enforced ``tool_choice`` (None when it does not)."""
    if choice in (None, "auto", "none"):
        return None
    names = {call.name for call in calls}
    if choice == "required":
        return None if names else "tool_choice is 'required' but the model called no tool"
    if isinstance(choice, dict):
        wanted = (choice.get("function") or {}).get("name") or choice.get("name")
        if wanted and wanted not in names:
            return (
                f"tool_choice requires {wanted!r} but the model called {sorted(names) or 'nothing'}"
            )
    return None

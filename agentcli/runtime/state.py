"""``agent.state``: a small dict that plugins, tools and hosts read and write.

Every change is appended to storage as a ``state`` entry; when an agent starts on stored
entries, the latest one is restored (else ``initial_state``). Values should be JSON data:
the JSONL backend writes them as JSON.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["AgentState"]


class AgentState:
    """The agent's persistent state (``get`` / ``set`` / ``update``)."""

    __slots__ = ("_on_change", "_value")

    def __init__(
        self, initial: Mapping[str, Any] | None, on_change: Callable[[dict[str, Any]], None]
    ) -> None:
        self._value: dict[str, Any] = copy.deepcopy(dict(initial)) if initial else {}
        self._on_change = on_change

    def get(self, key: str | None = None, default: Any = None) -> Any:
        """The whole state (a shallow copy), or the value of ``key``."""
        if key is None:
            return dict(self._value)
        return self._value.get(key, default)

    def set(
        self, value: Mapping[str, Any] | Callable[[dict[str, Any]], Mapping[str, Any]]
    ) -> dict[str, Any]:
        """Replace the state with ``value`` (or ``value(current)``) and persist it."""
        if callable(value):
            value = value(dict(self._value))
        if not isinstance(value, Mapping):
            raise TypeError(f"agent state must be a mapping, not {type(value).__name__}")
        # a private copy, so that later mutations of the caller's dict are not half-persisted
        self._value = copy.deepcopy(dict(value))
        self._on_change(copy.deepcopy(self._value))
        return dict(self._value)

    def update(self, changes: Mapping[str, Any] | None = None, /, **more: Any) -> dict[str, Any]:
        """Merge ``changes`` (and keyword values) into the state and persist it."""
        return self.set({**self._value, **(changes or {}), **more})

    def __getitem__(self, key: str) -> Any:
        return self._value[key]

    def __contains__(self, key: object) -> bool:
        return key in self._value

    def __repr__(self) -> str:
        return f"AgentState({self._value!r})"

    def restore(self, value: Mapping[str, Any]) -> None:
        """Adopt a stored state without recording it again."""
        self._value = copy.deepcopy(dict(value))

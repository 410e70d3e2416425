"""``ctx.trace``: the steps a hook or tool reports, recorded for the case report.

Follows the seed's Trace API in Python form::

    node = ctx.trace.add({"query": q}, {"label": "Search", "type": "search"})
    node.info("cache miss").set_metadata("source", "api")
    child = node.add({"url": u}, label="Fetch")
    child.complete({"status": 200})
    node.fail("timeout")                 # or node.complete(output)
    ctx.trace.warn("retrying %s", q)     # logs to the current node

Everything is kept as plain JSON dicts (``TraceRecorder.to_list()``) with the shape
``{id, parent_id, label, type, icon, description, metadata, status, input, output, error,
logs[{level, message, time}], started_at, ended_at, duration_ms}``; ``status`` is
``running``, ``completed`` or ``failed``. Times are ISO 8601 UTC strings.
"""

from __future__ import annotations

import copy
import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, Self

from agentcli.pascal import PascalAliases

__all__ = ["LOG_LEVELS", "NodeStatus", "TraceEvent", "TraceNode", "TraceRecorder"]

NodeStatus = Literal["running", "completed", "failed"]

LOG_LEVELS = ("debug", "info", "warn", "error")
_OPTION_KEYS = ("label", "type", "icon", "description", "metadata")
_log = logging.getLogger(__name__)


@dataclass(slots=True, frozen=True)
class TraceEvent:
    """A change to the trace, for live display: ``kind`` is add, log, output, metadata,
    complete or fail; ``node`` a snapshot of the node after it; ``log`` the new entry."""

    kind: str
    node: dict[str, Any]
    log: dict[str, Any] | None = None


class _Logging(PascalAliases):
    """``info`` / ``debug`` / ``warn`` / ``error`` over a ``_log(level, message, args)``; each
    returns the object, so calls can be chained. An error entry does not change a node's
    status (``fail`` does); ``message % args`` when args are given."""

    __slots__ = ()

    def _log(self, level: str, message: Any, args: tuple[Any, ...]) -> object:
        raise NotImplementedError

    def info(self, message: Any, *args: Any) -> Self:
        """Log an info entry."""
        self._log("info", message, args)
        return self

    def debug(self, message: Any, *args: Any) -> Self:
        """Log a debug entry."""
        self._log("debug", message, args)
        return self

    def warn(self, message: Any, *args: Any) -> Self:
        """Log a warning entry."""
        self._log("warn", message, args)
        return self

    def error(self, message: Any, *args: Any) -> Self:
        """Log an error entry."""
        self._log("error", message, args)
        return self


class TraceNode(_Logging):
    """One step of the trace; its methods return the node so calls can be chained."""

    __slots__ = ("_data", "_recorder")

    def __init__(self, recorder: TraceRecorder, data: dict[str, Any]) -> None:
        self._recorder = recorder
        self._data = data

    def __repr__(self) -> str:
        return f"TraceNode({self.id}, {self._data['label']!r}, {self.status})"

    @property
    def id(self) -> str:
        """The node id (``n1``, ``n2``, ... in creation order)."""
        node_id: str = self._data["id"]  # set by _new_node, never changed
        return node_id

    @property
    def status(self) -> NodeStatus:
        """``running``, ``completed`` or ``failed``."""
        status: NodeStatus = self._data["status"]  # only _new_node and _end set it
        return status

    def add(
        self,
        input: Any = None,
        option: dict[str, Any] | str | None = None,
        *,
        label: str | None = None,
        type: str | None = None,
        icon: str | None = None,
        description: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> TraceNode:
        """Add a child node (same arguments as ``TraceRecorder.add``)."""
        fields = _options(input, option, label, type, icon, description, metadata)
        return self._recorder._new_node(self.id, *fields)

    def parallel(self, inputs: list[dict[str, Any]]) -> list[TraceNode]:
        """Add child nodes that run side by side: ``[{"input": ..., "option": {...}}]``."""
        return [self.add(item.get("input"), item.get("option")) for item in inputs]

    def set_output(self, output: Any) -> TraceNode:
        """Record the node's output without ending it."""
        with self._recorder._lock:
            self._data["output"] = _plain(output)
            snapshot = _snapshot(self._data)
        self._recorder._emit(TraceEvent("output", snapshot))
        return self

    def set_metadata(self, key: str, value: Any) -> TraceNode:
        """Set one metadata entry of the node."""
        with self._recorder._lock:
            self._data["metadata"][str(key)] = _plain(value)
            snapshot = _snapshot(self._data)
        self._recorder._emit(TraceEvent("metadata", snapshot))
        return self

    def complete(self, output: Any = None) -> TraceNode:
        """Mark the node completed (with ``output`` when given); a finished node stays as is."""
        return self._end("completed", output=output)

    def fail(self, error: Any) -> TraceNode:
        """Mark the node failed with ``error`` (a message or an exception)."""
        return self._end("failed", error=_error_text(error))

    def to_dict(self) -> dict[str, Any]:
        """A copy of the node as a plain dict."""
        with self._recorder._lock:
            return _snapshot(self._data)

    def _log(self, level: str, message: Any, args: tuple[Any, ...]) -> TraceNode:
        entry = {"level": level, "message": _format(message, args), "time": self._recorder._now()}
        with self._recorder._lock:
            self._data["logs"].append(entry)
            snapshot = _snapshot(self._data)
        self._recorder._emit(TraceEvent("log", snapshot, dict(entry)))
        return self

    def _end(
        self, status: NodeStatus, *, output: Any = None, error: str | None = None
    ) -> TraceNode:
        recorder = self._recorder
        with recorder._lock:
            # The first ending wins: a later complete() must not hide an earlier fail().
            if self._data["status"] != "running":
                return self
            ended = recorder._clock()
            self._data["status"] = status
            if output is not None:
                self._data["output"] = _plain(output)
            self._data["error"] = error
            self._data["ended_at"] = _iso(ended)
            self._data["duration_ms"] = max(0, round((ended - self._data["_started"]) * 1000))
            snapshot = _snapshot(self._data)
        recorder._emit(TraceEvent("complete" if status == "completed" else "fail", snapshot))
        return self


class TraceRecorder(_Logging):
    """``ctx.trace`` for one request: records nodes in memory for the case report.

    ``on_event`` is called (outside the recorder's lock) after every change; with
    ``enabled=False`` (the ``skip.trace`` option) nodes work but nothing is recorded.
    """

    def __init__(
        self,
        *,
        on_event: Callable[[TraceEvent], None] | None = None,
        clock: Callable[[], float] = time.time,
        enabled: bool = True,
        trace_id: str = "",
    ) -> None:
        self.id = trace_id
        self.on_event = on_event
        self.enabled = enabled
        self._clock = clock
        self._lock = threading.RLock()
        self._nodes: list[dict[str, Any]] = []
        self._count = 0
        self._current: list[TraceNode] = []
        self._complete = False

    def add(
        self,
        input: Any = None,
        option: dict[str, Any] | str | None = None,
        *,
        label: str | None = None,
        type: str | None = None,
        icon: str | None = None,
        description: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> TraceNode:
        """Add a top-level node and make it the current one.

        ``option`` is the seed's ``{label, type, icon, description, metadata}`` (or just a
        label); keyword arguments override it. ``add("Step")`` alone is a label.
        """
        fields = _options(input, option, label, type, icon, description, metadata)
        node = self._new_node(None, *fields)
        with self._lock:
            self._current = [node]
        return node

    def parallel(self, inputs: list[dict[str, Any]]) -> list[TraceNode]:
        """Add top-level nodes that run side by side; they all become current."""
        nodes = [self._new_node(None, *_options(i.get("input"), i.get("option"))) for i in inputs]
        with self._lock:
            self._current = list(nodes)
        return nodes

    def set_output(self, output: Any) -> TraceRecorder:
        """Set the output of the current node(s)."""
        for node in self._current_nodes():
            node.set_output(output)
        return self

    def set_metadata(self, key: str, value: Any) -> TraceRecorder:
        """Set a metadata entry of the current node(s)."""
        for node in self._current_nodes():
            node.set_metadata(key, value)
        return self

    def complete(self, output: Any = None) -> TraceRecorder:
        """Complete the current node(s)."""
        for node in self._current_nodes():
            node.complete(output)
        return self

    def fail(self, error: Any) -> TraceRecorder:
        """Fail the current node(s)."""
        for node in self._current_nodes():
            node.fail(error)
        return self

    def mark_complete(self) -> None:
        """End the trace: every node still running is completed (the request is over)."""
        with self._lock:
            running = [TraceNode(self, data) for data in self._nodes if data["status"] == "running"]
            self._complete = True
        for node in running:
            node.complete()

    def is_complete(self) -> bool:
        """Whether ``mark_complete`` was called."""
        return self._complete

    def to_list(self) -> list[dict[str, Any]]:
        """Every recorded node in creation order, as plain JSON-ready dicts."""
        with self._lock:
            return [_snapshot(data) for data in self._nodes]

    def __len__(self) -> int:
        return len(self._nodes)

    # -- internals -------------------------------------------------------------------

    def _now(self) -> str:
        return _iso(self._clock())

    def _new_node(
        self,
        parent_id: str | None,
        input: Any,
        label: str,
        type: str | None,
        icon: str | None,
        description: str | None,
        metadata: dict[str, Any],
    ) -> TraceNode:
        started = self._clock()
        with self._lock:
            self._count += 1
            data: dict[str, Any] = {
                "id": f"n{self._count}",
                "parent_id": parent_id,
                "label": label,
                "type": type,
                "icon": icon,
                "description": description,
                "metadata": _plain(metadata),
                "status": "running",
                "input": _plain(input),
                "output": None,
                "error": None,
                "logs": [],
                "started_at": _iso(started),
                "ended_at": None,
                "duration_ms": None,
                "_started": started,
            }
            if self.enabled:
                self._nodes.append(data)
            snapshot = _snapshot(data)
        self._emit(TraceEvent("add", snapshot))
        return TraceNode(self, data)

    def _current_nodes(self) -> list[TraceNode]:
        with self._lock:
            return list(self._current)

    def _log(self, level: str, message: Any, args: tuple[Any, ...]) -> TraceRecorder:
        nodes = self._current_nodes()
        if not nodes:
            # No node to attach to: the entry becomes a finished node of its own, so the
            # report keeps it in order with the rest.
            text = _format(message, args)
            nodes = [self._new_node(None, None, text, "log", None, None, {})]
            nodes[0]._log(level, text, ()).complete()
            return self
        for node in nodes:
            node._log(level, message, args)
        return self

    def _emit(self, event: TraceEvent) -> None:
        if self.on_event is None or not self.enabled:
            return
        try:
            self.on_event(event)
        except Exception:
            # A broken live display must not fail the user's hook that logged the entry.
            _log.exception("trace on_event callback failed")


def _options(
    input: Any,
    option: dict[str, Any] | str | None,
    label: str | None = None,
    type: str | None = None,
    icon: str | None = None,
    description: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> tuple[Any, str, str | None, str | None, str | None, dict[str, Any]]:
    """Merge the seed's option dict, a label string and keyword overrides."""
    if isinstance(input, str) and option is None and label is None:
        input, option = None, input
    base: dict[str, Any] = {}
    if isinstance(option, str):
        base["label"] = option
    elif isinstance(option, dict):
        base = {key: option[key] for key in _OPTION_KEYS if option.get(key) is not None}
    given = {"label": label, "type": type, "icon": icon, "description": description}
    base.update({key: value for key, value in given.items() if value is not None})
    merged_meta = dict(base.get("metadata") or {})
    merged_meta.update(metadata or {})
    node_type = _text(base.get("type"))
    return (
        input,
        _text(base.get("label")) or node_type or "node",
        node_type,
        _text(base.get("icon")),
        _text(base.get("description")),
        merged_meta,
    )


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _format(message: Any, args: tuple[Any, ...]) -> str:
    text = message if isinstance(message, str) else _error_text(message)
    if not args:
        return text
    try:
        return text % args
    except (TypeError, ValueError):
        # Not a %-template: join like print() rather than fail inside the user's hook.
        return " ".join([text, *(str(arg) for arg in args)])


def _error_text(error: Any) -> str:
    if isinstance(error, BaseException):
        return str(error) or type(error).__name__
    if isinstance(error, str):
        return error
    return json.dumps(_plain(error), ensure_ascii=False)


def _plain(value: Any) -> Any:
    """A JSON-ready copy, so later changes by the caller do not rewrite the record."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return json.loads(json.dumps(value, default=str, ensure_ascii=False))


def _snapshot(data: dict[str, Any]) -> dict[str, Any]:
    # Deep, so report writers and live displays cannot change the record.
    return copy.deepcopy({key: value for key, value in data.items() if not key.startswith("_")})


def _iso(seconds: float) -> str:
    stamp = datetime.fromtimestamp(seconds, UTC)
    return stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")

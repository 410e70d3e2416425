"""Cassettes: what one case exchanged with the outside world, recorded and replayed.

A cassette is a JSON Lines file: a ``cassette`` line (the format version, the case), then one
line per interaction in the order they happened — a model call (``model``: the request
and the streamed parts), a tool call (``tool``: server, tool, arguments and the result or
error), a listing of a package's tools (``tools``), and a tool server's other exchanges:
a resource listing and read (``resources``, ``resource``), a prompt listing and fetch
(``prompts``, ``prompt``). Every string is redacted before it is
written (a key must never be in a cassette), and requests are matched in their redacted
form, so a replay needs no key.

Recording or replaying is per task: ``use(cassette)`` makes it the active cassette of the
current task and the tasks it starts (a case's hooks, its agent, simulator and judge), so
cases running at once each talk to their own. The models and tools of an
``AssistantRegistry`` opened for cassettes look for the active one on every call; without
one they call through.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from agentcli.errors import ConfigError, ReplayMiss, ToolError
from agentcli.jsonsafe import json_safe
from agentcli.models.base import (
    Model,
    ModelResponse,
    ModelSettings,
    ResponseDone,
    StreamPart,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallRequest,
    Usage,
)
from agentcli.runtime.tools import ToolResult
from agentcli.secrets import redact_data

__all__ = [
    "FORMAT_VERSION",
    "Cassette",
    "CassetteMode",
    "CassetteModel",
    "ModelWrapper",
    "ReplayMiss",
    "active",
    "call_server",
    "call_tool",
    "case_seed",
    "clock_reading",
    "decode_parts",
    "encode_parts",
    "first_difference",
    "model_request",
    "read_interactions",
    "recorded",
    "use",
]

FORMAT_VERSION = 1
# record: every call live, recorded; record-missing: what the cassette holds replayed, the
# rest live and recorded; replay: every call from the cassette; replay-live-tools: the model
# from the cassette, the tools live; replay-live-model: the model live, the tools replayed.
CassetteMode = Literal[
    "record", "record-missing", "replay", "replay-live-tools", "replay-live-model"
]
Kind = Literal[
    "model", "tool", "tools", "resources", "resource", "prompts", "prompt", "clock", "seed"
]
KINDS: tuple[Kind, ...] = (
    "model", "tool", "tools", "resources", "resource", "prompts", "prompt", "clock", "seed"
)  # fmt: skip

_ACTIVE: ContextVar[Cassette | None] = ContextVar("agentcli_cassette", default=None)


@dataclass(slots=True)
class Interaction:
    """One recorded exchange: its kind, the (redacted) request, and what came back."""

    kind: Kind
    request: Any
    reply: Any
    used: bool = False


@dataclass(slots=True)
class Cassette:
    """The interactions of one case (one run of it under ``--runs``)."""

    path: Path
    mode: CassetteMode
    case_id: str
    run: int | None = None
    interactions: list[Interaction] = field(default_factory=list)

    @classmethod
    def open(cls, path: Path, mode: CassetteMode, case_id: str, run: int | None) -> Cassette:
        """A new cassette to record into, or the recorded one to replay (a missing file
        replays as empty: every request is a miss that says so)."""
        cassette = cls(path, mode, case_id, run)
        if mode != "record" and path.is_file():
            cassette.interactions = read_interactions(path)
        return cassette

    def replays(self, kind: Kind) -> bool:
        """Whether calls of ``kind`` are answered from the cassette (the clock in every
        mode that replays anything: a prompt with the date must match its recording)."""
        recorded_run = kind in ("clock", "seed") and self.mode != "record"
        if self.mode in ("replay", "record-missing") or recorded_run:
            return True
        if self.mode == "replay-live-tools":
            return kind == "model"
        if self.mode == "replay-live-model":
            return kind != "model"
        return False

    @property
    def records(self) -> bool:
        """Whether live calls are recorded (and the cassette saved at the end)."""
        return self.mode in ("record", "record-missing")

    # -- replay ----------------------------------------------------------------------

    def take(self, kind: Kind, request: Any) -> Interaction | None:
        """The first unused recording of this request, marked used."""
        for item in self.interactions:
            if not item.used and item.kind == kind and item.request == request:
                item.used = True
                return item
        return None

    def recording_for(self, kind: Kind, request: Any, what: str) -> Interaction | None:
        """The recording that answers this request, or None when the call is to run live
        (its kind is not replayed, or ``--record missing`` records what is not there). A
        request the cassette lacks when nothing may run live raises the miss: a
        ``ReplayMiss`` for a model call, a ``ToolError`` for a tool (what tool callers
        expect)."""
        if not self.replays(kind):
            return None
        found = self.take(kind, request)
        if found is None and not self.records:
            miss = self.miss(kind, request, what)
            raise miss if kind == "model" else ToolError(miss.message)
        return found

    def miss(self, kind: Kind, request: Any, what: str) -> ReplayMiss:
        """The error for a request the cassette lacks, naming the nearest recording and
        the first difference from it."""
        where = _shown_path(self.path)
        recorded = [item for item in self.interactions if item.kind == kind]
        if not recorded:
            if not self.interactions and not self.path.is_file():
                return ReplayMiss(
                    f"no cassette {where} to replay {what} from (record it with --record)"
                )
            return ReplayMiss(f"{where} has no recorded {what}")
        unused = [item for item in recorded if not item.used] or recorded
        nearest = min(unused, key=lambda item: _distance(item.request, request))
        difference = first_difference(nearest.request, request)
        return ReplayMiss(
            f"{what} is not in {where}: {difference or 'it was recorded fewer times'}",
            hint="record the case again with --record",
        )

    # -- record ----------------------------------------------------------------------

    def add(self, kind: Kind, request: Any, reply: Any) -> None:
        """Record one exchange (already redacted)."""
        self.interactions.append(Interaction(kind, request, reply))

    def save(self) -> None:
        """Write the cassette whole, replacing the file only once it is complete."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        head = {"type": "cassette", "version": FORMAT_VERSION, "case": self.case_id}
        if self.run is not None:
            head["run"] = self.run
        lines = [head] + [
            {"type": item.kind, "request": item.request, "reply": item.reply}
            for item in self.interactions
        ]
        text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
        handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".cassette-")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                file.write(text)
            os.replace(temporary, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise


def read_interactions(path: Path) -> list[Interaction]:
    """A cassette's interactions; a line that is not one is a ``ConfigError`` with its
    file and line (exit 2)."""
    shown = _shown_path(path)
    items: list[Interaction] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError as error:
            raise ConfigError(f"{shown}:{number}: not JSON ({error})") from None
        kind = data.get("type") if isinstance(data, dict) else None
        if number == 1:
            if kind != "cassette" or data.get("version") != FORMAT_VERSION:
                raise ConfigError(
                    f"{shown}:1: not a cassette of format version {FORMAT_VERSION}",
                    hint="record it again with --record",
                )
            continue
        if kind not in KINDS or "request" not in data:
            raise ConfigError(f"{shown}:{number}: not a cassette entry (type {kind!r})")
        items.append(Interaction(kind, data["request"], data.get("reply")))
    return items


def active() -> Cassette | None:
    """The cassette of the current task, if any."""
    return _ACTIVE.get()


@contextlib.contextmanager
def use(cassette: Cassette | None) -> Iterator[None]:
    """Make ``cassette`` the active one of this task (and the tasks it starts)."""
    token = _ACTIVE.set(cassette)
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def recorded(value: Any) -> Any:
    """``value`` as a cassette holds it: plain JSON, every string redacted."""
    return redact_data(json_safe(value))


# -- model calls -------------------------------------------------------------------------


class ModelWrapper:
    """A model around another (its connector spec as ``label``): the wrappers a registry
    puts around its models (cassettes, the response cache) share this."""

    def __init__(self, inner: Model, label: str) -> None:
        self.inner = inner
        self.label = label
        self.provider = inner.provider
        self.name = inner.name

    def __getattr__(self, name: str) -> Any:  # limiter, aclose, ...: the inner model's
        return getattr(self.inner, name)


class CassetteModel(ModelWrapper):
    """A model that records its calls into the active cassette, or answers from it."""

    async def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], settings: ModelSettings
    ) -> AsyncIterator[StreamPart]:
        """The recorded parts of this call, or the live ones (recorded when recording)."""
        cassette = active()
        if cassette is None:
            async for part in self.inner.stream(messages, tools, settings):
                yield part
            return
        request = model_request(self.label, messages, tools, settings)
        found = cassette.recording_for("model", request, f"the call to {self.label}")
        if found is not None:
            for part in decode_parts(found.reply):
                yield part
            return
        parts: list[StreamPart] = []
        async for part in self.inner.stream(messages, tools, settings):
            parts.append(part)
            yield part
        if cassette.records:
            cassette.add("model", request, recorded(encode_parts(parts)))


def model_request(
    label: str,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    settings: ModelSettings,
) -> Any:
    """A model call as cassettes and the response cache match it: the connector, messages,
    tools and settings, redacted (the timeout is how long, not what, so left out)."""
    options = {k: v for k, v in settings.to_dict().items() if k != "timeout"}
    return recorded({"model": label, "messages": messages, "tools": tools, "settings": options})


def encode_parts(parts: list[StreamPart]) -> list[dict[str, Any]]:
    """Stream parts as JSON."""
    encoded: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, TextDelta | ThinkingDelta):
            encoded.append({"type": part.type, "text": part.text})
        elif isinstance(part, ToolCallDelta):
            encoded.append(
                {"type": part.type, "index": part.index, "id": part.id, "name": part.name,
                 "arguments": part.arguments}
            )  # fmt: skip
        else:
            response = part.response
            encoded.append(
                {
                    "type": "done",
                    "content": response.content,
                    "thinking": response.thinking,
                    "finish_reason": response.finish_reason,
                    "tool_calls": [
                        {
                            "id": c.id,
                            "name": c.name,
                            "arguments": c.arguments,
                            "arguments_error": c.arguments_error,
                        }
                        for c in response.tool_calls
                    ],
                    "usage": response.usage.to_dict(),
                    "provider": response.provider,
                    "model": response.model,
                }
            )
    return encoded


def decode_parts(encoded: Any) -> list[StreamPart]:
    """Stream parts from their JSON form (``encode_parts``)."""
    parts: list[StreamPart] = []
    for item in encoded if isinstance(encoded, list) else []:
        kind = item.get("type")
        if kind == "text_delta":
            parts.append(TextDelta(item.get("text") or ""))
        elif kind == "thinking_delta":
            parts.append(ThinkingDelta(item.get("text") or ""))
        elif kind == "tool_call_delta":
            parts.append(
                ToolCallDelta(int(item.get("index") or 0), item.get("id"), item.get("name"),
                              item.get("arguments") or "")
            )  # fmt: skip
        elif kind == "done":
            calls = [
                ToolCallRequest(c.get("id") or "", c.get("name") or "", c.get("arguments") or {},
                                c.get("arguments_error"))
                for c in item.get("tool_calls") or []
            ]  # fmt: skip
            parts.append(
                ResponseDone(
                    ModelResponse(
                        content=item.get("content") or "",
                        tool_calls=calls,
                        thinking=item.get("thinking") or "",
                        finish_reason=item.get("finish_reason") or "stop",
                        usage=Usage.from_dict(item.get("usage") or {}),
                        provider=item.get("provider") or "",
                        model=item.get("model") or "",
                    )
                )
            )
    return parts


# -- tool calls --------------------------------------------------------------------------


async def call_tool(
    server: str, tool: str, arguments: Any, call: Callable[[], Awaitable[Any]], *, raising: bool
) -> Any:
    """``await call()`` through the active cassette: the recorded outcome of this call when
    replaying, the live one (recorded) otherwise. A tool that failed replays as it failed:
    an error ``ToolResult`` for the model (``raising=False``: with the exception's class,
    as the runtime makes one), a ``ToolError`` for a hook's ``ctx.mcp`` call."""
    return await _taped(
        "tool",
        {"server": server, "tool": tool, "arguments": arguments},
        f"the call of {server}/{tool}",
        call,
        lambda reply: _replayed_outcome(reply, tool, raising),
        _tool_reply,
    )


async def call_server(
    kind: Kind, request: Any, what: str, call: Callable[[], Awaitable[Any]]
) -> Any:
    """``await call()`` through the active cassette, for a tool server's exchanges other
    than a tool call (a resource listing or read, a prompt listing or fetch, all from
    ``ctx.mcp`` or a selection's ``resources``): the recorded value when replaying (a
    recorded failure raised again as the ``ToolError`` a hook expects), the live one
    (recorded) otherwise. ``what`` names the exchange in a replay miss."""
    return await _taped(kind, request, what, call, _server_value, lambda result: {"result": result})


async def _taped(
    kind: Kind,
    request: Any,
    what: str,
    call: Callable[[], Awaitable[Any]],
    replay: Callable[[Any], Any],
    encode: Callable[[Any], Any],
) -> Any:
    """``await call()`` through the active cassette: ``replay(reply)`` of the recording of
    ``request`` when replaying; else the live value, recorded as ``encode(value)`` (or its
    failure, raised again) when recording."""
    cassette = active()
    if cassette is None:
        return await call()
    request = recorded(request)
    found = cassette.recording_for(kind, request, what)
    if found is not None:
        return replay(found.reply)
    if not cassette.records:
        return await call()
    try:
        result = await call()
    except Exception as error:
        failure = {"error": str(error) or type(error).__name__, "error_type": type(error).__name__}
        cassette.add(kind, request, recorded(failure))
        raise
    cassette.add(kind, request, recorded(encode(result)))
    return result


def _tool_reply(result: Any) -> dict[str, Any]:
    """A tool call's outcome as a cassette keeps it."""
    if isinstance(result, ToolResult):
        return {"tool_result": {"content": result.content, "is_error": result.is_error,
                                "terminate": result.terminate, "details": result.details}}  # fmt: skip
    return {"result": result}


def _server_value(reply: Any) -> Any:
    """A recorded resource or prompt exchange's value; a recorded failure raised again."""
    found = reply if isinstance(reply, dict) else {}
    if "error" in found:
        raise ToolError(str(found["error"]))
    return found.get("result")


def _replayed_outcome(reply: Any, tool: str, raising: bool) -> Any:
    """A recorded tool outcome as the live call gave it."""
    reply = reply if isinstance(reply, dict) else {}
    if "error" in reply:
        if raising:
            raise ToolError(str(reply["error"]))
        details = {"error_type": str(reply.get("error_type") or "Exception")}
        return ToolResult("", tool, str(reply["error"]), is_error=True, details=details)
    if "tool_result" in reply:
        item = reply["tool_result"] if isinstance(reply["tool_result"], dict) else {}
        if raising and item.get("is_error"):
            raise ToolError(f"{tool} failed: {item.get('content')}")
        return ToolResult(
            "",
            tool,
            item.get("content"),
            is_error=bool(item.get("is_error")),
            terminate=bool(item.get("terminate")),
            details=dict(item.get("details") or {}),
        )
    return reply.get("result")


def clock_reading(live: Callable[[], datetime]) -> datetime:
    """The time as the active cassette tells it: each reading of a recorded case is
    replayed in order (``$SYS.DATE`` in a prompt then matches its recording), and recorded
    when recording; ``live()`` outside a cassette, and past the recorded readings."""
    cassette = active()
    if cassette is None:
        return live()
    if cassette.replays("clock"):
        found = cassette.take("clock", {})
        if found is not None and isinstance(found.reply, str):
            try:
                return datetime.fromisoformat(found.reply)
            except ValueError:
                pass
    now = live()
    if cassette.records:
        cassette.add("clock", {}, now.isoformat())
    return now


def case_seed(given: str | None) -> str | None:
    """The seed of the case's ids under the active cassette: the recorded one when
    replaying, else ``given`` (``--seed``) or a new random one, recorded."""
    cassette = active()
    if cassette is None:
        return given
    if cassette.replays("seed"):
        found = cassette.take("seed", {})
        if found is not None and isinstance(found.reply, str):
            return found.reply
    seed = given if given is not None else os.urandom(8).hex()
    if cassette.records:
        cassette.add("seed", {}, seed)
    return seed


def first_difference(recorded: Any, asked: Any, path: str = "") -> str:
    """Where two requests first differ, in words: ``messages[2].content differs: 'Paris'
    vs 'paris'`` (the recorded value first); "" when they are equal."""
    if type(recorded) is not type(asked):
        return f"{path or 'the request'} differs: {_brief(recorded)} vs {_brief(asked)}"
    if isinstance(recorded, dict):
        for key in [*recorded, *(k for k in asked if k not in recorded)]:
            where = f"{path}.{key}" if path else str(key)
            if key not in asked:
                return f"{where} was recorded but is not asked for"
            if key not in recorded:
                return f"{where} is asked for but was not recorded"
            found = first_difference(recorded[key], asked[key], where)
            if found:
                return found
        return ""
    if isinstance(recorded, list):
        for index, (old, new) in enumerate(zip(recorded, asked, strict=False)):
            found = first_difference(old, new, f"{path}[{index}]")
            if found:
                return found
        if len(recorded) != len(asked):
            return f"{path or 'the request'} has {len(asked)} items, {len(recorded)} recorded"
        return ""
    if recorded != asked:
        if isinstance(recorded, str) and isinstance(asked, str):
            old, new = _around_difference(recorded, asked)
            return f"{path or 'the request'} differs: {old} vs {new}"
        return f"{path or 'the request'} differs: {_brief(recorded)} vs {_brief(asked)}"
    return ""


def _around_difference(recorded: str, asked: str, limit: int = 60) -> tuple[str, str]:
    """Two texts as the message shows them: whole when short, else the stretch around
    where they first differ (a timestamp at the end of a long tool result shows)."""
    if len(recorded) <= limit and len(asked) <= limit:
        return repr(recorded), repr(asked)
    at = next(
        (i for i, (a, b) in enumerate(zip(recorded, asked, strict=False)) if a != b),
        min(len(recorded), len(asked)),
    )
    start = max(0, at - 2 * limit // 3)

    def window(text: str) -> str:
        piece = text[start : start + limit]
        return ("..." if start else "") + repr(piece) + ("..." if start + limit < len(text) else "")

    return window(recorded), window(asked)


def _distance(recorded: Any, asked: Any) -> int:
    """How unlike two requests are: the length of the texts that differ (to pick the
    nearest recording)."""
    a, b = json.dumps(recorded, sort_keys=True), json.dumps(asked, sort_keys=True)
    common = next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )
    return len(a) + len(b) - 2 * common


def _brief(value: Any, limit: int = 60) -> str:
    text = repr(value) if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _shown_path(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)

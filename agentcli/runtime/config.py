"""An agent's configuration, grouped by what each part is about.

``Agent(model, config=AgentConfig(...))`` takes the groups; the flat keyword arguments the
docs show (``Agent(model, tool_execution="sequential", finish_turn=...)``) still work: each
one names a field of a group (``FLAT_OPTIONS``), and the agent exposes each as an attribute
(``agent.finish_turn = ...``) that reads and writes that field.

=============  ===========================================================================
``tools``      execution mode, the tool hooks, ``services``, ``tools_context``,
               ``tool_choice``, ``active_tools``, ``tool_callers``
``loop``       the turn-control hooks (``transform_context``, ``convert_to_llm``,
               ``prepare_request``, ``finish_turn``), ``max_steps``, ``runtime_context``,
               ``announce_tools``
``queues``     ``steering_mode`` / ``follow_up_mode``
``provider``   ``thinking_level`` / ``thinking_budgets``, ``session_id``, ``get_api_key``
=============  ===========================================================================
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, TypedDict, TypeVar, get_args, overload

from agentcli.choices import one_of
from agentcli.models.base import THINKING_LEVELS, ThinkingLevel
from agentcli.runtime.queues import QueueMode
from agentcli.runtime.tools import AfterToolCall, BeforeToolCall

if TYPE_CHECKING:
    from agentcli.runtime.choice import ToolChoice
    from agentcli.runtime.messages import Message
    from agentcli.runtime.turns import TurnResult

__all__ = [
    "DEFAULT_MAX_STEPS",
    "DIRECT_TOOL_CALL",
    "FLAT_OPTIONS",
    "AgentConfig",
    "AgentOptions",
    "ApiKeyFunction",
    "LoopConfig",
    "Option",
    "ProviderConfig",
    "QueueConfig",
    "ThinkingLevel",
    "ToolConfig",
    "ToolExecution",
    "check_thinking_level",
]

DEFAULT_MAX_STEPS = 20  # model calls per turn unless the agent is given another limit
ToolExecution = Literal["parallel", "sequential"]
TOOL_EXECUTIONS: tuple[ToolExecution, ...] = get_args(ToolExecution)
# In ``tool_callers``: the model itself may call the tool (seed 000's DIRECT_TOOL_CALL).
DIRECT_TOOL_CALL = "direct"
# (provider) -> key or None (keep the model's own); awaited before every model request
ApiKeyFunction = Callable[[str], Awaitable[str | None]]


def check_thinking_level(level: object) -> ThinkingLevel:
    """``level`` if it is a thinking level, else a ``ValueError`` naming the levels."""
    checked = one_of(level, THINKING_LEVELS)
    if checked is None:
        raise ValueError(
            f"thinking_level must be one of {', '.join(THINKING_LEVELS)}, not {level!r}"
        )
    return checked


@dataclass(slots=True)
class ToolConfig:
    """How tool calls run."""

    execution: ToolExecution = "parallel"
    before_tool_call: BeforeToolCall | None = None
    after_tool_call: AfterToolCall | None = None
    services: Any = None  # the host object tools receive as ``ctx.services``
    tools_context: dict[str, Any] = field(default_factory=dict)
    tool_choice: ToolChoice = None
    active_tools: list[str] | None = None
    # tool name -> who may call it: caller tool names and/or DIRECT_TOOL_CALL (the model);
    # a tool without an entry is callable by anyone
    tool_callers: dict[str, list[str]] = field(default_factory=dict)


@dataclass(slots=True)
class LoopConfig:
    """What shapes each step of a turn."""

    max_steps: int = DEFAULT_MAX_STEPS
    transform_context: Callable[[list[Message]], Any] | None = None
    convert_to_llm: Callable[[list[Message]], Any] | None = None
    prepare_request: Callable[[dict[str, Any]], Any] | None = None
    finish_turn: Callable[[TurnResult, Message], Any] | None = None
    runtime_context: dict[str, Any] = field(default_factory=dict)
    # announce a changed tool loadout in a system message before the request (seed 004)
    announce_tools: bool = False


@dataclass(slots=True)
class QueueConfig:
    """How many queued steering / follow-up messages go at once."""

    steering_mode: QueueMode = "one-at-a-time"
    follow_up_mode: QueueMode = "one-at-a-time"


@dataclass(slots=True)
class ProviderConfig:
    """What is passed to the provider with every request (seed 004)."""

    thinking_level: ThinkingLevel = "off"
    thinking_budgets: dict[str, int] = field(default_factory=dict)  # level -> tokens
    session_id: str | None = None  # for providers that cache prompts by it
    get_api_key: ApiKeyFunction | None = None


@dataclass(slots=True)
class AgentConfig:
    """Every option of an agent, in groups (see the module doc)."""

    tools: ToolConfig = field(default_factory=ToolConfig)
    loop: LoopConfig = field(default_factory=LoopConfig)
    queues: QueueConfig = field(default_factory=QueueConfig)
    provider: ProviderConfig = field(default_factory=ProviderConfig)


class AgentOptions(TypedDict, total=False):
    """The flat keyword arguments of ``Agent`` (each one a field of a group)."""

    tool_execution: ToolExecution
    before_tool_call: BeforeToolCall | None
    after_tool_call: AfterToolCall | None
    services: Any
    tools_context: dict[str, Any] | None
    tool_choice: ToolChoice
    active_tools: Iterable[str] | None
    tool_callers: Mapping[str, Iterable[str]] | None
    max_steps: int
    transform_context: Callable[[list[Message]], Any] | None
    convert_to_llm: Callable[[list[Message]], Any] | None
    prepare_request: Callable[[dict[str, Any]], Any] | None
    finish_turn: Callable[[TurnResult, Message], Any] | None
    runtime_context: dict[str, Any] | None
    announce_tools: bool
    steering_mode: QueueMode
    follow_up_mode: QueueMode
    thinking_level: ThinkingLevel
    thinking_budgets: Mapping[str, int] | None
    session_id: str | None
    get_api_key: ApiKeyFunction | None


# flat keyword -> (group, field)
FLAT_OPTIONS: dict[str, tuple[str, str]] = {
    "tool_execution": ("tools", "execution"),
    "before_tool_call": ("tools", "before_tool_call"),
    "after_tool_call": ("tools", "after_tool_call"),
    "services": ("tools", "services"),
    "tools_context": ("tools", "tools_context"),
    "tool_choice": ("tools", "tool_choice"),
    "active_tools": ("tools", "active_tools"),
    "tool_callers": ("tools", "tool_callers"),
    "max_steps": ("loop", "max_steps"),
    "transform_context": ("loop", "transform_context"),
    "convert_to_llm": ("loop", "convert_to_llm"),
    "prepare_request": ("loop", "prepare_request"),
    "finish_turn": ("loop", "finish_turn"),
    "runtime_context": ("loop", "runtime_context"),
    "announce_tools": ("loop", "announce_tools"),
    "steering_mode": ("queues", "steering_mode"),
    "follow_up_mode": ("queues", "follow_up_mode"),
    "thinking_level": ("provider", "thinking_level"),
    "thinking_budgets": ("provider", "thinking_budgets"),
    "session_id": ("provider", "session_id"),
    "get_api_key": ("provider", "get_api_key"),
}
assert set(FLAT_OPTIONS) == set(AgentOptions.__annotations__)


def _normalised(name: str, value: Any) -> Any:
    """A flat option's value as its group keeps it (copies of containers; None as empty)."""
    if name in ("tools_context", "runtime_context", "thinking_budgets"):
        return dict(value or {})
    if name == "active_tools":
        return list(value) if value is not None else None
    if name == "tool_callers":
        return {str(tool): list(callers) for tool, callers in (value or {}).items()}
    if name == "tool_execution" and value not in TOOL_EXECUTIONS:
        raise ValueError(f"tool_execution must be parallel or sequential, not {value!r}")
    if name == "thinking_level":
        return check_thinking_level(value)
    return value


def build_config(config: AgentConfig | None, options: Mapping[str, Any]) -> AgentConfig:
    """``config`` (or the defaults) with the flat ``options`` applied on top."""
    built = config if config is not None else AgentConfig()
    for name, value in options.items():
        where = FLAT_OPTIONS.get(name)
        if where is None:
            raise TypeError(f"Agent() got an unexpected keyword argument {name!r}")
        setattr(getattr(built, where[0]), where[1], _normalised(name, value))
    return built


T = TypeVar("T")


class Option(Generic[T]):
    """An agent attribute that reads and writes one field of its config
    (``agent.finish_turn`` is ``agent.config.loop.finish_turn``)."""

    __slots__ = ("field", "group", "name", "on_set")

    def __init__(self, name: str, on_set: str | None = None) -> None:
        self.name = name
        self.group, self.field = FLAT_OPTIONS[name]
        self.on_set = on_set  # a method of the owner to call after a change

    @overload
    def __get__(self, owner: None, kind: type) -> Option[T]: ...
    @overload
    def __get__(self, owner: object, kind: type | None = None) -> T: ...
    def __get__(self, owner: object, kind: type | None = None) -> T | Option[T]:
        if owner is None:
            return self
        return getattr(getattr(owner.config, self.group), self.field)  # type: ignore[attr-defined,no-any-return]

    def __set__(self, owner: Any, value: T) -> None:
        setattr(getattr(owner.config, self.group), self.field, _normalised(self.name, value))
        if self.on_set is not None:
            getattr(owner, self.on_set)()

"""The offline ``scripted`` model: rules from ``scripted.yml`` (SPEC section 6).

The first rule whose ``when`` holds wins::

    name: expenses                      # optional model name (default "scripted")
    chunk_delay: 0.05                   # optional seconds between streamed chunks
    delay: 0.2                          # optional seconds before the reply starts
    rules:
      - when: {user: "(?i)submit .*\\$(?P<amount>\\d+)"}
        call: {name: submit_expense, arguments: {amount: "{{ match.amount | int }}"}}
      - when: {tool_result: submit_expense}
        say: "Submitted: {{ result.id }}"
      - say: ["First default", "Second default"]    # cycled per use of this rule

Conditions (all given ones must hold): ``user`` — ``re.search`` on the last user message
(bounded in time by :mod:`agentcli.patterns`: a pattern that backtracks past the bound fails
that model call), and the last message must be the user's (so a rule that calls a tool does
not fire again on that tool's result); ``tool_result`` — the conversation ends with a result of that tool;
``turn`` — the conversation holds exactly N user messages (it does not look at the last
message, so combine it with ``user`` or ``tool_result`` to pin one step).

Actions: ``say`` is text, a mapping (a JSON reply) or a list of those cycled per use of the
rule (wrap a list in a list to reply with a JSON array); ``call`` is one ``{name,
arguments}`` or a list of them; both may be given. A call name matches a tool that has
that name or whose name ends with ``__<name>`` (tools are exposed as ``<server>__<tool>``).
When no rule holds the reply is ``[scripted] no rule in <file> matched ...``.

Templates use Jinja2's sandboxed environment (:mod:`agentcli.sandbox`: the output and every value
in it are bounded to 16,000,000 characters) with ``match`` (``match[0]`` the whole match,
``match[1]``... the groups, ``match.<name>`` named groups), ``result`` (the last tool result,
JSON-decoded when it is JSON), ``user``, ``turn``, ``messages`` and ``tools`` (names). A
string that is exactly one ``{{ expression }}`` inside ``call`` arguments or a JSON reply
keeps the expression's type (``{{ match[1] | int }}`` is a number, ``{{ result }}`` an
object); every other template renders to text.
"""

from __future__ import annotations

import json
import re
import weakref
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentcli.datafiles import YamlLines, field_path, line_of, read_yaml_lines
from agentcli.errors import PackageError, ProviderError
from agentcli.ids import seeded_scope
from agentcli.models.base import ModelSettings, StreamPart
from agentcli.models.offline import (
    ToolCallSpec,
    message_text,
    same_tool,
    stream_reply,
    suggest,
    tool_names,
)
from agentcli.models.pricing import FREE
from agentcli.patterns import Pattern, PatternTimeout, compile_pattern
from agentcli.sandbox import environment, render, size_checked

__all__ = ["ScriptedModel"]

_NATIVE = re.compile(r"\{\{((?:(?!\{\{|\}\}).)*)\}\}", re.DOTALL)
_TOP_KEYS = ("name", "rules", "delay", "chunk_delay")
_RULE_KEYS = ("when", "say", "call", "delay", "chunk_delay")
_WHEN_KEYS = ("user", "tool_result", "turn")
_CALL_KEYS = ("name", "arguments")


class _MatchView:
    """Regex groups for templates: ``match[0]``, ``match[1]``..., ``match.<name>``."""

    __slots__ = ("_groups", "_named")

    def __init__(self, found: Any = None) -> None:  # a regex.Match (re.Match-like) or None
        self._groups: list[str] = [found.group(0), *found.groups(default="")] if found else []
        self._named: dict[str, str] = found.groupdict(default="") if found else {}

    def __getitem__(self, key: int | str) -> str:
        return self._named[key] if isinstance(key, str) else self._groups[key]

    def __getattr__(self, name: str) -> str:
        if name.startswith("_") or name not in self._named:
            raise AttributeError(name)
        return self._named[name]

    def __str__(self) -> str:
        return self._groups[0] if self._groups else ""


@dataclass(slots=True)
class _Text:
    """A string from the rule file: plain, a template, or one expression keeping its type."""

    source: str
    template: Any = None
    expression: Any = None

    def render(self, variables: dict[str, Any]) -> Any:
        if self.expression is not None:
            value = size_checked(self.expression(**variables), "the expression")
            return (
                value
                if isinstance(value, str | int | float | bool | list | dict | None)
                else str(value)
            )
        if self.template is not None:
            return render(self.template, variables)
        return self.source


def _compile(
    value: Any,
    at: tuple[Any, ...],
    fail: Callable[[tuple[Any, ...], str], PackageError],
    native: bool = True,
) -> Any:
    """Turn every string in ``value`` into a ``_Text``, compiling its template once."""
    if isinstance(value, Mapping):
        return {str(k): _compile(v, (*at, str(k)), fail) for k, v in value.items()}
    if isinstance(value, list):
        return [_compile(v, (*at, i), fail) for i, v in enumerate(value)]
    if not isinstance(value, str):
        return value
    text = _Text(value)
    if "{{" in value or "{%" in value:
        from jinja2 import TemplateSyntaxError

        whole = _NATIVE.fullmatch(value) if native else None
        try:
            if whole:
                text.expression = environment().compile_expression(whole.group(1).strip())
            else:
                text.template = environment().from_string(value)
        except TemplateSyntaxError as exc:
            raise fail(at, f"template error: {exc.message}") from None
    return text


def _render(value: Any, variables: dict[str, Any]) -> Any:
    if isinstance(value, _Text):
        return value.render(variables)
    if isinstance(value, dict):
        return {k: _render(v, variables) for k, v in value.items()}
    if isinstance(value, list):
        return [_render(v, variables) for v in value]
    return value


@dataclass(slots=True)
class _Rule:
    index: int
    user: Pattern | None = None
    tool_result: str | None = None
    turn: int | None = None
    says: list[Any] = field(default_factory=list)
    calls: list[tuple[str, Any]] = field(default_factory=list)
    delay: float | None = None
    chunk_delay: float | None = None


@dataclass(slots=True)
class _Conversation:
    messages: list[dict[str, Any]]
    tool_names: list[str]
    user: str
    user_last: bool
    turn: int
    results: list[tuple[str, Any]]  # the trailing tool results: (tool name, decoded content)

    @classmethod
    def of(cls, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> _Conversation:
        users = [m for m in messages if m.get("role") == "user"]
        call_names: dict[str, str] = {}
        for message in messages:
            for call in message.get("tool_calls") or []:
                spec = call.get("function", call)
                call_names[str(call.get("id"))] = spec.get("name") or ""
        results: list[tuple[str, Any]] = []
        for message in reversed(messages):
            if message.get("role") != "tool":
                break
            name = message.get("name") or call_names.get(str(message.get("tool_call_id")), "")
            results.insert(0, (name, _decode(message)))
        return cls(
            messages=messages,
            tool_names=tool_names(tools),
            user=message_text(users[-1]) if users else "",
            user_last=bool(messages) and messages[-1].get("role") == "user",
            turn=len(users),
            results=results,
        )


def _decode(message: dict[str, Any]) -> Any:
    """A tool message's content as data: JSON-decoded text, or the text as it is."""
    if isinstance(message.get("content"), dict):
        return message["content"]
    text = message_text(message)
    try:
        return json.loads(text)
    except ValueError:
        return text


def _error(source: str, lines: YamlLines, at: tuple[Any, ...], message: str) -> PackageError:
    where = f"{field_path(at)}: " if at else ""
    return PackageError(where + message, path=source, line=line_of(lines, at))


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value >= 0


class ScriptedModel:
    """The offline rule model of ``scripted.yml``; see the module docstring for the rules."""

    provider = "offline"
    price = FREE

    def __init__(
        self,
        rules: list[Any],
        *,
        source: str = "<rules>",
        name: str = "scripted",
        delay: float = 0.0,
        chunk_delay: float = 0.0,
        lines: YamlLines | None = None,
    ) -> None:
        self.name = name
        self.source = source
        self.delay = delay
        self.chunk_delay = chunk_delay
        self._lines = lines or {}
        self._rules = [self._compile_rule(raw, i) for i, raw in enumerate(rules)]
        self._uses = [0] * len(self._rules)
        # Under --seed each case cycles its replies from the start, whatever order the cases
        # run in; kept only while the case's seeded scope lives.
        self._scoped_uses: weakref.WeakKeyDictionary[object, list[int]] = (
            weakref.WeakKeyDictionary()
        )

    def _uses_here(self) -> list[int]:
        """How often each rule was used: in this case under --seed, else in the run."""
        scope = seeded_scope()
        if scope is None:
            return self._uses
        uses = self._scoped_uses.get(scope)
        if uses is None:
            uses = self._scoped_uses[scope] = [0] * len(self._rules)
        return uses

    @classmethod
    def from_file(cls, path: Path | str) -> ScriptedModel:
        """Load and validate a rule file; errors name the file, rule and line."""
        path = Path(path)
        data, lines = read_yaml_lines(path)

        def fail(at: tuple[Any, ...], message: str) -> PackageError:
            return _error(str(path), lines, at, message)

        if not isinstance(data, Mapping):
            raise fail((), "must be a mapping with a `rules` list")
        for key in data:
            if key not in _TOP_KEYS:
                raise fail((str(key),), f"unknown key{suggest(str(key), _TOP_KEYS)}")
        if not isinstance(data.get("rules"), list):
            raise fail(("rules",), "`rules` must be a list of rules")
        name = data.get("name", "scripted")
        if not isinstance(name, str) or not name:
            raise fail(("name",), "must be a non-empty string")
        for key in ("delay", "chunk_delay"):
            if not _number(data.get(key, 0)):
                raise fail((key,), "must be a number of seconds >= 0")
        return cls(
            data["rules"],
            source=str(path),
            name=name,
            delay=float(data.get("delay", 0)),
            chunk_delay=float(data.get("chunk_delay", 0)),
            lines=lines,
        )

    @classmethod
    def file_problems(cls, path: Path | str) -> list[PackageError]:
        """Every problem of a rule file, each rule checked on its own (``agent list
        --check``); ``[]`` when ``from_file`` loads it."""
        try:
            cls.from_file(path)
            return []
        except PackageError as error:
            first = error
        try:
            data, lines = read_yaml_lines(Path(path))
        except PackageError:
            return [first]  # not YAML
        rules = data.get("rules") if isinstance(data, Mapping) else None
        if not isinstance(rules, list):
            return [first]  # the file's own shape is wrong: nothing more to check
        checker = cls([], source=str(path), lines=lines)
        found = []
        for index, raw in enumerate(rules):
            try:
                checker._compile_rule(raw, index)
            except PackageError as error:
                found.append(error)
        if str(first) not in {str(error) for error in found}:
            found.insert(0, first)  # a problem outside the rules (an unknown top-level key)
        return found

    def _fail(self, at: tuple[Any, ...], message: str) -> PackageError:
        return _error(self.source, self._lines, at, message)

    def _compile_rule(self, raw: Any, index: int) -> _Rule:
        at = ("rules", index)
        if not isinstance(raw, Mapping):
            raise self._fail(at, "a rule must be a mapping with `say` and/or `call`")
        for key in raw:
            if key not in _RULE_KEYS:
                raise self._fail((*at, str(key)), f"unknown key{suggest(str(key), _RULE_KEYS)}")
        rule = _Rule(index)
        when = raw.get("when") or {}
        if not isinstance(when, Mapping):
            raise self._fail((*at, "when"), "must be a mapping of conditions")
        for key, value in when.items():
            where = (*at, "when", str(key))
            if key == "user":
                if not isinstance(value, str):
                    raise self._fail(where, "must be a regular expression string")
                try:
                    rule.user = compile_pattern(value)
                except ValueError as exc:
                    raise self._fail(where, f"invalid regex {value!r}: {exc}") from None
            elif key == "tool_result":
                if not isinstance(value, str) or not value:
                    raise self._fail(where, "must be a tool name")
                rule.tool_result = value
            elif key == "turn":
                if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                    raise self._fail(where, "must be a whole number >= 1")
                rule.turn = value
            else:
                hint = suggest(str(key), _WHEN_KEYS)
                choices = ", ".join(_WHEN_KEYS)
                raise self._fail(where, f"unknown condition{hint}; use one of {choices}")
        if "say" not in raw and "call" not in raw:
            raise self._fail(at, "a rule needs `say` or `call`")
        if "say" in raw:
            rule.says = self._compile_say(raw["say"], (*at, "say"))
        if "call" in raw:
            rule.calls = self._compile_calls(raw["call"], (*at, "call"))
        for key in ("delay", "chunk_delay"):
            if key in raw:
                if not _number(raw[key]):
                    raise self._fail((*at, key), "must be a number of seconds >= 0")
                setattr(rule, key, float(raw[key]))
        return rule

    def _compile_say(self, say: Any, at: tuple[Any, ...]) -> list[Any]:
        options = say if isinstance(say, list) else [say]
        if not options:
            raise self._fail(at, "must not be an empty list")
        compiled = []
        for i, option in enumerate(options):
            where = (*at, i) if isinstance(say, list) else at
            if isinstance(option, int | float) and not isinstance(option, bool):
                option = str(option)
            if not isinstance(option, str | Mapping | list):
                raise self._fail(where, "must be text, a mapping (a JSON reply) or a list of those")
            compiled.append(_compile(option, where, self._fail, native=not isinstance(option, str)))
        return compiled

    def _compile_calls(self, call: Any, at: tuple[Any, ...]) -> list[tuple[str, Any]]:
        items = call if isinstance(call, list) else [call]
        if not items:
            raise self._fail(at, "must not be an empty list")
        calls = []
        for i, item in enumerate(items):
            where = (*at, i) if isinstance(call, list) else at
            if not isinstance(item, Mapping):
                raise self._fail(where, "a call must be a mapping {name, arguments}")
            for key in item:
                if key not in _CALL_KEYS:
                    raise self._fail(
                        (*where, str(key)), f"unknown key{suggest(str(key), _CALL_KEYS)}"
                    )
            name, arguments = item.get("name"), item.get("arguments") or {}
            if not isinstance(name, str) or not name:
                raise self._fail((*where, "name"), "a call needs a tool `name`")
            if not isinstance(arguments, Mapping):
                raise self._fail((*where, "arguments"), "must be a mapping")
            calls.append((name, _compile(arguments, (*where, "arguments"), self._fail)))
        return calls

    async def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], settings: ModelSettings
    ) -> AsyncIterator[StreamPart]:
        """Answer from the first rule that holds."""
        conversation = _Conversation.of(messages, tools)
        text, calls, rule = self._reply(conversation)
        delay = self.delay if rule is None or rule.delay is None else rule.delay
        chunk_delay = (
            self.chunk_delay if rule is None or rule.chunk_delay is None else rule.chunk_delay
        )
        async for part in stream_reply(
            self.name,
            self.provider,
            messages,
            tools,
            text,
            calls,
            delay=delay,
            chunk_delay=chunk_delay,
        ):
            yield part

    def _reply(self, conversation: _Conversation) -> tuple[str, list[ToolCallSpec], _Rule | None]:
        for rule in self._rules:
            try:
                found = self._holds(rule, conversation)
            except PatternTimeout as exc:  # a broken rule file, like a failing template
                raise ProviderError(
                    f"{self.source}: rules[{rule.index}].when.user: {exc.message}",
                    retryable=False,
                ) from None
            if found is None:
                continue
            match, result = found
            variables = {
                "match": match,
                "result": result,
                "user": conversation.user,
                "turn": conversation.turn,
                "messages": conversation.messages,
                "tools": conversation.tool_names,
            }
            text = ""
            uses = self._uses_here()
            if rule.says:
                say = rule.says[uses[rule.index] % len(rule.says)]
                text = self._render(say, variables, rule, "say")
            uses[rule.index] += 1
            calls: list[ToolCallSpec] = [
                (n, self._render(a, variables, rule, "call"), None) for n, a in rule.calls
            ]
            return text, calls, rule
        label = Path(self.source).name
        if conversation.user_last:
            snippet = (
                conversation.user
                if len(conversation.user) <= 60
                else conversation.user[:57] + "..."
            )
            return f'[scripted] no rule in {label} matched "{snippet}"', [], None
        return f"[scripted] no rule in {label} matched", [], None

    @staticmethod
    def _holds(rule: _Rule, conversation: _Conversation) -> tuple[_MatchView, Any] | None:
        match = _MatchView()
        if rule.user is not None:
            found = rule.user.search(conversation.user) if conversation.user_last else None
            if found is None:
                return None
            match = _MatchView(found)
        if rule.turn is not None and conversation.turn != rule.turn:
            return None
        results = conversation.results
        if rule.tool_result is not None:
            results = [r for r in results if same_tool(r[0], rule.tool_result)]
            if not results:
                return None
        return match, results[-1][1] if results else None

    def _render(self, value: Any, variables: dict[str, Any], rule: _Rule, action: str) -> Any:
        try:
            rendered = _render(value, variables)
            if isinstance(value, _Text):
                return str(rendered)
        except Exception as exc:  # a template failing at run time is a broken rule file
            raise ProviderError(
                f"{self.source}: rules[{rule.index}].{action}: template error: {exc}",
                retryable=False,
            ) from None
        if action == "say":
            return json.dumps(rendered, ensure_ascii=False, default=str)
        return rendered

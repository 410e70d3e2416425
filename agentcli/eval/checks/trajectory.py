"""Trajectory matching: the tool calls of a case against the calls it should have made.

With E the expected calls and A the actual ones (a call *matches* an expected one when the
name matches, the arguments match as ``arguments_mode`` says and, when a ``result`` is
expected, the call succeeded and its result matches partially):

- ``exact``: as many calls as expected, and ``A[i]`` matches ``E[i]`` for every ``i``;
- ``in_order``: every ``E[j]`` matches a call of its own, at increasing positions; other
  calls may come before, between and after;
- ``any_order``: E and A pair up one to one (so there are as many of each), each pair matching;
- ``superset``: every ``E[j]`` pairs with a call of its own; further calls are allowed;
- ``subset``: every call pairs with an expected call of its own; expected calls may go unused.

``in_order`` takes the earliest match of each expected call (which finds an ordering
whenever one exists). The pairings of the unordered modes start greedy and, when that falls
short, grow by augmenting paths (Kuhn's algorithm), so a pairing is found whenever one
exists. Names are compared first, so a pair with another tool costs two string compares.

A failed match explains itself in rows that set the expected and the actual calls side by
side, the first divergence marked ``>``: ``exact`` aligns them with
``difflib.SequenceMatcher`` over the tool names; the other modes by the pairing found,
unpaired expected calls next to an unpaired call of the same tool when there is one.
"""

from __future__ import annotations

import difflib
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from agentcli.eval.checks.matching import (
    ANY,
    APPROX,
    DEFAULT_TOLERANCE,
    TOL,
    match_partial,
    match_value,
    matcher_holds,
    output_text,
    regex_pattern,
    show,
    tool_name_matches,
)
from agentcli.eval.results.model import ToolCall
from agentcli.words import counted as _count

__all__ = [
    "ARGUMENTS_MODES",
    "CALL_KEYS",
    "DEFAULT_ARGUMENTS_MODE",
    "DEFAULT_MODE",
    "DEFAULT_SCOPE",
    "MODES",
    "SCOPES",
    "ArgumentsMode",
    "ExpectedCall",
    "Mode",
    "Scope",
    "TrajectoryMatch",
    "match_trajectory",
]

Mode = Literal["exact", "in_order", "any_order", "subset", "superset"]
ArgumentsMode = Literal["exact", "partial", "ignore"]
Scope = Literal["all", "turn"]
MODES: tuple[Mode, ...] = get_args(Mode)
ARGUMENTS_MODES: tuple[ArgumentsMode, ...] = get_args(ArgumentsMode)
SCOPES: tuple[Scope, ...] = get_args(Scope)
DEFAULT_MODE: Mode = "exact"
DEFAULT_ARGUMENTS_MODE: ArgumentsMode = "partial"
DEFAULT_SCOPE: Scope = "all"
CALL_KEYS = ("name", "arguments", "result")

# What a row says about its pair (empty: they match).
OTHER_TOOL = "other tool"
ARGUMENTS_DIFFER = "arguments differ"
RESULT_DIFFERS = "result differs"
CALL_FAILED = "the call failed"
MISSING = "missing"
EXTRA = "extra"
EXTRA_ALLOWED = "extra (allowed)"
UNUSED_ALLOWED = "not called (allowed)"
OUT_OF_ORDER = "missing (called earlier, out of order)"

_MAX_ROWS = 40  # rows of a failure message; longer alignments show a window around the first
_CELL = 60  # characters of one call in a row
_CURSOR_MISSES = 3  # misses in a row before the pairing stops trying the calls' own order


@dataclass(frozen=True, slots=True)
class ExpectedCall:
    """One expected call: a tool name, and the arguments and result it must have, if given."""

    name: str
    arguments: Any = None
    has_arguments: bool = False
    result: Any = None
    has_result: bool = False
    # The first argument expected to be a plain literal (see _literal_key): looked up in an
    # index of the calls rather than compared with each
    literal_key: str | None = None
    # The expected arguments compiled into one test each (see _argument_tests); None when
    # they are not an object of arguments
    tests: tuple[_ArgumentTest, ...] | None = None

    @classmethod
    def of(cls, item: str | dict[str, Any]) -> ExpectedCall:
        """From a case's ``"name"`` or ``{name, arguments?, result?}``."""
        if isinstance(item, str):
            return cls(item)
        arguments = item.get("arguments")
        return cls(
            item["name"],
            arguments,
            "arguments" in item,
            item.get("result"),
            "result" in item,
            _literal_key(arguments),
            _argument_tests(arguments),
        )

    def difference(self, call: ToolCall, arguments_mode: ArgumentsMode) -> str:
        """Why ``call`` does not match this expected call ("" when it does)."""
        name, tool = self.name, call.tool
        # Every name a call answers to ends with its tool or is a suffix of it: two string
        # tests rule out the other tools before building the call's names.
        if name != tool and not (
            (name.endswith(tool) or tool.endswith(name)) and tool_name_matches(call, name)
        ):
            return OTHER_TOOL
        if (
            self.has_arguments
            and arguments_mode != "ignore"
            and not self.arguments_match(call.arguments, arguments_mode == "exact")
        ):
            return ARGUMENTS_DIFFER
        if self.has_result:
            if call.error:
                return CALL_FAILED
            if not match_partial(call.result, self.result):
                return RESULT_DIFFERS
        return ""

    def arguments_match(self, actual: Any, exact: bool) -> bool:
        """``match_value(actual, self.arguments, exact)``, through the compiled tests: the
        common leaves (a literal of the same type, a pattern, a tolerance) are decided here
        and any other pair by ``match_value`` itself, so the rules are the same."""
        tests = self.tests
        if tests is None or type(actual) is not dict:
            return match_value(actual, self.arguments, exact)
        if exact and len(actual) != len(tests):  # with every expected key present: same keys
            return False
        for key, test, payload in tests:
            found = actual.get(key, _ABSENT)
            if test is _LITERAL:
                if found == payload and type(found) is type(payload):
                    continue
                if found is _ABSENT or not match_value(found, payload, exact):
                    return False
            elif found is _ABSENT:
                return False
            elif test is _REGEX:
                if payload.search(found if type(found) is str else output_text(found)) is None:
                    return False
            elif test is _APPROX:
                target, tolerance, matcher = payload
                kind = type(found)
                if (kind is float or kind is int) and abs(found - target) <= tolerance:
                    continue
                if not matcher_holds(found, matcher):
                    return False
            elif test is _NESTED and not match_value(found, payload, exact):
                return False
        return True

    def text(self) -> str:
        """The call as a row shows it: ``name {arguments} -> result``."""
        text = self.name
        if self.has_arguments:
            text += " " + show(self.arguments, _CELL)
        if self.has_result:
            text += " -> " + show(self.result, _CELL // 2)
        return _clip(text)


@dataclass(frozen=True, slots=True)
class _Row:
    """One line of an alignment: an expected call, an actual call (indexes), and the verdict."""

    expected: int | None
    actual: int | None
    note: str = ""
    problem: bool = False


@dataclass(slots=True)
class TrajectoryMatch:
    """The outcome of matching: whether it passed, and the message saying how."""

    passed: bool
    message: str


def match_trajectory(
    expected: Sequence[ExpectedCall],
    calls: Sequence[ToolCall],
    mode: Mode = DEFAULT_MODE,
    arguments_mode: ArgumentsMode = DEFAULT_ARGUMENTS_MODE,
) -> TrajectoryMatch:
    """Match ``calls`` against ``expected`` in ``mode``; a failure's message aligns them."""
    pairs = _Pairs(expected, calls, arguments_mode)
    if mode == "exact":
        passed = len(expected) == len(calls) and not any(
            wanted.difference(call, arguments_mode)
            for wanted, call in zip(expected, calls, strict=True)
        )
        rows = None if passed else _exact_rows(pairs)
    elif mode == "in_order":
        found = _in_order(pairs)
        passed = len(found) == len(expected)
        rows = None if passed else _in_order_rows(pairs, found)
    else:
        partner, owner = _pairing(pairs, mode)
        passed = _paired_enough(mode, partner, owner)
        rows = None if passed else _pairing_rows(pairs, mode, partner, owner)
    if rows is None:
        return TrajectoryMatch(True, f"trajectory ({mode}) matches: {_passed(mode, pairs)}")
    return TrajectoryMatch(False, _failure(mode, pairs, rows))


class _Pairs:
    """The expected and actual calls, with each pair's difference computed once."""

    def __init__(
        self,
        expected: Sequence[ExpectedCall],
        calls: Sequence[ToolCall],
        arguments_mode: ArgumentsMode,
    ) -> None:
        self.expected = expected
        self.calls = calls
        self.arguments_mode = arguments_mode
        self._differences: dict[tuple[int, int], str] = {}
        self._by_tool: dict[str, list[int]] | None = None
        self._separated: bool | None = None  # a tool's own name holds "__" (None: not yet known)
        self._named: dict[str, list[int]] = {}
        self._keyed: dict[str | tuple[str, str], _KeyIndex] = {}

    def difference(self, j: int, i: int) -> str:
        """Why call ``i`` does not match expected call ``j`` ("" when it does), remembered."""
        key = (j, i)
        found = self._differences.get(key)
        if found is None:
            found = self._differences[key] = self.expected[j].difference(
                self.calls[i], self.arguments_mode
            )
        return found

    def candidates(self, j: int) -> list[int]:
        """The calls (ascending indexes) of the tool expected call ``j`` names."""
        name = self.expected[j].name
        found = self._named.get(name)
        if found is None:
            found = self._named[name] = self._calls_named(name)
        return found

    def matchable(self, j: int) -> list[int]:
        """The calls (ascending) that may match expected call ``j``: those of its tool or,
        when one of its expected arguments is a plain literal, those whose argument could
        equal it, whatever their tool (``difference`` tells the tools apart). The latter
        come from an index, so a shuffled trajectory pairs in linear time rather than
        comparing each expected call with every call of its tool."""
        expected = self.expected[j]
        key = expected.literal_key
        if key is None or self.arguments_mode == "ignore":
            return self.candidates(j)
        separated = self._separated
        if separated is None:
            separated = self._tool_separated()
        name = expected.name
        if not separated and "__" not in name:
            # Simple names: one index of every call by this argument's value.
            index = self._keyed.get(key)
            if index is None:
                index = self._keyed[key] = _KeyIndex(self.calls, range(len(self.calls)), key)
        else:  # names by the full rules: an index of this name's calls only
            index = self._keyed.get((name, key))
            if index is None:
                index = self._keyed[(name, key)] = _KeyIndex(self.calls, self.candidates(j), key)
        return index.lookup(expected.arguments[key])

    def _tool_separated(self) -> bool:
        """Whether a tool's own name holds "__" (then names need the full rules)."""
        separated = self._separated
        if separated is None:
            separated = self._separated = any("__" in call.tool for call in self.calls)
        return separated

    def _calls_named(self, name: str) -> list[int]:
        if self._by_tool is None:
            self._by_tool = {}
            for index, call in enumerate(self.calls):
                self._by_tool.setdefault(call.tool, []).append(index)
        if "__" not in name and not self._tool_separated():
            # Without "__" on either side a name answers only to the tool of that name.
            return self._by_tool.get(name, [])
        found: list[int] = []
        buckets = 0
        for tool, indexes in self._by_tool.items():
            # Every name a call answers to ends with its tool, or is a suffix of it.
            if tool == name:
                found.extend(indexes)
            elif name.endswith(tool) or tool.endswith(name):
                found.extend(i for i in indexes if tool_name_matches(self.calls[i], name))
            else:
                continue
            buckets += 1
        return sorted(found) if buckets > 1 else found

    def label(self, j: int) -> str:
        """The tool expected call ``j`` names, as the calls spell it (for aligning by name)."""
        candidates = self.candidates(j)
        return self.calls[candidates[0]].tool if candidates else self.expected[j].name


# One compiled expected argument: (key, how it is tested, what it is tested against).
_ArgumentTest = tuple[str, object, Any]
# How: sentinels compared by identity (the loop asks once per argument compared)
_LITERAL, _REGEX, _APPROX, _ANY, _NESTED = (object() for _ in range(5))
_ABSENT = object()  # an argument the call does not have


def _argument_tests(arguments: Any) -> tuple[_ArgumentTest, ...] | None:
    """Each expected argument with the test ``match_value`` would apply to it: a literal
    (text or a number), a compiled ``regex:`` pattern, an ``$approx`` target with its
    tolerance, ``$any``, or anything else (nested, compared by ``match_value``)."""
    if type(arguments) is not dict or ANY in arguments or APPROX in arguments:
        return None  # not an object of arguments (or a matcher for all of them)
    tests: list[_ArgumentTest] = []
    for key, value in arguments.items():
        kind = type(value)
        if kind is str and value.startswith("regex:"):
            tests.append((key, _REGEX, regex_pattern(value)))
        elif kind is str or kind is int or kind is float:
            tests.append((key, _LITERAL, value))
        elif kind is dict and ANY in value:
            tests.append((key, _ANY, value))
        elif kind is dict and APPROX in value:
            target, tolerance = value[APPROX], value.get(TOL, DEFAULT_TOLERANCE)
            tests.append((key, _APPROX, (target, tolerance, value)))
        else:
            tests.append((key, _NESTED, value))
    return tuple(tests)


def _literal_key(arguments: Any) -> str | None:
    """The first expected argument whose value is a plain literal (text that is not a
    pattern, or a number), or None."""
    if type(arguments) is not dict:
        return None
    for key, value in arguments.items():
        kind = type(value)
        if (kind is str and not value.startswith("regex:")) or kind in (int, float):
            return str(key)
    return None


class _KeyIndex:
    """Calls by the value of one argument, for looking up the calls a literal expected
    value could match (``match_value``'s rules: text equals text, or the text form of
    another value in partial mode; a number equals only a number). The text and the number
    halves are each built on their first lookup (an argument is usually expected as one or
    the other)."""

    __slots__ = ("calls", "halves", "indexes", "key")

    def __init__(self, calls: Sequence[ToolCall], indexes: Iterable[int], key: str) -> None:
        self.calls, self.indexes, self.key = calls, indexes, key
        # per half (text: True, numbers: False): the calls by value, and the calls that may
        # match otherwise (JSON-text arguments for both; other types, for text)
        self.halves: dict[bool, tuple[dict[Any, list[int]], list[int]]] = {}

    def lookup(self, value: Any) -> list[int]:
        """The calls (ascending) whose argument could match the literal ``value``."""
        text = type(value) is str
        half = self.halves.get(text)
        if half is None:
            half = self.halves[text] = self._half(text)
        by_value, loose = half
        exact = by_value.get(value, _NONE)
        if not loose:
            return exact
        return sorted(set(exact).union(loose))

    def _half(self, text: bool) -> tuple[dict[Any, list[int]], list[int]]:
        """The calls by this argument's value, text or numbers, and the loose ones."""
        by_value: dict[Any, list[int]] = {}
        loose: list[int] = []
        kinds = _TEXT if text else _NUMBERS
        calls, key = self.calls, self.key
        for i in self.indexes:
            arguments = calls[i].arguments
            if type(arguments) is not dict:
                loose.append(i)
            elif key in arguments:  # a missing argument matches no expected value
                value = arguments[key]
                if type(value) in kinds:
                    by_value.setdefault(value, []).append(i)
                elif text:  # a number (or anything) may equal text by its text form
                    loose.append(i)
        return by_value, loose


_TEXT = frozenset((str,))
_NUMBERS = frozenset((int, float))
_NONE: list[int] = []  # no call (never appended to)


# --- matching --------------------------------------------------------------------------------


def _in_order(pairs: _Pairs) -> list[int]:
    """The earliest position matching each expected call after the previous one's; it stops
    at the first expected call without one (so it is shorter than E when that fails)."""
    found: list[int] = []
    calls, arguments_mode = pairs.calls, pairs.arguments_mode
    position = 0
    for expected in pairs.expected:
        while position < len(calls) and expected.difference(calls[position], arguments_mode):
            position += 1
        if position == len(calls):
            break
        found.append(position)
        position += 1
    return found


def _pairing(pairs: _Pairs, mode: Mode) -> tuple[list[int | None], list[int | None]]:
    """A largest one-to-one pairing: ``partner[j]`` the call of expected ``j``, ``owner[i]``
    the expected call of call ``i`` (None: unpaired)."""
    partner: list[int | None] = [None] * len(pairs.expected)
    owner: list[int | None] = [None] * len(pairs.calls)
    calls, arguments_mode = pairs.calls, pairs.arguments_mode
    # Calls made in the expected order pair at the cursor (the call after the last one
    # paired) without a search; after a few misses in a row the order is taken to be another.
    cursor, misses = 0, 0
    for j, expected in enumerate(pairs.expected):
        if misses < _CURSOR_MISSES and cursor < len(calls) and owner[cursor] is None:
            if not expected.difference(calls[cursor], arguments_mode):
                partner[j], owner[cursor] = cursor, j
                cursor, misses = cursor + 1, 0
                continue
            misses += 1
        for i in pairs.matchable(j):
            if owner[i] is None and not expected.difference(calls[i], arguments_mode):
                partner[j], owner[i] = i, j
                cursor = i + 1
                break
    if not _paired_enough(mode, partner, owner):
        for j in range(len(pairs.expected)):
            if partner[j] is None:
                _augment(pairs, j, partner, owner)
    return partner, owner


def _augment(pairs: _Pairs, start: int, partner: list[int | None], owner: list[int | None]) -> bool:
    """Pair expected call ``start`` by moving others along an augmenting path (breadth first);
    False when there is none."""
    reached_from: dict[int, int] = {}
    queue = deque([start])
    while queue:
        j = queue.popleft()
        for i in pairs.matchable(j):
            if i in reached_from or pairs.difference(j, i):
                continue
            reached_from[i] = j
            holder = owner[i]
            if holder is None:
                call: int | None = i
                while call is not None:  # flip the path back to ``start``
                    expected = reached_from[call]
                    previous = partner[expected]
                    partner[expected], owner[call] = call, expected
                    call = previous
                return True
            queue.append(holder)
    return False


def _paired_enough(mode: Mode, partner: list[int | None], owner: list[int | None]) -> bool:
    """Whether a pairing satisfies ``mode`` (one of the unordered modes)."""
    every_expected = None not in partner
    every_call = None not in owner
    if mode == "superset":
        return every_expected
    if mode == "subset":
        return every_call
    return every_expected and every_call


# --- explaining ------------------------------------------------------------------------------


def _exact_rows(pairs: _Pairs) -> list[_Row]:
    """Expected and actual calls aligned by tool name (``difflib.SequenceMatcher``)."""
    expected = [pairs.label(j) for j in range(len(pairs.expected))]
    actual = [call.tool for call in pairs.calls]
    rows: list[_Row] = []
    matcher = difflib.SequenceMatcher(None, expected, actual, autojunk=False)
    for _tag, e0, e1, a0, a1 in matcher.get_opcodes():
        for j, i in zip(range(e0, e1), range(a0, a1), strict=False):
            note = pairs.difference(j, i)
            rows.append(_Row(j, i, note, bool(note)))
        paired = min(e1 - e0, a1 - a0)
        rows.extend(_Row(j, None, MISSING, True) for j in range(e0 + paired, e1))
        rows.extend(_Row(None, i, EXTRA, True) for i in range(a0 + paired, a1))
    return rows


def _in_order_rows(pairs: _Pairs, found: list[int]) -> list[_Row]:
    """The calls in their order beside the expected calls they matched; the first expected
    call without a match beside a later call of its tool, if any, else listed as missing."""
    owner = {i: j for j, i in enumerate(found)}
    rows = [
        _Row(owner[i], i) if i in owner else _Row(None, i, EXTRA_ALLOWED)
        for i in range(len(pairs.calls))
    ]
    first = len(found)
    after = found[-1] if found else -1
    near = next((i for i in pairs.candidates(first) if i > after and i not in owner), None)
    missing = list(range(first, len(pairs.expected)))
    if near is not None:
        rows[near] = _Row(first, near, pairs.difference(first, near), True)
        missing = missing[1:]
    earlier = any(not pairs.difference(first, i) for i in pairs.candidates(first) if i <= after)
    for j in missing:
        note = OUT_OF_ORDER if j == first and earlier else MISSING
        rows.append(_Row(j, None, note, True))
    return rows


def _pairing_rows(
    pairs: _Pairs, mode: Mode, partner: list[int | None], owner: list[int | None]
) -> list[_Row]:
    """The calls in their order beside their paired expected calls; an unpaired expected call
    beside an unpaired call of its tool when there is one, else listed after them."""
    extra_ok, unused_ok = mode == "superset", mode == "subset"
    rows = [
        _Row(j, i)
        if j is not None
        else _Row(None, i, EXTRA_ALLOWED if extra_ok else EXTRA, not extra_ok)
        for i, j in enumerate(owner)
    ]
    near_misses: set[int] = set()
    unplaced: list[int] = []
    for j, paired in enumerate(partner):
        if paired is not None:
            continue
        near = next(
            (i for i in pairs.candidates(j) if owner[i] is None and i not in near_misses), None
        )
        if near is None:
            unplaced.append(j)
            continue
        near_misses.add(near)
        rows[near] = _Row(j, near, pairs.difference(j, near), True)
    for j in unplaced:
        rows.append(_Row(j, None, UNUSED_ALLOWED if unused_ok else MISSING, not unused_ok))
    return rows


def _passed(mode: Mode, pairs: _Pairs) -> str:
    """The end of a passing message: what matched."""
    expected, actual = len(pairs.expected), len(pairs.calls)
    if mode == "exact":
        return f"{_count(actual, 'call')} as expected"
    if mode == "in_order":
        return f"{_count(expected, 'expected call')} in order among {_count(actual, 'call')}"
    if mode == "any_order":
        return f"{_count(actual, 'call')} as expected, in some order"
    if mode == "superset":
        return f"{_count(expected, 'expected call')} among {_count(actual, 'call')}"
    return f"{_count(actual, 'call')}, each among the {_count(expected, 'expected call')}"


def _failure(mode: Mode, pairs: _Pairs, rows: list[_Row]) -> str:
    """The message of a failed match: the first divergence in words, then the alignment."""
    first = next(index for index, row in enumerate(rows) if row.problem)
    head = (
        f"trajectory ({mode}) does not match ({_count(len(pairs.expected), 'expected call')}, "
        f"{_count(len(pairs.calls), 'actual call')}): {_divergence(pairs, rows[first])}"
    )
    return "\n".join([head, *_table(pairs, rows, first)])


def _divergence(pairs: _Pairs, row: _Row) -> str:
    """The first divergence in words."""
    if row.expected is None:
        assert row.actual is not None  # every row holds one call at least
        return f"call {row.actual + 1} {_actual_text(pairs, row)} was not expected"
    wanted = pairs.expected[row.expected].text()
    if row.actual is None:
        return f"expected call {row.expected + 1} {wanted} was not made{_why_missing(row)}"
    return (
        f"expected call {row.expected + 1} {wanted}, got call {row.actual + 1} "
        f"{_actual_text(pairs, row)} ({row.note})"
    )


def _why_missing(row: _Row) -> str:
    return " in order (it was made earlier)" if row.note == OUT_OF_ORDER else ""


def _table(pairs: _Pairs, rows: list[_Row], first: int) -> list[str]:
    """The alignment as text lines: ``>`` marks the first divergence; a long one is cut to a
    window around it."""
    start = max(0, min(first - _MAX_ROWS // 4, len(rows) - _MAX_ROWS))
    shown = rows[start : start + _MAX_ROWS]
    digits = len(str(max(len(pairs.expected), len(pairs.calls), 1)))
    left = [
        _cell(
            row.expected,
            digits,
            pairs.expected[row.expected].text() if row.expected is not None else "",
        )
        for row in shown
    ]
    right = [
        _cell(row.actual, digits, _actual_text(pairs, row) if row.actual is not None else "")
        for row in shown
    ]
    width = max(len(f"expected ({len(pairs.expected)})"), *map(len, left))
    right_width = max(len(f"actual ({len(pairs.calls)})"), *map(len, right))
    lines = [
        f"     {'expected (' + str(len(pairs.expected)) + ')':<{width}}   actual ({len(pairs.calls)})"
    ]
    if start:
        lines.append(f"     … {_count(start, 'row')} before")
    for index, (row, expected, actual) in enumerate(zip(shown, left, right, strict=True)):
        mark = "  > " if start + index == first else "    "
        line = f"{mark} {expected:<{width}}   {actual:<{right_width}}   {row.note}"
        lines.append(line.rstrip())
    after = len(rows) - start - len(shown)
    if after > 0:
        lines.append(f"     … {_count(after, 'row')} after")
    return lines


def _cell(index: int | None, digits: int, text: str) -> str:
    """``n text`` for a call, blank for none."""
    return "" if index is None else f"{index + 1:>{digits}} {text}"


def _actual_text(pairs: _Pairs, row: _Row) -> str:
    """An actual call as a row shows it; with its result or error when one was expected."""
    assert row.actual is not None
    call = pairs.calls[row.actual]
    text = f"{call.tool} {show(call.arguments, _CELL)}"
    wants_result = row.expected is not None and pairs.expected[row.expected].has_result
    if call.error and (wants_result or row.note == CALL_FAILED):
        text += f" -> error: {call.error}"
    elif wants_result:
        text += " -> " + show(call.result, _CELL // 2)
    return _clip(text)


def _clip(text: str) -> str:
    """One line of at most ``2 * _CELL`` characters."""
    text = " ".join(text.split())
    return text if len(text) <= 2 * _CELL else text[: 2 * _CELL - 1] + "…"

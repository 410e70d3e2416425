"""User-supplied regular expressions, compiled once and matched with a time bound.

Patterns from case files (``regex`` assertions, ``regex:`` values, checkpoints), scripted
rules (``when: {user: ...}``) and ``--run`` are the user's. A pattern with catastrophic
backtracking (``(a|aa)+$`` on ``"a" * 40 + "!"``) would run for hours inside the C matcher on
the event-loop thread, where neither ``--timeout`` nor a signal can reach it. So every such
pattern:

- must be valid for Python's ``re`` (the syntax the docs promise), checked at load time;
- must not use the two ``re``-valid spellings the matcher reads differently: a fuzzy
  constraint such as ``x{e<=1}`` (literal text for ``re``) and a POSIX class such as
  ``[[:alpha:]]`` inside a set (``re`` warns and reads plain characters). Both are refused
  with a hint to escape the bracket, so every accepted pattern means what it meant to ``re``;
- is refused when its counted repeats unroll past :data:`MAX_UNROLLED` steps: the matcher
  expands ``{n}`` when it compiles, so ``((a{1000}){1000}){1000}`` would take many minutes;
- is compiled by the PyPI ``regex`` package in its ``re``-compatible ``VERSION0`` mode and
  searched with ``timeout=MATCH_TIMEOUT`` (1 s per search). Running out raises
  :class:`PatternTimeout`, which names the pattern and the length of the text.

The timer costs about 5 µs a search, ten times a short search itself, and a trajectory
assertion makes one search per call. So a search whose worst case is provably small skips it
and runs on ``re``: when the pattern has no lookaround, back-reference, atomic group or
possessive repeat, and no repeat holds another repeat or an alternation (so backtracking can
only choose how often each repeat goes round: a polynomial, not an exponential), and that
polynomial over the text's length stays under :data:`FAST_STEPS` (see
:func:`_backtracking_cost`). ``^item \\d+$`` on a 7-character value takes ``re``; ``(a|aa)+$``
never does; ``.*error.*`` only on texts of under 16 characters.

``regex`` is imported on first use: ``agent --help`` and runs without patterns never load it.
"""

from __future__ import annotations

import json
import re
import warnings
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from agentcli.errors import ConfigError

__all__ = [
    "FAST_STEPS",
    "MATCH_TIMEOUT",
    "MAX_UNROLLED",
    "Pattern",
    "PatternTimeout",
    "compile_pattern",
    "pattern_problem",
]

MATCH_TIMEOUT = 1.0  # seconds one search may take; honest patterns need microseconds
MAX_UNROLLED = 100_000  # steps counted repeats may expand to (about 50 ms of compiling)
# Worst-case backtracking steps under which a search needs no timer: about 10 ms of matching.
FAST_STEPS = 1_000_000
_MAX_FAST_DEGREE = 6  # more unbounded repeats than this: the bound is never small enough

# An unescaped {...} that regex reads as a fuzzy-match constraint (re: literal text).
_FUZZY = re.compile(r"(?<!\\)(?:\\\\)*(\{[0-9eids<=+,]*[eids][0-9eids<=+,]*\})")
_POSIX_CLASS = re.compile(r"\[:\^?[A-Za-z]+:\]")


class PatternTimeout(ConfigError):
    """A user pattern took longer than :data:`MATCH_TIMEOUT` on one text."""


@dataclass(frozen=True, slots=True)
class Pattern:
    """A compiled user pattern whose ``search`` is bounded by :data:`MATCH_TIMEOUT`."""

    pattern: str
    label: str
    compiled: Any
    # ``re``'s compilation, for texts shorter than ``fast_below`` (0: never), where the
    # pattern's worst case is under FAST_STEPS steps and the timer would cost more than it saves
    plain: re.Pattern[str] | None = None
    fast_below: int = 0

    def untimed(self, text: str) -> bool:
        """Whether searching ``text`` is provably quick enough to run without the timer."""
        return len(text) < self.fast_below

    def search(self, text: str) -> Any:
        """The first match in ``text`` (a ``regex.Match`` or, when provably quick, an
        ``re.Match``: the same groups and spans) or None.

        Raises :class:`PatternTimeout` when the search takes longer than the bound.
        """
        if len(text) < self.fast_below and self.plain is not None:
            return self.plain.search(text)
        try:
            return self.compiled.search(text, timeout=MATCH_TIMEOUT)
        except TimeoutError:
            raise PatternTimeout(
                f"{self.label} {_quoted(self.pattern)} took longer than {MATCH_TIMEOUT:g}s on "
                f"{len(text)} characters (catastrophic backtracking?) — simplify the pattern"
            ) from None


def pattern_problem(pattern: str) -> str | None:
    """Why ``pattern`` is refused (``re``'s own message, or too many unrolled repeats), or None."""
    try:
        compile_pattern(pattern)
    except ValueError as exc:
        return str(exc)
    return None


@lru_cache(maxsize=1024)
def compile_pattern(pattern: str, label: str = "regex") -> Pattern:
    """``pattern`` compiled for bounded searching; ``label`` names it in timeout errors.

    Raises ``ValueError`` with the reason for a pattern that is refused.
    """
    try:
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")  # re's "possible nested set" is ours to judge
            plain = re.compile(pattern)  # the syntax and messages users know (and the docs promise)
            # re._parser is private (typeshed has no stub for it), but it is the shape re reads
            tree = re._parser.parse(pattern)  # type: ignore[attr-defined]
    except (re.error, OverflowError) as exc:
        raise ValueError(str(exc)) from None
    except RecursionError:
        raise ValueError("groups are nested too deeply") from None
    nested_set = any(issubclass(w.category, FutureWarning) for w in warned)
    problem = _read_differently(pattern, nested_set)
    if problem:
        raise ValueError(problem)
    if _unrolled(tree) > MAX_UNROLLED:
        raise ValueError(
            f"its counted repeats ({{n}}) expand to more than {MAX_UNROLLED:,} steps; "
            "use smaller counts"
        )
    import regex

    try:
        compiled = regex.compile(pattern, regex.VERSION0)
    except (regex.error, RecursionError, OverflowError) as exc:
        raise ValueError(f"not supported by the matcher: {exc}") from None
    fast_below = _fast_below(_backtracking_cost(tree), len(pattern))
    return Pattern(pattern, label, compiled, plain if fast_below else None, fast_below)


def _read_differently(pattern: str, nested_set: bool) -> str | None:
    """Why the matcher would read ``pattern`` unlike ``re``, or None.

    ``nested_set`` says ``re`` warned about a ``[`` inside a set (the only place a POSIX
    class is read).
    """
    fuzzy = _FUZZY.search(pattern)
    if fuzzy:
        return f"{_quoted(fuzzy.group(1))} reads as a fuzzy-match constraint here; write \\{{ for a literal brace"
    posix = _POSIX_CLASS.search(pattern) if nested_set else None
    if posix:
        return (
            f"{_quoted(posix.group(0))} inside [...] reads as a POSIX class here but as single "
            "characters in Python's re; write \\[ for a literal bracket"
        )
    return None


_REPEATS = frozenset(("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"))


def _unrolled(items: Any) -> int:
    """About how many steps the matcher's compiler expands a parsed pattern to: each item
    counts one, a counted repeat multiplies its body by its minimum."""
    total = 0
    for op, av in items:
        if str(op) in _REPEATS:
            low, _high, body = av
            total += max(low, 1) * _unrolled(body)
        else:
            total += 1 + sum(_unrolled(child) for child in _children(av))
        if total > MAX_UNROLLED:
            break  # enough to refuse; huge nested counts need not be multiplied out
    return total


_PLAIN_ITEMS = frozenset(("LITERAL", "NOT_LITERAL", "ANY", "IN", "AT", "CATEGORY"))


def _backtracking_cost(items: Any) -> tuple[int, int] | None:
    """``(k, b)`` such that a search of a text of ``n`` characters explores at most
    ``n ** k * b`` ways through the pattern from each start; None when no such bound holds
    (lookarounds, back-references, atomic groups, and repeats of repeats or alternations,
    whose backtracking can be exponential).

    Each unbounded repeat chooses among at most ``n`` iteration counts (``k`` counts them), a
    bounded ``{lo,hi}`` among ``hi - lo + 1``, and an alternation among its branches' ways
    (the sum, each taken at the largest ``k``); plain items choose nothing."""
    degree, factor = 0, 1
    for op, av in items:
        name = str(op)
        if name in _PLAIN_ITEMS:
            continue
        if name == "SUBPATTERN":
            inner = _backtracking_cost(av[3])
            if inner is None:
                return None
            degree, factor = degree + inner[0], factor * inner[1]
        elif name == "BRANCH":
            branches = [_backtracking_cost(branch) for branch in av[1]]
            if any(branch is None for branch in branches):
                return None
            known = [branch for branch in branches if branch is not None]
            degree += max(branch[0] for branch in known)
            factor *= sum(branch[1] for branch in known)
        elif name in ("MAX_REPEAT", "MIN_REPEAT"):
            low, high, body = av
            if _backtracking_cost(body) != (0, 1) or _has_branch(body):
                return None  # a repeat of a repeat or of an alternation
            if high == re._constants.MAXREPEAT:  # type: ignore[attr-defined]  # no stub (private)
                degree += 1
            else:
                factor *= high - low + 1
        else:
            return None  # lookaround, back-reference, conditional, atomic, possessive
    return degree, factor


def _has_branch(items: Any) -> bool:
    """Whether a (repeat-free) parsed pattern holds an alternation, at any depth."""
    for op, av in items:
        if str(op) == "BRANCH" or (str(op) == "SUBPATTERN" and _has_branch(av[3])):
            return True
    return False


def _fast_below(cost: tuple[int, int] | None, pattern_length: int) -> int:
    """The text length under which a search costs at most FAST_STEPS (0: none).

    A search tries ``n + 1`` starts, each exploring ``n ** k * b`` ways of at most
    ``n + m`` steps (``m`` the pattern's length), so ``(n + 1) ** (k + 2) * b * (m + 1)``
    bounds it."""
    if cost is None or cost[0] > _MAX_FAST_DEGREE:
        return 0
    degree, factor = cost
    scale = factor * (pattern_length + 1)
    if scale > FAST_STEPS:
        return 0
    below = int((FAST_STEPS / scale) ** (1 / (degree + 2)))
    while below > 0 and (below + 1) ** (degree + 2) * scale > FAST_STEPS:
        below -= 1  # the float root may land one above the exact bound
    return below


def _children(av: Any) -> list[Any]:
    """The sub-patterns inside an item's argument (groups, branches, lookarounds)."""
    if isinstance(av, re._parser.SubPattern):  # type: ignore[attr-defined]  # no stub (private)
        return [av]
    if isinstance(av, tuple | list):
        return [child for part in av for child in _children(part)]
    return []


def _quoted(pattern: str, limit: int = 80) -> str:
    """The pattern as a JSON string, clipped for messages."""
    text = json.dumps(pattern, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"

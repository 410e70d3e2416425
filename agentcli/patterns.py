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
    "MATCH_TIMEOUT",
    "MAX_UNROLLED",
    "Pattern",
    "PatternTimeout",
    "compile_pattern",
    "pattern_problem",
]

MATCH_TIMEOUT = 1.0  # seconds one search may take; honest patterns need microseconds
MAX_UNROLLED = 100_000  # steps counted repeats may expand to (about 50 ms of compiling)

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

    def search(self, text: str) -> Any:
        """The first match in ``text`` (a ``regex.Match``, ``re.Match``-like) or None.

        Raises :class:`PatternTimeout` when the search takes longer than the bound.
        """
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
            re.compile(pattern)  # the syntax and messages users know (and the docs promise)
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
    return Pattern(pattern, label, compiled)


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

"""agentcli.patterns: user patterns mean what they mean to ``re``, and every search is bounded."""

from __future__ import annotations

import re
import time

import pytest

from agentcli.patterns import MATCH_TIMEOUT, PatternTimeout, compile_pattern, pattern_problem

ORDINARY = [
    r"(?i)^hello",
    r"EXP-\d+$",
    r'"id":\s*\d+',
    r'{"status": "ok"}',
    r"x{name}",
    r"a{2,3}b{,2}c{1}",
    r"(?P<amount>\d+(?:\.\d\d)?)\s*(?:EUR|€)",
    r"(?s)start.*?end",
    r"(?m)^- .+$",
    r"\bcafé\b",
    r"(?x) a \s+ b  # verbose",
    r"(?<=\$)\d+",
    r"(?<!no )coffee",
    r"(a)?(?(1)b|c)",
    r"[^\W\d_]+",
    r"\N{EM DASH}",
    r"(?>a+)b",
    r"a*+b",
    r"[[a]",
    r"(?i)straße|ǅ|ſ",
]
TEXTS = [
    "",
    "hello world",
    "HELLO",
    "EXP-123",
    '{"id": 42}',
    '{"status": "ok"}',
    "x{name}",
    "aab cc",
    "12.50 EUR",
    "start a end b end",
    "- one\n- two",
    "café crème",
    "a   b",
    "$15",
    "no coffee, coffee",
    "ab",
    "c",
    "abc_12",
    "—",
    "aaab",
    "[a",
    "STRASSE ǆ S",
]


@pytest.mark.parametrize("pattern", ORDINARY)
def test_ordinary_patterns_match_exactly_as_re_does(pattern):
    assert pattern_problem(pattern) is None
    compiled, expected = compile_pattern(pattern), re.compile(pattern)
    for text in TEXTS:
        ours, theirs = compiled.search(text), expected.search(text)
        assert (ours and (ours.span(), ours.groups())) == (
            theirs and (theirs.span(), theirs.groups())
        ), (pattern, text)


def test_invalid_patterns_keep_the_messages_of_re():
    assert pattern_problem("(unclosed") == "missing ), unterminated subpattern at position 0"
    assert pattern_problem("a{4294967296}") == "the repetition number is too large"
    assert pattern_problem("(" * 2000 + ")" * 2000) == "groups are nested too deeply"


def test_a_backtracking_search_ends_within_the_bound():
    pattern = compile_pattern("(a|aa)+$", label="--run pattern")
    started = time.process_time()
    with pytest.raises(PatternTimeout, match=r'^--run pattern "\(a\|aa\)\+\$" took longer than 1s'):
        pattern.search("a" * 60 + "!")
    assert time.process_time() - started < MATCH_TIMEOUT + 0.5


def test_escaped_braces_and_brackets_stay_allowed():
    assert pattern_problem(r"x\{e<=1}") is None
    assert pattern_problem(r"[\[:alpha:]]") is None
    assert compile_pattern(r"x\{e<=1}").search("x{e<=1}") is not None

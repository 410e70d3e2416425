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


@pytest.mark.parametrize("pattern", ORDINARY)
def test_the_untimed_path_finds_what_the_timed_matcher_finds(pattern):
    compiled = compile_pattern(pattern)
    for text in TEXTS:
        ours, timed = compiled.search(text), compiled.compiled.search(text, timeout=MATCH_TIMEOUT)
        assert (ours and (ours.span(), ours.groups())) == (
            timed and (timed.span(), timed.groups())
        ), (pattern, text)


@pytest.mark.parametrize(
    ("pattern", "untimed"),
    [
        (r"^item \d+$", True),  # one repeat: a short value needs no timer
        (r"(?i)error", True),
        (r"(ab)+c|d{2,5}", True),
        (r"(a|aa)+$", False),  # a repeated alternation: exponential
        (r"(a+)+$", False),  # a repeat of a repeat: exponential
        (r"(?<=\$)\d+", False),  # lookaround: not analysed, always timed
        (r"(a)\1", False),  # back-reference
        (r"(?>a+)b", False),  # atomic group
    ],
)
def test_only_patterns_with_a_small_worst_case_skip_the_timer(pattern, untimed):
    assert compile_pattern(pattern).untimed("item 42") is untimed


def test_long_texts_are_always_timed():
    pattern = compile_pattern(r".*error.*")
    assert pattern.untimed("x" * 10)
    assert not pattern.untimed("x" * 10_000)


def test_the_worst_case_of_an_untimed_search_is_quick():
    # \d*\d*\d*x backtracks polynomially on digits without an x: the longest text that still
    # skips the timer must search in well under the timer's bound (FAST_STEPS, ~10 ms).
    pattern = compile_pattern(r"\d*\d*\d*x")
    length = pattern.fast_below - 1
    assert length > 5 and pattern.untimed("1" * length)
    started = time.process_time()
    assert pattern.search("1" * length) is None
    assert time.process_time() - started < 0.25

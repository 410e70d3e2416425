"""Matching helpers: JSON extraction, deep equality, partial matches, tool names."""

from __future__ import annotations

import pytest

from agentcli.eval.checks.matching import (
    deep_equal,
    extract_json,
    lookup_path,
    match_partial,
    normalize_path,
    output_text,
    regex_problems,
    tool_name_matches,
)
from agentcli.eval.results.model import ToolCall
from agentcli.jsonsafe import json_type


def test_output_text_keeps_unicode_and_does_not_html_escape():
    assert output_text({"msg": "<b>中文 & 🎉</b>"}) == '{"msg": "<b>中文 & 🎉</b>"}'
    assert output_text("plain") == "plain"
    assert output_text(None) == ""
    assert output_text(1.5) == "1.5"
    assert output_text(b"bytes") == "bytes"


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}, True),
        (1, 1.0, True),
        (True, 1, False),
        (False, 0, False),
        ([1, {"x": [2, 3]}], [1.0, {"x": [2, 3.0]}], True),
        ([1, 2], [2, 1], False),
        ({"a": 1}, {"a": 1, "b": None}, False),
        ("1", 1, False),
        (None, None, True),
        (None, "", False),
        ("中文", "中文", True),
        ((1, 2), [1, 2], True),
    ],
)
def test_deep_equal(a, b, equal):
    assert deep_equal(a, b) is equal
    assert deep_equal(b, a) is equal


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('{"a": 1}', {"a": 1}),
        ("  [1, 2]  ", [1, 2]),
        ('Here you go:\n```json\n{"intent": "weather"}\n```\nDone.', {"intent": "weather"}),
        ('```\n{"untagged": true}\n```', {"untagged": True}),
        ('```python\nx = {"no": 1}\n```\nThe answer is {"yes": 2}', {"yes": 2}),
        ('Sure! The result is {"a": {"b": [1, 2]}} as requested.', {"a": {"b": [1, 2]}}),
        ('Note: {"text": "a } inside", "n": "[x"} ok', {"text": "a } inside", "n": "[x"}),
        ('He said [this] and then {"k": "v"}', {"k": "v"}),
        ('escaped {"q": "say \\"}\\" now"} end', {"q": 'say "}" now'}),
        ("42", 42),
        ('{"emoji": "🎉", "zh": "中文"}', {"emoji": "🎉", "zh": "中文"}),
    ],
)
def test_extract_json(text, value):
    assert extract_json(text) == value


@pytest.mark.parametrize("text", ["no json here", "", "{not json}", "[unclosed", "{'single': 1}"])
def test_extract_json_raises_when_there_is_none(text):
    with pytest.raises(ValueError, match="no JSON"):
        extract_json(text)


def test_extract_json_is_not_quadratic_on_hostile_text():
    text = "[" * 50_000 + ' and finally {"a": 1}'
    with pytest.raises(ValueError):
        extract_json(text)  # gives up after a bounded number of candidates


@pytest.mark.parametrize(
    ("value", "name"),
    [
        (None, "null"),
        (True, "boolean"),
        (3, "number"),
        (2.5, "number"),
        ("s", "string"),
        ([], "array"),
        ({}, "object"),
    ],
)
def test_json_type(value, name):
    assert json_type(value) == name


@pytest.mark.parametrize(
    ("actual", "expected", "ok"),
    [
        ({"a": 1, "b": {"c": 2, "d": 3}}, {"b": {"c": 2}}, True),
        ({"a": 1}, {"a": 2}, False),
        ({"a": 1}, {"missing": 1}, False),
        ('{"id": "E1", "ok": true}', {"ok": True}, True),
        ({"message": "Setup is COMPLETE"}, {"message": "regex:(?i)setup.*complete"}, True),
        ({"message": "nothing"}, {"message": "regex:complete"}, False),
        (5, "5", True),
        (25.0, "25", True),  # a number by its value: a model may write 25 or 25.0
        (25, "25.0", True),
        (25.5, "25", False),
        (True, "1", False),  # a boolean is not a number
        (25.0, "regex:^25$", False),  # a pattern sees the text form, "25.0"
        ({"amount": 25.0}, {"amount": "25"}, True),
        ("5", "5", True),
        (None, "", False),
        (True, True, True),
        (1, True, False),
        ([{"a": 1, "x": 0}, 2], [{"a": 1}, 2], True),
        ([1, 2], [1], False),
    ],
)
def test_match_partial(actual, expected, ok):
    assert match_partial(actual, expected) is ok


def test_regex_problems_finds_nested_patterns():
    assert list(regex_problems({"a": ["regex:ok", {"b": "regex:("}]})) == [
        'invalid regex "(": missing ), unterminated subpattern at position 0'
    ]
    assert list(regex_problems({"a": "(not a regex: plain string"})) == []


@pytest.mark.parametrize(
    ("path", "normal"),
    [("intent", "$.intent"), ("$.a.b", "$.a.b"), ("[0].x", "$[0].x"), ("$", "$")],
)
def test_normalize_path(path, normal):
    assert normalize_path(path) == normal


def test_lookup_path_on_objects_and_text():
    assert lookup_path({"a": {"b": [{"c": 5}]}}, "a.b[0].c") == (True, 5)
    assert lookup_path('{"items": [{"n": 1}, {"n": 2}]}', "$.items[*].n") == (True, [1, 2])
    assert lookup_path({"a": 1}, "b") == (False, "no match in output")
    assert lookup_path("prose only", "a") == (False, "output is not JSON")


@pytest.mark.parametrize(
    ("record", "name", "ok"),
    [
        (ToolCall(tool="search"), "search", True),
        (ToolCall(tool="research"), "search", False),
        (ToolCall(tool="web_search"), "search", False),
        (ToolCall(server="web", tool="search"), "web__search", True),
        (ToolCall(server="agents.expense.tools", tool="setup"), "setup", True),
        (
            ToolCall(server="agents.expense.tools", tool="setup"),
            "agents_expense_tools__setup",
            True,
        ),
        (ToolCall(tool="expense__submit"), "submit", True),
        (ToolCall(tool="expense__resubmit"), "submit", False),
        (ToolCall(server="web", tool="search"), "web", False),
        (ToolCall(tool="search"), "", False),
    ],
)
def test_tool_name_matches_never_by_loose_substring(record, name, ok):
    assert tool_name_matches(record, name) is ok

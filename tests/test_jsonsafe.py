"""agentcli.jsonsafe: whatever user code returns becomes plain JSON that every writer takes."""

from __future__ import annotations

import json
from collections import OrderedDict

from agentcli.jsonsafe import MAX_DEPTH, json_safe
from agentcli.runtime.tools import result_text


def test_plain_json_comes_back_as_it_is():
    value = {"a": [1, 2.5, "x", None, True, {"b": []}]}
    assert json_safe(value) is value


def test_values_json_cannot_write_become_notes():
    loop: list = []
    loop.append(loop)
    itself: dict = {}
    itself["d"] = itself
    assert json_safe(loop) == ["<circular reference>"]
    assert json_safe({"data": itself}) == {"data": {"d": "<circular reference>"}}
    assert json_safe(10**5000) == "<an integer of about 5,001 digits>"
    assert json_safe(10**100) == 10**100  # long, but printable
    deep: list = []
    for _ in range(MAX_DEPTH + 50):
        deep = [deep]
    text = json.dumps(json_safe(deep))
    assert text.count("[") == MAX_DEPTH and f"nested deeper than {MAX_DEPTH} levels" in text


def test_other_python_values_become_json_types():
    class Boom:
        def __str__(self) -> str:
            raise RuntimeError("no")

    shared = [1]
    value = {1: (1, 2), None: b"\xff", 2.5: {3}, "o": OrderedDict(a=1), "s": [shared, shared]}
    assert json_safe(value) == {
        "1": [1, 2],
        "null": "\ufffd",
        "2.5": [3],
        "o": {"a": 1},
        "s": [[1], [1]],  # the same list twice is no cycle
    }
    assert json_safe([Boom()]) == ["<Boom that cannot be shown: RuntimeError>"]


def test_a_tool_result_of_any_shape_reaches_the_model_as_text():
    loop: list = []
    loop.append(loop)
    assert result_text(loop) == '["<circular reference>"]'
    assert result_text(10**5000) == '"<an integer of about 5,001 digits>"'

"""agentcli.jsonsafe: whatever user code returns becomes plain JSON that every writer takes."""

from __future__ import annotations

import datetime
import json
from collections import OrderedDict

import pytest

from agentcli.jsonsafe import (
    JSON_TYPES,
    MAX_DEPTH,
    expected_words,
    finite_json,
    json_safe,
    json_type,
    json_type_words,
    type_words,
)
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


# --- type names and words -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "name", "words"),
    [
        (None, "null", "null"),
        (False, "boolean", "a boolean"),
        (3, "number", "a number"),
        (2.5, "number", "a number"),
        ("s", "string", "a string"),
        ([], "array", "an array"),
        ((1, 2), "array", "an array"),
        ({}, "object", "an object"),
        (datetime.date(2024, 1, 1), "date", "a date"),
    ],
)
def test_json_type_by_name_and_in_words(value, name, words):
    assert json_type(value) == name
    assert json_type_words(value) == words


def test_the_word_for_an_array_is_the_callers():
    assert json_type_words([1], array="a list") == "a list"
    assert type_words("array", array="a list") == "a list"
    assert type_words("integer") == "an integer"


def test_expected_words_join_the_allowed_types():
    assert expected_words("boolean") == "true or false"
    assert expected_words(["string", "null"]) == "a string or null"
    assert expected_words(["object", "array"], array="a list") == "an object or a list"


def test_json_types_are_every_name_json_type_returns():
    assert JSON_TYPES == ("string", "number", "boolean", "array", "object", "null")
    assert {json_type(v) for v in ("", 1, True, [], {}, None)} == set(JSON_TYPES)


def test_finite_json_writes_nan_and_the_infinities_as_null():
    value = {"a": [1.5, float("nan"), {"b": float("-inf")}], "c": (float("inf"),)}
    assert finite_json(value) == '{"a":[1.5,null,{"b":null}],"c":[null]}'
    assert finite_json({"x": 1}, spaced=True) == '{"x": 1}'
    plain = {"n": 2.5}
    assert json.loads(finite_json(plain)) == plain


def test_finite_json_still_refuses_a_circular_value():
    loop: list = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular"):
        finite_json(loop)


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".html"])
def test_a_result_holding_nan_is_written_as_strict_json(tmp_path, suffix):
    # a tool or a hook may hand back float("nan"): the results file stays JSON that jq and
    # browsers read (Python's json writes a bare NaN unless told not to)
    from agentcli.eval.reports import read_results, writer_for
    from agentcli.eval.results.model import CaseResult, RunHeader, summarize

    def strict(constant: str) -> None:
        raise AssertionError(f"{constant} written")

    result = CaseResult(id="a", status="passed", input="hi", output={"score": float("nan")})
    path = tmp_path / f"report{suffix}"
    writer = writer_for(path)
    writer.open(RunHeader())
    writer.add(result)
    writer.close(summarize([result], agent_id="t", connector="echo", duration_ms=1), None)
    if suffix == ".html":
        assert "NaN" not in path.read_text(encoding="utf-8")
        return
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines() if suffix == ".jsonl" else [text]
    for line in lines:
        json.loads(line, parse_constant=strict)
    assert read_results(path).results[0].output == {"score": None}


def test_json_events_write_nan_as_null():
    import io

    from agentcli.cli.views.json_events import JsonEvents

    out = io.StringIO()
    JsonEvents(out).emit({"type": "log", "value": float("nan")})
    assert out.getvalue() == '{"type": "log", "value": null}\n'

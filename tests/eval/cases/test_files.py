"""The case schema: the fast conformance check must agree with jsonschema exactly."""

from __future__ import annotations

import datetime
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from agentcli.eval.cases.files import CASE_SCHEMA, SCHEMA_PATH, read_items, schema_problems

SCHEMA = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
VALIDATOR = Draft202012Validator(SCHEMA)

# Every property name the schema knows, plus near misses, so generated objects hit both paths.
KEYS = [
    "id", "name", "description", "input", "assert", "expected", "user", "team", "metadata",
    "options", "skip", "timeout", "before", "after", "simulator", "checkpoints", "max_turns",
    "type", "value", "path", "script", "use", "message", "negate", "connector", "mode",
    "required", "history", "asserts", "vaule",
]  # fmt: skip

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=30),
    st.floats(min_value=-2, max_value=40, allow_nan=False),
    st.sampled_from(["", "x", "30s", "contains", "T1"]),
)
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.sampled_from(KEYS), children, max_size=5),
    ),
    max_leaves=25,
)
case_like = st.dictionaries(st.sampled_from(KEYS), json_values, max_size=8)

# Mostly valid field values with occasional mistakes, so both answers are common.
assertion = st.one_of(
    st.sampled_from(["is_json", "", 3]),
    st.fixed_dictionaries(
        {"type": st.sampled_from(["contains", "contains", ""])},
        optional={
            "value": json_values,
            "path": st.sampled_from(["a", ""]),
            "negate": st.sampled_from([True, "x"]),
            "options": st.sampled_from([{}, []]),
            "vaule": st.just(1),
        },
    ),
)
mostly_valid_case = st.fixed_dictionaries(
    {"id": st.sampled_from(["T1", "T1", "T1", "", 5])},
    optional={
        "input": st.sampled_from(["hi", {"content": "x"}, [{"content": "x"}], 5, ["x"]]),
        "assert": st.one_of(assertion, st.lists(assertion, max_size=3)),
        "timeout": st.sampled_from(["30s", 10, 2.5, 0, -1, True, [1]]),
        "max_turns": st.sampled_from([1, 20, 2.0, 0, 2.5, True, "3"]),
        "skip": st.sampled_from([True, False, "yes"]),
        "metadata": st.sampled_from([{"a": 1}, [], None]),
        "options": st.fixed_dictionaries(
            {},
            optional={
                "connector": st.sampled_from(["c", "", 1]),
                "skip": st.dictionaries(
                    st.sampled_from(["history", "trace"]), st.sampled_from([True, "x"])
                ),
                "conector": st.just("x"),
            },
        ),
        "simulator": st.fixed_dictionaries(
            {},
            optional={
                "use": st.sampled_from(["sim", ""]),
                "options": st.sampled_from([{"metadata": {}}, {"connector": ""}, {"x": 1}]),
            },
        ),
        "checkpoints": st.lists(
            st.fixed_dictionaries(
                {"id": st.sampled_from(["a", "a", ""])},
                optional={
                    "assert": assertion,
                    "after": st.lists(st.sampled_from(["a", "", 1]), max_size=2),
                    "required": st.sampled_from([True, "no"]),
                },
            ),
            max_size=3,
        ),
        "asserts": st.just([]),
    },
)


def test_schema_is_valid_draft_2020_12():
    Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"


@settings(max_examples=400, deadline=None)
@given(case_like)
def test_fast_check_agrees_with_jsonschema(obj):
    assert CASE_SCHEMA.conforms(obj) == VALIDATOR.is_valid(obj)


@settings(max_examples=400, deadline=None)
@given(mostly_valid_case)
def test_fast_check_agrees_on_case_shaped_objects(obj):
    assert CASE_SCHEMA.conforms(obj) == VALIDATOR.is_valid(obj)


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_fast_check_agrees_on_any_json(obj):
    assert CASE_SCHEMA.conforms(obj) == VALIDATOR.is_valid(obj)


@pytest.mark.parametrize(
    "obj",
    [
        {"id": datetime.date(2024, 1, 1)},
        {"id": "a", 1: "x"},
        {"id": "a", "input": "x", "metadata": {1: datetime.datetime(2024, 1, 1)}},
        {"id": "a", "timeout": float("inf")},
        {"id": "a", "max_turns": 10**30},
    ],
    ids=["date-id", "int-key", "date-in-metadata", "inf", "huge-int"],
)
def test_fast_check_agrees_on_what_only_yaml_makes(obj):
    assert CASE_SCHEMA.conforms(obj) == VALIDATOR.is_valid(obj)


def test_schema_problems_for_valid_and_invalid():
    assert schema_problems({"id": "a", "input": "x", "assert": "is_json"}) == []
    assert schema_problems({"id": "", "input": "x", "checkpoints": []}) == [
        "id: must not be empty",
        "checkpoints: must not be empty",
    ]
    assert schema_problems({"id": "a", "options": {"skip": {"history": "yes"}}}) == [
        "options.skip.history: must be true or false, got a string"
    ]
    assert schema_problems({"id": "a", "timeout": 0}) == ["timeout: must be greater than 0"]


# --- numbers JSON does not allow ------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "text", "problem"),
    [
        (
            "c.jsonl",
            '{"id": "a", "input": "hi"}\n{"id": "b", "input": "hi", "assert": [{"type": "cost", "value": NaN}]}\n',
            "c.jsonl:2: assert[0].value: NaN is not a number JSON allows",
        ),
        (
            "c.jsonl",
            '{"id": "b", "input": "hi", "metadata": {"n": 1e400}}\n',
            "c.jsonl:1: metadata.n: 1e400 is too large for a number",
        ),
        (
            "c.json",
            '[{"id": "a", "input": "hi"},\n {"id": "b", "input": "hi", "timeout": -Infinity}]',
            "c.json:2: timeout: -Infinity is not a number JSON allows",
        ),
        (
            "c.json",
            '{"id": "b",\n "input": "hi", "timeout": NaN}',
            "c.json:1: timeout: NaN is not a number JSON allows",
        ),
        (
            "c.yaml",
            "- id: a\n  input: hi\n- id: b\n  input: hi\n  metadata:\n    w: [1, .inf]\n",
            "c.yaml:6: metadata.w[1]: .inf is not a number JSON allows",
        ),
        ("c.yaml", "id: b\ninput: hi\ntimeout: .NaN\n", "c.yaml:3: timeout: .nan is not a number"),
    ],
)
def test_a_non_finite_number_is_a_problem_at_its_line_and_field(tmp_path, name, text, problem):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    problems: list[str] = []
    items = list(read_items(path, name, problems))
    assert [item["id"] for _, item in items] == (["a"] if '"a"' in text or "id: a" in text else [])
    [found] = problems
    assert found.startswith(problem), found
    assert found.endswith("for the text")


def test_finite_floats_and_the_words_in_text_are_read_as_before(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text('{"id": "NaN", "input": "Infinity", "metadata": {"x": 0.5, "y": 1e308}}\n')
    problems: list[str] = []
    assert [item for _, item in read_items(path, "c.jsonl", problems)] == [
        {"id": "NaN", "input": "Infinity", "metadata": {"x": 0.5, "y": 1e308}}
    ]
    assert problems == []

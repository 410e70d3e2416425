"""Generated cases: query typing, the generator request, answers in every shape, and invalid
generator output (fixture generator ``sim.writer`` and ``barista/src/gen.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.assistant.session import AssistantRegistry
from agentcli.errors import CaseFileError, ConfigError, UnknownAssistantError
from agentcli.eval.cases.generate import (
    cases_from_answer,
    generate_cases,
    parse_generator_ref,
    typed_value,
)

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "fixtures" / "assistants"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("10", 10),
        ("-3", -3),
        ("0.5", 0.5),
        ("1e3", 1000.0),
        ("true", True),
        ("FALSE", False),
        ("edge-cases", "edge-cases"),
        ("", ""),
        ("1.2.3", "1.2.3"),
        ("nan", "nan"),
    ],
)
def test_query_values_are_typed(text, value):
    typed = typed_value(text)
    assert typed == value and type(typed) is type(value)


def test_parse_generator_ref():
    ref = parse_generator_ref(
        "agents:tests.generator-agent?count=10&focus=edge-cases&temp=0.7&strict=true&n=2&n=3&who=a%20b"
    )
    assert (ref.kind, ref.name, ref.count, ref.focus) == (
        "agents",
        "tests.generator-agent",
        10,
        "edge-cases",
    )
    assert ref.extra == {"temp": 0.7, "strict": True, "n": 2, "who": "a b"}
    assert ref.label == "agents:tests.generator-agent"
    plain = parse_generator_ref("scripts:tests.gen.Generate")
    assert (plain.kind, plain.name, plain.count, plain.focus, plain.extra) == (
        "scripts",
        "tests.gen.Generate",
        5,
        None,
        {},
    )


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ("agents:x?count=0", "count must be a positive integer, got 0"),
        ("agents:x?count=many", "count must be a positive integer, got 'many'"),
        ("agents:x?count=2.5", "count must be a positive integer, got 2.5"),
        ("agents:?count=2", "invalid generator input"),
        ("robots:x", "invalid generator input"),
    ],
)
def test_bad_generator_refs(raw, problem):
    with pytest.raises(ConfigError, match=problem.replace("?", r"\?")):
        parse_generator_ref(raw)


async def generate(raw: str, warnings: list[str] | None = None):
    registry = AssistantRegistry(FIXTURES, cwd=ROOT)
    try:
        return await generate_cases(
            raw,
            assistant=registry.get("barista"),
            registry=registry,
            project_root=ROOT,
            timeout=10,
            warn=(warnings if warnings is not None else []).append,
        )
    finally:
        await registry.aclose()


async def test_the_generator_gets_the_target_and_typed_query():
    (case,) = await generate(
        "agents:sim.writer?count=3&focus=happy&shape=echo&deep=true&ratio=0.25"
    )
    request = case.metadata["request"]
    assert list(request) == ["target_agent", "count", "focus", "extra"]
    assert request["count"] == 3 and request["focus"] == "happy"
    assert request["extra"] == {"shape": "echo", "deep": True, "ratio": 0.25}
    target = request["target_agent"]
    assert target["id"] == "barista"
    assert target["description"].startswith("Fixture coffee-bar assistant")
    (tool,) = target["tools"]
    assert (tool["name"], tool["server"]) == ("place_order", "barista")
    assert "input_schema" in tool


@pytest.mark.parametrize("shape", ["array", "object", "fenced"])
async def test_answers_as_an_array_an_object_or_fenced_in_prose(shape):
    cases = await generate(f"agents:sim.writer?count=2&focus=smoke&shape={shape}")
    assert [c.id for c in cases] == ["barista-smoke-1", "barista-smoke-2"]
    assert cases[0].assert_[0].type == "regex"
    assert cases[0].source is not None and str(cases[0].source) == "agents:sim.writer:1"


async def test_every_case_field_survives_including_dynamic_ones():
    (case,) = await generate("agents:sim.writer?shape=dynamic")
    assert case.is_dynamic and case.max_turns == 4 and case.timeout == 30
    assert case.simulator.use == "sim.user"
    assert case.simulator.options.metadata == {"goal": "a latte", "default": "a medium latte"}
    assert [c.id for c in case.checkpoints] == ["greeting", "confirm"]
    assert case.checkpoints[1].after == ["greeting"] and not case.checkpoints[1].required
    round_trip = case.to_dict()
    assert round_trip["checkpoints"][1]["required"] is False
    assert round_trip["simulator"]["use"] == "sim.user"


async def test_unknown_top_level_fields_are_dropped_with_a_warning():
    warnings: list[str] = []
    cases = await generate("agents:sim.writer?count=2&shape=extras", warnings)
    assert len(cases) == 2
    assert warnings == [
        "agents:sim.writer:1: ignored unknown field(s) rationale",
        "agents:sim.writer:2: ignored unknown field(s) rationale",
    ]


async def test_invalid_generator_output_is_reported_like_a_case_file():
    with pytest.raises(CaseFileError) as error:
        await generate("agents:sim.writer?count=2&shape=invalid")
    assert error.value.problems == [
        'agents:sim.writer:1: assert[0]: unknown assertion type "contians" (did you mean "contains"?)'
    ]
    with pytest.raises(ConfigError, match="the generator answered no JSON: 'I would rather"):
        await generate("agents:sim.writer?shape=garbage")
    with pytest.raises(ConfigError, match=r"generator agent error: .*the generator is down"):
        await generate("agents:sim.writer?shape=error")
    with pytest.raises(UnknownAssistantError, match=r"unknown assistant 'sim\.nobody'"):
        await generate("agents:sim.nobody")


async def test_scripts_generators_are_functions_in_the_target_src():
    cases = await generate("scripts:gen.Generate?count=2&focus=x")
    assert [c.id for c in cases] == ["script-1", "script-2"]
    assert cases[0].metadata == {"target": "barista", "focus": "x"}
    with pytest.raises(ConfigError, match="generator script raised KeyError"):
        await generate("scripts:gen.Broken")


def test_cases_from_answer_shapes_and_problems():
    one = {"id": "a", "input": "hi"}
    assert [
        c.id for c in cases_from_answer({"test_cases": [one]}, source="g", project_root=ROOT)
    ] == ["a"]
    assert [c.id for c in cases_from_answer(one, source="g", project_root=ROOT)] == ["a"]
    with pytest.raises(CaseFileError) as error:
        cases_from_answer([one, "two", one, {"input": "x"}], source="g", project_root=ROOT)
    assert error.value.problems == [
        "g:2: a case must be an object, got a string",
        'g:3: duplicate id "a" (first generated as case 1)',
        'g:4: missing required field "id"',
    ]
    with pytest.raises(ConfigError, match="answered no cases"):
        cases_from_answer("[]", source="g", project_root=ROOT)
    with pytest.raises(ConfigError, match="answered a number, not a list of cases"):
        cases_from_answer("42", source="g", project_root=ROOT)

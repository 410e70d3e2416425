"""Dynamic (simulator) cases against the barista fixture, played by the fixture simulator
(``sim.user``, steered by the case's simulator metadata) and judged by ``sim.judge``."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from agentcli.assistant.session import AssistantRegistry
from agentcli.cli.views.console import ConsoleView
from agentcli.cli.views.json_events import JsonEvents
from agentcli.errors import ConfigError
from agentcli.eval.cases.load import CaseInfo
from agentcli.eval.cases.parse import parse_case
from agentcli.eval.results.model import CaseResult
from agentcli.eval.run.dynamic import check_simulators, parse_simulator_reply, simulator_request
from agentcli.eval.run.runner import EvalConfig, EvalRunner, RunEvent

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "fixtures" / "assistants"

GREETING = {"id": "greeting", "assert": {"type": "regex", "value": "(?i)hello"}}
ASK_SIZE = {"id": "ask_size", "after": ["greeting"], "assert": {"type": "regex", "value": "size"}}
CONFIRM = {"id": "confirm", "after": ["ask_size"], "assert": {"type": "regex", "value": "confirm"}}
ORDER_RULES = [["what can i get", "A latte please"], ["size", "Medium"], ["correct", "yes"]]


def dynamic(case_id: str = "order", *, checkpoints=None, max_turns: int = 6, **fields: Any):
    """A dynamic case object; simulator metadata keys go in ``sim``."""
    sim = fields.pop("sim", {})
    case = {
        "id": case_id,
        "input": "I want to order coffee",
        "simulator": {"use": "sim.user", "options": {"metadata": {"rules": ORDER_RULES, **sim}}},
        "checkpoints": checkpoints or [GREETING, ASK_SIZE, CONFIRM],
        "max_turns": max_turns,
    }
    case.update(fields)
    return {k: v for k, v in case.items() if v is not None}


def parse(obj: dict[str, Any]):
    return parse_case(
        obj, source_file=FIXTURES / "barista/tests/x.jsonl", line=1, project_root=ROOT
    )


async def play(*objects: dict[str, Any], **config: Any) -> list[CaseResult]:
    registry = AssistantRegistry(FIXTURES, cwd=ROOT)
    results: list[CaseResult] = []
    runner = EvalRunner(
        EvalConfig(assistant=registry.get("barista"), registry=registry, **config),
        on_result=results.append,
    )
    try:
        await runner.run([parse(o) for o in objects])
    finally:
        await registry.aclose()
    return results


def points(result: CaseResult) -> dict[str, dict[str, Any]]:
    """The checkpoint states as the results file has them, by id."""
    return {p["id"]: p for p in result.to_dict().get("checkpoints") or []}


def turns(result: CaseResult) -> list[dict[str, Any]]:
    """The turns as the results file has them."""
    return result.to_dict().get("turns") or []


def checkpoints(result: CaseResult) -> list[dict[str, Any]]:
    """The checkpoint states as the results file has them."""
    return result.to_dict().get("checkpoints") or []


# --- the simulator's answer ---------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        '{"message": "Medium", "goal_achieved": false, "reasoning": "size"}',
        'Sure:\n```json\n{"message": "Medium", "goal_achieved": false, "reasoning": "size"}\n```',
        'As the user I say {"message": "Medium", "reasoning": "size"} and wait.',
        {"message": "Medium", "goal_achieved": "false", "reasoning": "size"},
    ],
)
def test_simulator_json_is_found_fenced_bare_or_in_prose(answer):
    move = parse_simulator_reply(answer)
    assert (move.message, move.goal_achieved) == ("Medium", False)
    assert move.reasoning == "size"


def test_simulator_plain_text_is_the_message_and_goal_flags_parse():
    assert parse_simulator_reply("  A latte, please  ").message == "A latte, please"
    # prose that mentions unrelated JSON is still just what the user says
    said = 'My order is {"drink": "latte"} thanks'
    assert parse_simulator_reply(said).message == said
    done = parse_simulator_reply('{"goal_achieved": "true"}')
    assert done.goal_achieved and done.message == ""


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ("   ", "empty message"),
        ('```json\n{"thought": "hmm"}\n```', 'JSON without a "message"'),
        ('{"message": "", "goal_achieved": false}', 'empty "message"'),
        ('{"message": ["a"], "goal_achieved": false}', "must be text"),
        ("[1, 2]", 'JSON without a "message"'),
    ],
)
def test_simulator_garbage_is_an_error(answer, problem):
    with pytest.raises(ValueError, match=problem.replace("(", r"\(")):
        parse_simulator_reply(answer)


def test_simulator_request_shape():
    case = parse(
        dynamic(
            sim={"persona": "Regular", "goal": "latte", "mood": "rushed"},
            checkpoints=[GREETING, {**ASK_SIZE, "required": False}],
        )
    )
    request = simulator_request(
        case, [{"role": "user", "content": "hi"}], 2, ["greeting"], ["ask_size"]
    )
    assert list(request) == [
        "persona",
        "goal",
        "conversation",
        "turn_number",
        "max_turns",
        "checkpoints_reached",
        "checkpoints_pending",
        "extra",
    ]
    assert request["persona"] == "Regular" and request["goal"] == "latte"
    assert request["extra"] == {"rules": ORDER_RULES, "mood": "rushed"}
    assert (request["turn_number"], request["max_turns"]) == (2, 6)
    odd = parse(dynamic(sim={"persona": {"age": 30}}))
    assert simulator_request(odd, [], 1, [], [])["persona"] is None
    assert simulator_request(odd, [], 1, [], [])["extra"]["persona"] == {"age": 30}


# --- the loop -----------------------------------------------------------------------------


async def test_a_coffee_order_passes_with_turns_and_checkpoints_in_the_report():
    (result,) = await play(dynamic())
    assert result.status == "passed", result.error
    assert [t["turn"] for t in turns(result)] == [1, 2, 3]
    first = turns(result)[0]
    assert list(first) == [
        "turn",
        "input",
        "output",
        "response",
        "checkpoints_reached",
        "duration_ms",
    ]
    assert first["input"] == "I want to order coffee"
    assert first["response"] == {"content": first["output"], "tool_calls": [], "next": None}
    assert [t["checkpoints_reached"] for t in turns(result)] == [
        ["greeting"],
        ["ask_size"],
        ["confirm"],
    ]
    assert turns(result)[1]["input"] == "A latte please"
    assert [p["id"] for p in checkpoints(result)] == ["greeting", "ask_size", "confirm"]
    assert list(checkpoints(result)[0]) == [
        "id",
        "reached",
        "reached_at_turn",
        "required",
        "passed",
        "message",
    ]
    assert [p["reached_at_turn"] for p in checkpoints(result)] == [1, 2, 3]
    assert result.output == turns(result)[-1]["output"]
    assert result.trace is not None and result.trace.usage.total_tokens > 0
    assert CaseResult.from_dict(result.to_dict()).turns == result.turns


async def test_a_dependency_reached_in_the_same_turn_counts_in_declaration_order():
    both = [
        GREETING,
        {
            "id": "welcome",
            "after": ["greeting"],
            "assert": {"type": "contains", "value": "Welcome"},
        },
    ]
    (result,) = await play(dynamic(checkpoints=both))
    assert result.status == "passed"
    assert turns(result)[0]["checkpoints_reached"] == ["greeting", "welcome"]
    assert len(result.turns) == 1
    # declared before its dependency, it can only be checked on a later turn
    reversed_order = [
        both[1],
        GREETING,
        {"id": "later", "after": ["welcome"], "assert": {"type": "regex", "value": "."}},
    ]
    (late,) = await play(dynamic(checkpoints=reversed_order))
    reached = points(late)
    assert reached["greeting"]["reached_at_turn"] == 1
    assert reached["welcome"]["reached"] is False  # "Welcome" is said in turn 1 only
    assert late.status == "failed"


async def test_optional_checkpoints_are_reported_but_never_waited_for():
    optional = {
        "id": "loyalty",
        "required": False,
        "assert": {"type": "contains", "value": "loyalty"},
    }
    (result,) = await play(dynamic(checkpoints=[GREETING, optional, ASK_SIZE]))
    assert result.status == "passed"
    assert points(result)["loyalty"] == {
        "id": "loyalty",
        "reached": False,
        "reached_at_turn": None,
        "required": False,
        "passed": False,
        "message": 'expected output to contain "loyalty"',
    }
    assert len(result.turns) == 2


async def test_the_goal_achieved_before_the_required_checkpoints_fails():
    (result,) = await play(dynamic(sim={"give_up_at": 2}))
    assert result.status == "failed"
    assert result.error == (
        "the simulator declared the goal achieved at turn 2 before the required checkpoints "
        "were reached: ask_size, confirm"
    )
    assert len(result.turns) == 1


async def test_max_turns_exceeded_fails_naming_the_missing_checkpoints():
    never = {
        "id": "loyalty",
        "after": ["greeting"],
        "assert": {"type": "contains", "value": "loyalty"},
    }
    (result,) = await play(
        dynamic(checkpoints=[GREETING, never], max_turns=3, sim={"default": "hmm"})
    )
    assert result.status == "failed"
    assert result.error == "max turns (3) reached; required checkpoints not reached: loyalty"
    assert len(result.turns) == 3


@pytest.mark.parametrize("style", ["fenced", "prose", "text"])
async def test_the_simulator_may_answer_fenced_prose_or_plain_text(style):
    (result,) = await play(dynamic(sim={"style": style}))
    assert result.status == "passed", result.error
    assert turns(result)[1]["input"] == "A latte please"


@pytest.mark.parametrize(
    ("style", "message"),
    [
        ("garbage", 'simulator error at turn 2: simulator answered JSON without a "message"'),
        ("empty", "simulator error at turn 2: simulator returned an empty message"),
        (
            "error",
            "simulator error at turn 2: python model python:model:reply raised RuntimeError: the simulator is down",
        ),
    ],
)
async def test_simulator_garbage_and_errors_end_the_case_as_error(style, message):
    (result,) = await play(dynamic(sim={"style": style}))
    assert result.status == "error"
    assert result.error.startswith(message), result.error
    assert len(result.turns) == 1


async def test_an_agent_error_mid_conversation_is_an_error_with_the_turn_recorded():
    (result,) = await play(dynamic(sim={"replies": {"2": "please explode"}}))
    assert result.status == "error"
    assert result.error.startswith("agent error at turn 2:")
    assert "the espresso machine exploded" in result.error
    assert turns(result)[1]["input"] == "please explode"
    assert "exploded" in turns(result)[1]["error"]
    assert turns(result)[0]["checkpoints_reached"] == ["greeting"]


async def test_the_timeout_covers_the_conversation_and_cancels_the_turn_in_flight():
    clock = time.perf_counter()
    (result,) = await play(dynamic(sim={"replies": {"2": "nap 30"}}, timeout="0.5s"))
    assert time.perf_counter() - clock < 5
    assert result.status == "timeout"
    assert result.error == "timed out after 0.5s during turn 2"
    assert turns(result)[1]["error"] == "timed out"
    assert turns(result)[1]["output"] is None
    (slow_sim,) = await play(dynamic(sim={"style": "nap", "nap": 30}), timeout=0.4)
    assert slow_sim.status == "timeout" and len(slow_sim.turns) == 1


async def test_judge_checkpoints_record_the_validator_verdict():
    judged = {
        "id": "judged",
        "assert": {"type": "agent", "use": "agents:sim.judge", "value": "mentions 'latte'"},
    }
    (result,) = await play(dynamic(checkpoints=[GREETING, judged]))
    assert result.status == "passed"
    state = points(result)["judged"]
    assert state["reached_at_turn"] == 2
    validation = state["agent_validation"]
    assert list(validation) == ["passed", "reason", "criteria", "input", "response"]
    assert validation["passed"] is True
    assert validation["reason"] == "found latte"
    assert validation["criteria"] == "mentions 'latte'"
    assert "latte" in validation["input"]
    assert validation["response"]["score"] == 1


async def test_a_failing_or_broken_judge_leaves_the_checkpoint_unreached():
    failing = {
        "id": "never",
        "assert": {"type": "agent", "use": "agents:sim.judge", "value": "'loyalty'"},
    }
    broken = {
        "id": "broken",
        "required": False,
        "assert": {"type": "agent", "use": "agents:sim.judge", "value": "explode"},
    }
    (result,) = await play(dynamic(checkpoints=[failing, broken], max_turns=2))
    assert result.status == "failed"
    never, down = points(result)["never"], points(result)["broken"]
    assert never["agent_validation"]["reason"] == "missing loyalty"
    assert never["message"] == "missing loyalty"
    assert "the validator is down" in down["message"]
    assert down["agent_validation"]["response"] is None


async def test_tool_checkpoints_see_only_that_turns_tool_calls():
    ordered = {
        "id": "ordered",
        "after": ["confirm"],
        "assert": [
            {
                "type": "tool_called",
                "value": {"name": "place_order", "arguments": {"size": "medium"}},
            },
            {"type": "tool_result", "value": {"tool": "place_order", "result": {"id": "A-1"}}},
            {"type": "contains", "value": "Order A-1"},  # a tool result's message counts as text
        ],
    }
    again = {
        "id": "again",
        "after": ["ordered"],
        "assert": [
            {"type": "regex", "value": "confirm"},
            {"type": "tool_called", "value": "place_order"},
        ],
    }
    case = dynamic(
        checkpoints=[GREETING, ASK_SIZE, CONFIRM, ordered, again],
        sim={"replies": {"5": "one more thing"}},
        max_turns=5,
    )
    (result,) = await play(case)
    reached = points(result)
    assert reached["ordered"]["reached_at_turn"] == 4
    assert turns(result)[3]["response"]["tool_calls"] == [
        {
            "tool": "place_order",
            "arguments": {"drink": "latte", "size": "medium"},
            "result": {
                "id": "A-1",
                "drink": "latte",
                "size": "medium",
                "message": "Order A-1: medium latte",
            },
            "error": None,
        }
    ]
    assert reached["again"]["reached"] is False
    assert reached["again"]["message"] == "expected a tool call, but no tools were called"
    assert result.status == "failed"
    assert [c.tool for c in result.trace.tool_calls] == ["place_order"]


async def test_the_first_message_may_come_from_the_simulator():
    (result,) = await play(
        dynamic(
            input=None,
            sim={"replies": {"1": "hello, a mocha please"}},
            checkpoints=[ASK_SIZE | {"after": []}],
        )
    )
    assert result.status == "passed"
    assert turns(result)[0]["input"] == "hello, a mocha please"
    assert "mocha" in turns(result)[0]["output"]


async def test_the_simulator_sees_the_conversation_and_checkpoint_lists_in_order():
    later = {
        "id": "later",
        "after": ["ask_size"],
        "required": False,
        "assert": {"type": "regex", "value": "x^"},
    }
    case = dynamic(
        checkpoints=[GREETING, ASK_SIZE, later],
        sim={"style": "probe", "persona": "P", "goal": "G"},
        max_turns=2,
    )
    (result,) = await play(case)
    request = json.loads(turns(result)[1]["input"])
    assert request["persona"] == "P" and request["goal"] == "G"
    assert request["turn_number"] == 2 and request["max_turns"] == 2
    assert request["checkpoints_reached"] == ["greeting"]
    assert request["checkpoints_pending"] == ["ask_size", "later"]
    assert request["extra"]["style"] == "probe"
    assert request["conversation_length"] == 2  # the user's input and the agent's answer


async def test_the_default_simulator_comes_from_the_config():
    case = dynamic()
    del case["simulator"]["use"]
    (result,) = await play(case, simulator="sim.user")
    assert result.status == "passed"
    # Neither the case nor the config names one: the shipped builtin.simulator plays the
    # user; without a goal it asks for help, which this barista does not understand.
    (shipped,) = await play(case)
    assert turns(shipped)[1]["input"] == "I'd like to get some help."


def test_check_simulators_before_anything_runs():
    registry = AssistantRegistry(FIXTURES, cwd=ROOT)
    unnamed = dynamic("a")
    del unnamed["simulator"]["use"]
    check_simulators([CaseInfo.of(parse(dynamic()))], None, registry)
    check_simulators([CaseInfo.of(parse(unnamed))], None, registry)  # builtin.simulator
    check_simulators([CaseInfo.of(parse(unnamed))], "sim.user", registry)
    with pytest.raises(ConfigError, match=r"simulator 'sim\.nobody'"):
        check_simulators([CaseInfo.of(parse(unnamed))], "sim.nobody", registry)


async def test_parallel_dynamic_cases_give_the_same_report_in_case_order():
    cases = [
        dynamic("a"),
        dynamic("b", sim={"give_up_at": 2}),
        dynamic("c", sim={"replies": {"2": "please explode"}}),
        dynamic("d", sim={"style": "fenced"}),
    ]

    def stable(results: list[CaseResult]) -> list[dict[str, Any]]:
        data = json.loads(json.dumps([r.to_dict() for r in results]))
        for item in data:
            item.pop("duration_ms")
            for turn in item["turns"]:
                turn.pop("duration_ms")
        return data

    serial = await play(*cases)
    parallel = await play(*cases, parallel=4)
    assert [r.id for r in parallel] == ["a", "b", "c", "d"]
    assert stable(parallel) == stable(serial)
    assert [r.status for r in parallel] == ["passed", "failed", "error", "passed"]


# --- console and events -------------------------------------------------------------------


def render(result: CaseResult, case: dict[str, Any], verbose: bool) -> str:
    out = io.StringIO()
    view = ConsoleView(
        Console(file=out, width=120, color_system=None), verbose=verbose, progress=False
    )
    view.on_event(RunEvent("test_result", case=parse(case), result=result))
    return out.getvalue()


async def test_console_block_with_the_conversation_under_verbose():
    case = dynamic()
    (result,) = await play(case)
    lines = render(result, case, verbose=True).splitlines()
    assert lines[0] == "► [order] (dynamic, 3 checkpoints)"
    assert lines[1] == "  │ Dynamic test: order (max 6 turns)"
    assert lines[2] == "  │ Turn 1: User: I want to order coffee"
    assert lines[3].startswith("  │ Turn 1: Agent: Hello! Welcome")
    assert lines[4] == "  │   ✓ checkpoint: greeting"
    assert "  │   ✓ checkpoint: confirm" in lines
    assert lines[-1].startswith("  └─ PASSED (3 turns, 3/3 checkpoints, ")
    quiet = render(result, case, verbose=False).splitlines()
    assert quiet[0] == lines[0] and len(quiet) == 2


async def test_console_block_of_a_failure_names_the_missing_checkpoint():
    case = dynamic(sim={"give_up_at": 2})
    (result,) = await play(case)
    lines = render(result, case, verbose=True).splitlines()
    assert "  │   ✗ checkpoint: ask_size not reached: expected output to match /size/" in lines
    assert lines[-2].startswith("  └─ FAILED (1 turn, 1/3 checkpoints, ")
    assert lines[-1].startswith("  └─ the simulator declared the goal achieved at turn 2")


async def test_json_events_are_dynamic_start_and_dynamic_result():
    case = dynamic()
    (result,) = await play(case)
    out = io.StringIO()
    events = JsonEvents(out)
    events.on_event(RunEvent("test_start", case=parse(case)))
    events.on_event(RunEvent("test_result", case=parse(case), result=result, run=2))
    start, end = (json.loads(line) for line in out.getvalue().splitlines())
    assert start == {"type": "dynamic_start", "id": "order", "checkpoints": 3, "max_turns": 6}
    end.pop("duration_ms")
    assert end == {
        "type": "dynamic_result",
        "id": "order",
        "status": "passed",
        "turns": 3,
        "checkpoints": 3,
        "checkpoints_reached": 3,
        "run": 2,
    }

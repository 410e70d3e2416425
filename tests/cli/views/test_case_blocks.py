"""The blocks of one case (result line, dynamic conversation, stability, dry run) at a
fixed width, exact text."""

from __future__ import annotations

from agentcli.cli.views.case_blocks import DryRunLine, DynamicBlock, ResultLine, StabilityLine
from agentcli.eval.cases.model import Case
from agentcli.eval.results.model import (
    AssertionResult,
    CaseResult,
    CheckpointState,
    ToolCall,
    Trace,
    Turn,
)
from agentcli.eval.stats.stability import CaseStability
from tests.cli.views.blocks import rendered
from tests.eval.probe import cases

(CASE,) = cases({"id": "sum", "input": "add 2 3"})
(DYNAMIC,) = cases(
    {
        "id": "order",
        "input": "coffee",
        "simulator": {"use": "sim.user"},
        "max_turns": 4,
        "checkpoints": [
            {"id": "greet", "assert": {"type": "regex", "value": "hi"}},
            {"id": "size", "after": ["greet"], "assert": {"type": "regex", "value": "size"}},
        ],
    }
)


def failed_sum() -> CaseResult:
    """A failed case with an assertion, a retried model call, two tool calls and a print."""
    result = CaseResult(
        id="sum",
        status="failed",
        duration_ms=12,
        error='expected "6"',
        output={"sum": 5},
        assertions=[AssertionResult("contains", False, 'expected "6"')],
        trace=Trace(
            completion="",
            tool_calls=[
                ToolCall("c1", "probe", "add", {"a": 2}, 5),
                ToolCall("c2", "", "div", {"a": 1}, None, "division by zero"),
            ],
            retries=[{"attempt": 1, "kind": "rate_limit", "delay_s": 0.5}],
        ),
    )
    result.logs = [{"stream": "stdout", "text": "adding"}]
    return result


def test_a_result_line_shows_each_failed_assertion_with_what_it_got():
    assert rendered(ResultLine(CASE, failed_sum())) == (
        '► [sum] add 2 3 FAILED (12ms)\n  └─ ✗ contains: expected "6"\n'
        '       actual: { "sum": 5 }\n'
    )


def test_a_custom_message_still_shows_expected_actual_and_the_checkers_words():
    friendly = AssertionResult(
        "contains",
        False,
        "the bot must quote the price",
        expected="$5",
        extra={"detail": "expected output to contain '$5'"},
    )
    other = AssertionResult("equals", False, "wrong total", expected=6, actual=5)
    result = CaseResult(
        id="sum", status="failed", duration_ms=12, error="the bot must quote the price",
        output="it is free", assertions=[friendly, other, other, other],
    )  # fmt: skip
    assert rendered(ResultLine(CASE, result)).splitlines() == [
        "► [sum] add 2 3 FAILED (12ms)",
        "  └─ ✗ contains: the bot must quote the price",
        "       expected: $5 · actual: it is free",
        "       check: expected output to contain '$5'",
        "  └─ ✗ equals: wrong total",
        "       expected: 6 · actual: 5",
        "  └─ ✗ equals: wrong total",
        "       expected: 6 · actual: 5",
        "  └─ … and 1 more failed assertion",
    ]


def test_an_error_that_is_no_assertion_message_is_shown_too():
    result = failed_sum()
    result.error = "hook after failed"
    assert rendered(ResultLine(CASE, result)).splitlines()[1:3] == [
        "  └─ hook after failed",
        '  └─ ✗ contains: expected "6"',
    ]


def test_a_passed_result_line_is_one_line_and_a_script_test_has_no_input_gap():
    passed = CaseResult(id="sum", status="passed", duration_ms=1234.5)
    assert rendered(ResultLine(CASE, passed)) == "► [sum] add 2 3 PASSED (1.2s)\n"
    script = Case(id="TestOrder")
    test = CaseResult(id="TestOrder", status="passed", duration_ms=3)
    assert rendered(ResultLine(script, test)) == "► [TestOrder] PASSED (3ms)\n"


def test_a_verbose_result_line_shows_assertions_retries_tools_prints_and_output():
    assert rendered(ResultLine(CASE, failed_sum(), run=2, verbose=True)).splitlines() == [
        "► [sum] Run 2: add 2 3 FAILED (12ms)",
        '  └─ expected "6"',
        '  │ ✗ contains expected "6"',
        '  │     actual: { "sum": 5 }',
        "  │ retried a model call after rate_limit (attempt 1, waited 0.5s)",
        '  │ tool probe/add → OK (args: {"a": 2})',
        '  │ tool div → ERR: division by zero (args: {"a": 1})',
        "  │ stdout: adding",
        '  └─ Output: {"sum": 5}',
    ]


def played_order() -> CaseResult:
    """A dynamic case that reached one of its two checkpoints in two turns."""
    return CaseResult(
        id="order",
        status="failed",
        duration_ms=8500,
        error="max turns (2) reached",
        turns=[
            Turn(
                turn=1,
                input="coffee",
                output="hi there",
                tool_calls=[ToolCall(tool="menu")],
                checkpoints_reached=["greet"],
            ),
            Turn(
                turn=2,
                input="a latte",
                output="ok",
                tool_calls=[ToolCall(tool="order", error="sold out")],
            ),
        ],
        checkpoints=[
            CheckpointState(id="greet", reached=True, required=True),
            CheckpointState(id="size", reached=False, required=True, message="no match"),
        ],
    )


def test_a_dynamic_block_is_its_heading_and_verdict():
    assert rendered(DynamicBlock(DYNAMIC, played_order(), run=3)).splitlines() == [
        "► [order] Run 3: (dynamic, 2 checkpoints)",
        "  └─ FAILED (2 turns, 1/2 checkpoints, 8.5s)",
        "  └─ max turns (2) reached",
    ]


def test_a_verbose_dynamic_block_shows_the_conversation_and_checkpoints():
    assert rendered(DynamicBlock(DYNAMIC, played_order(), verbose=True)).splitlines() == [
        "► [order] (dynamic, 2 checkpoints)",
        "  │ Dynamic test: order (max 4 turns)",
        "  │ Turn 1: User: coffee",
        "  │ Turn 1: Tool: menu → OK",
        "  │ Turn 1: Agent: hi there",
        "  │   ✓ checkpoint: greet",
        "  │ Turn 2: User: a latte",
        "  │ Turn 2: Tool: order → ERR: sold out",
        "  │ Turn 2: Agent: ok",
        "  │   ✗ checkpoint: size not reached: no match",
        "  └─ FAILED (2 turns, 1/2 checkpoints, 8.5s)",
        "  └─ max turns (2) reached",
    ]


def test_a_single_turn_dynamic_verdict_says_turn():
    one = CaseResult(id="order", status="passed", duration_ms=900, turns=[Turn(turn=1)])
    assert rendered(DynamicBlock(DYNAMIC, one)).splitlines()[-1] == (
        "  └─ PASSED (1 turn, 0/2 checkpoints, 900ms)"
    )


def test_a_stability_line_has_rate_runs_label_and_timing():
    stats = CaseStability(
        id="a",
        runs=5,
        passed=4,
        pass_rate=80.0,
        stability="mostly_stable",
        duration={"avg": 1200.0, "p95": 2000.0},
    )
    assert rendered(StabilityLine(stats)) == "[a] 80% (4/5) Mostly Stable avg 1.2s p95 2.0s\n"
    assert rendered(StabilityLine(CaseStability(id="b"))) == "[b] - (0/0) Skipped\n"


def test_a_dry_run_line_previews_the_input_in_80_characters():
    (long,) = cases({"id": "long", "input": "word " * 40})
    assert rendered(DryRunLine(CASE)) == "  ○ [sum] add 2 3\n"
    assert rendered(DryRunLine(long), width=120) == f"  ○ [long] {'word ' * 15}wo...\n"

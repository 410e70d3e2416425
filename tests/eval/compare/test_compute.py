"""Two runs' typed results -> a RunDiff: what became of each case, the significance of
repeat counts, and what changed in outputs, tool calls and figures."""

from __future__ import annotations

import pytest

from agentcli.eval.compare.compute import DIFF_LINES, diff_runs, output_diff, tool_call_changes
from agentcli.eval.compare.model import RunSource, Threshold
from agentcli.eval.compare.significance import FISHER
from agentcli.eval.results.model import ToolCall
from tests.eval.compare.runs import repeats, result

BASE, NEW = RunSource("base.jsonl"), RunSource("new.jsonl")


def diff(base, new, **options):
    return diff_runs(base, new, base_source=BASE, new_source=NEW, **options)


def kinds(compared):
    return {case.id: case.kind for case in compared.cases}


def test_each_case_is_classified_by_what_became_of_it():
    base = [
        result("kept"),
        result("broke"),
        result("mended", "failed"),
        result("stuck", "error"),
        result("gone"),
        result("paused"),
    ]
    new = [
        result("kept"),
        result("broke", "timeout"),
        result("mended"),
        result("stuck", "failed"),
        result("fresh", "failed"),
        result("paused", "skipped"),
    ]
    compared = diff(base, new)
    assert kinds(compared) == {
        "kept": "passing",
        "broke": "regression",
        "mended": "fix",
        "stuck": "still_failing",
        "fresh": "added",
        "paused": "skipped",
        "gone": "removed",
    }
    assert [case.id for case in compared.cases][-1] == "gone"  # new order, then the removed
    assert [case.id for case in compared.regressions] == ["broke"]
    assert not compared.repeats
    assert all(case.significance is None for case in compared.cases)


def test_one_to_two_passes_of_five_is_not_significant():
    compared = diff(repeats("flaky", 1, 5), repeats("flaky", 2, 5))
    (case,) = compared.cases
    assert case.kind == "still_failing"
    assert case.significance is not None
    assert case.significance.test == FISHER
    assert case.significance.p_value == pytest.approx(1.0)
    assert not case.significance.significant
    assert compared.repeats and not compared.regressions


def test_five_to_zero_passes_of_five_is_a_significant_regression():
    compared = diff(repeats("broken", 5, 5), repeats("broken", 0, 5))
    (case,) = compared.cases
    assert case.kind == "regression"
    assert case.significance.p_value == pytest.approx(2 / 252)  # 2 of C(10, 5) tables
    assert case.significance.significant


def test_a_significant_rise_is_a_fix_and_alpha_decides():
    assert kinds(diff(repeats("c", 0, 5), repeats("c", 5, 5)))["c"] == "fix"
    stricter = diff(repeats("c", 5, 5), repeats("c", 0, 5), alpha=0.005)
    assert stricter.cases[0].kind == "not_significant"
    assert stricter.cases[0].significance.alpha == 0.005


def test_a_pass_lost_in_the_noise_is_not_significant():
    (case,) = diff(repeats("c", 5, 5), repeats("c", 4, 5)).cases
    assert case.kind == "not_significant"
    assert not case.significance.significant


def test_a_run_s_min_pass_rate_decides_whether_repeats_passed():
    lenient = RunSource("new.jsonl", min_pass_rate=80.0)
    compared = diff_runs(
        repeats("c", 5, 5), repeats("c", 4, 5), base_source=BASE, new_source=lenient
    )
    assert compared.cases[0].kind == "passing"


def test_outputs_are_compared_as_a_short_unified_diff():
    compared = diff([result("a", output="Hello there")], [result("a", output="Hello world")])
    (case,) = compared.cases
    assert case.kind == "passing"
    assert case.output_diff == [
        "--- base",
        "+++ new",
        "@@ -1 +1 @@",
        "-Hello there",
        "+Hello world",
    ]


def test_structured_outputs_are_diffed_as_indented_json():
    lines = diff([result("a", output={"city": "Paris"})], [result("a", output={"city": "Rome"})])
    assert '-  "city": "Paris"' in lines.cases[0].output_diff
    assert '+  "city": "Rome"' in lines.cases[0].output_diff


def test_a_long_output_diff_is_cut_and_counted():
    before = "\n".join(f"line {n}" for n in range(100))
    after = "\n".join(f"LINE {n}" for n in range(100))
    lines = output_diff(before, after)
    assert len(lines) == DIFF_LINES + 1
    assert lines[-1].startswith("… ") and lines[-1].endswith(" more diff lines")
    assert output_diff("same", "same") == []


def test_outputs_of_repeated_cases_are_not_compared():
    base = [result("a", output="x", run=1), result("a", output="y", run=2)]
    new = [result("a", output="z", run=1), result("a", output="w", run=2)]
    (case,) = diff(base, new).cases
    assert case.output_diff == [] and case.tool_changes == []


def test_tool_calls_are_paired_by_name_in_call_order():
    before = [
        ToolCall(tool="search", server="web", arguments={"q": "a"}),
        ToolCall(tool="lookup", arguments={"id": 1}),
        ToolCall(tool="search", server="web", arguments={"q": "b"}),
    ]
    after = [
        ToolCall(tool="search", server="web", arguments={"q": "a"}),
        ToolCall(tool="search", server="web", arguments={"q": "c"}),
        ToolCall(tool="submit", arguments={"amount": 25}),
    ]
    changes = tool_call_changes(before, after)
    assert [(c.kind, c.name, c.before, c.after) for c in changes] == [
        ("changed", "search (web)", {"q": "b"}, {"q": "c"}),
        ("added", "submit", None, {"amount": 25}),
        ("removed", "lookup", {"id": 1}, None),
    ]
    assert tool_call_changes(before, before) == []


def test_figures_are_reported_only_past_their_noise_thresholds():
    base = [result("slow", duration_ms=100), result("jitter", duration_ms=100, tokens=100)]
    new = [result("slow", duration_ms=2_000), result("jitter", duration_ms=400, tokens=140)]
    compared = diff(base, new)
    slow, jitter = compared.cases
    assert [(m.metric, m.before, m.after) for m in slow.metric_changes] == [
        ("duration_ms", 100.0, 2000.0)
    ]
    assert jitter.metric_changes == []  # +300 ms is under 500 ms; +40 tokens under 50


def test_tokens_and_cost_changes_are_reported():
    base = [result("a", tokens=100, cost=0.01)]
    new = [result("a", tokens=400, cost=0.05)]
    (case,) = diff(base, new).cases
    assert [(m.metric, m.delta) for m in case.metric_changes] == [
        ("tokens", 300.0),
        ("cost", pytest.approx(0.04)),
    ]


def test_a_threshold_needs_both_its_absolute_and_relative_change():
    threshold = Threshold(relative=0.5, absolute=500)
    assert threshold.exceeded(1000, 1600) is True  # +600 ms, +60%
    assert Threshold(relative=0.7, absolute=500).exceeded(1000, 1600) is False  # +60% < 70%
    assert threshold.exceeded(100, 700) is True
    assert threshold.exceeded(10_000, 10_400) is False
    assert threshold.exceeded(0, 600) is True


def test_results_without_an_id_are_left_out_with_a_note():
    compared = diff([result("a"), result("")], [result("a")])
    assert [case.id for case in compared.cases] == ["a"]
    assert compared.notes == ["base.jsonl: 1 result without an id left out"]


def test_the_failure_reason_of_the_new_run_is_kept():
    (case,) = diff([result("a")], [result("a", "failed", message="expected 'x'")]).cases
    assert case.new.reason == "expected 'x'"
    assert case.base.reason == ""


def test_infra_failures_are_left_out_unless_asked():
    base = [result("flaky"), result("slow"), result("broken")]
    new = [result("flaky", "error"), result("slow", "timeout"), result("broken", "failed")]
    new[0].attribution = new[1].attribution = "infra"
    new[2].attribution = "agent"
    compared = diff(base, new)
    assert kinds(compared) == {"flaky": "skipped", "slow": "skipped", "broken": "regression"}
    assert compared.notes == [
        "new.jsonl: 2 infra failure(s) (provider, network, timeout) not counted;"
        " --include-infra counts them"
    ]
    counted = diff(base, new, include_infra=True)
    assert kinds(counted) == {"flaky": "regression", "slow": "regression", "broken": "regression"}
    assert counted.notes == []


def test_an_infra_run_among_repeats_is_left_out_of_the_counts():
    base = repeats("c", 5, 5)
    new = repeats("c", 4, 5)
    new[-1].status, new[-1].attribution = "error", "infra"
    (case,) = diff(base, new).cases
    assert (case.new.passed, case.new.counted) == (4, 4)


def _on(connector, *items):
    for item in items:
        item.connector = connector
    return list(items)


def test_a_single_connector_side_pairs_with_its_connectors_cells_of_a_matrix():
    base = [result("greet"), result("sum")]  # a run on one connector: no result names it
    new = [
        *_on("scripted", result("greet", "failed"), result("sum")),
        *_on("echo", result("greet"), result("sum", "failed")),
    ]
    on_scripted = RunSource("base.jsonl", connector="scripted")
    compared = diff_runs(base, new, base_source=on_scripted, new_source=NEW)
    assert kinds(compared) == {
        "greet @ scripted": "regression",
        "sum @ scripted": "passing",
        "greet @ echo": "added",
        "sum @ echo": "added",
    }
    backwards = diff_runs(new, base, base_source=NEW, new_source=on_scripted)
    assert kinds(backwards)["greet @ scripted"] == "fix"
    assert kinds(backwards)["sum @ echo"] == "removed"


def test_a_side_naming_no_connector_pairs_with_no_cell_and_says_so():
    compared = diff([result("greet")], _on("scripted", result("greet", "failed")))
    assert kinds(compared) == {"greet @ scripted": "added", "greet": "removed"}
    assert compared.notes == [
        "base.jsonl: its results and header name no connector, so its cases pair with no"
        " cell of the connector matrix in new.jsonl"
    ]

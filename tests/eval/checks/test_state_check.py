"""The ``state`` assertion and ``state.before`` fixtures, end to end on the shop example:
the end state is checked, not the agent's words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcli.cli.main import _register, app
from agentcli.errors import CaseFileError
from agentcli.eval.cases.parse import parse_case

ROOT = Path(__file__).resolve().parents[3]
_register()
PLACE = "order 2 mugs at $8 for ada@example.com"
STORED = {"type": "state", "query": "select count(*) from orders where customer_id = 1", "value": 1}


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AGENTCLI_DATABASE_URL", raising=False)


def evaluate(tmp_path: Path, *cases: dict, assistant: str = "shop") -> list[dict]:
    """Run the cases against an example; the result lines (the summary last)."""
    file = tmp_path / "cases.jsonl"
    file.write_text("".join(json.dumps(c) + "\n" for c in cases))
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(app, ["eval", assistant, f"@{file}", "-o", str(out)])
    assert result.exit_code in (0, 1), result.output
    return [json.loads(line) for line in out.read_text().splitlines()]


def results(lines: list[dict]) -> dict[str, dict]:
    return {line["id"]: line for line in lines if line.get("type") == "result"}


def test_an_agent_that_says_submitted_without_storing_fails_the_state_assertion(tmp_path):
    honest = {"id": "honest", "input": PLACE, "state": {"before": {"models": {"order": []}}}}
    liar = {**honest, "id": "liar", "options": {"connector": "scripted:liar.yml"}}
    checks = [{"type": "contains", "value": "submitted"}, STORED]
    found = results(evaluate(tmp_path, {**honest, "assert": checks}, {**liar, "assert": checks}))
    assert found["honest"]["status"] == "passed"
    assert found["liar"]["status"] == "failed"
    said, stored = found["liar"]["assertions"]
    assert said["passed"] is True  # the words are right...
    assert stored["passed"] is False and stored["actual"] == 0  # ...the table is empty
    assert "expected 1, got 0" in stored["message"]


def test_the_shop_failing_demo_fails(tmp_path):
    out = tmp_path / "r.jsonl"
    result = CliRunner().invoke(
        app, ["eval", "-i", "assistants/shop/tests/failing.jsonl", "-o", str(out)]
    )
    assert result.exit_code == 1, result.output
    assert "the order was not stored" in result.output


def test_model_fixtures_replace_the_rows_and_model_queries_read_them(tmp_path):
    rows = [{"id": 4, "order_no": "ORD-0004", "customer_id": 2, "item": "kettle", "total": 25}]
    case = {
        "id": "seeded",
        "input": "hello",
        "state": {"before": {"models": {"agents.shop.order": rows}}},
        "assert": [
            {"type": "state", "query": {"model": "order"}, "value": 1},
            {
                "type": "state",
                "query": {"model": "order", "withs": {"customer": {}}},
                "value": [{"item": "kettle", "customer": {"name": "Alan Turing"}}],
            },
            {
                "type": "state",
                "query": {"model": "customer", "wheres": [{"column": "tier", "value": "gold"}]},
                "value": {"email": "ada@example.com"},
            },
            {"type": "state", "query": "select item, total from orders"},
            {
                "type": "state",
                "query": "select count(*) from orders where item = 'lamp'",
                "negate": True,
            },
        ],
    }
    (line,) = results(evaluate(tmp_path, case)).values()
    assert line["status"] == "passed", line["assertions"]


def test_memory_fixtures_and_jsonpath_over_memory(tmp_path):
    case = {
        "id": "memory",
        "input": "hello",
        "metadata": {"email": "alan@example.com"},
        "state": {
            "before": {
                "memory": {"user": {"test-user": {"budget": 100}}, "team": {"t1": {"plan": "pro"}}}
            }
        },
        "assert": [
            {"type": "state", "path": "$.user['test-user'].budget", "value": 100},
            {"type": "state", "path": "$.user['test-user'].customer", "value": "Alan Turing"},
            {"type": "state", "path": "$.team.t1.plan"},
            {"type": "state", "path": "$.user['test-user'].missing", "negate": True},
        ],
    }
    (line,) = results(evaluate(tmp_path, case)).values()
    assert line["status"] == "passed", line["assertions"]


def test_a_fixture_for_a_package_without_models_stops_the_run_before_it_starts(tmp_path):
    # it was an error of the case as it ran (exit 1); the preflight finds it (exit 2)
    case = {
        "id": "x",
        "input": "hi",
        "state": {"before": {"models": {"order": []}}},
        "assert": "is_json",
    }
    file = tmp_path / "cases.jsonl"
    file.write_text(json.dumps(case) + "\n")
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(app, ["eval", "weather", f"@{file}", "-o", str(out)])
    assert result.exit_code == 2, result.output
    assert "cases.jsonl:1: case x: state.before.models: weather has no data models" in result.output
    assert not out.exists()


def test_a_failing_sql_query_fails_its_assertion_with_the_database_message(tmp_path):
    case = {
        "id": "sql",
        "input": "hello",
        "assert": {"type": "state", "query": "select nope from orders"},
    }
    (line,) = results(evaluate(tmp_path, case)).values()
    assert line["status"] == "failed"
    assert "state query failed" in line["assertions"][0]["message"]


def check(case: dict) -> list[str]:
    """The load-time problems of one case object."""
    try:
        parse_case(
            {"id": "c", "input": "hi", **case}, source_file="cases.jsonl", line=3, project_root=ROOT
        )
    except CaseFileError as error:
        return error.problems
    return []


@pytest.mark.parametrize(
    ("case", "problem"),
    [
        ({"state": {"befor": {}}}, 'unknown field "befor" (did you mean "before"?)'),
        ({"state": {"before": {"models": {"order": {}}}}}, "state.before.models.order: must be"),
        (
            {"state": {"before": {"memory": {"usr": {}}}}},
            'unknown field "usr" (did you mean "user"?)',
        ),
        ({"assert": {"type": "state", "value": 1}}, 'state needs "path"'),
        ({"assert": {"type": "state", "path": "$.a", "query": "select 1"}}, 'state needs "path"'),
        ({"assert": {"type": "state", "query": {"wheres": []}}}, 'needs "model"'),
        (
            {"assert": {"type": "state", "query": {"model": "order", "wherez": []}}},
            'did you mean "wheres"',
        ),
        (
            {
                "assert": {
                    "type": "state",
                    "query": {"model": "order", "wheres": [{"column": "a", "op": "~"}]},
                }
            },
            "unknown op",
        ),
        (
            {"assert": {"type": "contains", "value": "x", "query": "select 1"}},
            '"query" is only used by state',
        ),
        ({"assert": {"type": "stat", "query": "select 1"}}, 'did you mean "state"'),
    ],
)
def test_mistakes_stop_the_run_at_load(case, problem):
    problems = check(case)
    assert any(problem in p and p.startswith("cases.jsonl:3: ") for p in problems), problems


def test_a_valid_state_case_round_trips_through_to_dict():
    case = {
        "state": {
            "before": {"memory": {"user": {"u": {"k": 1}}}, "models": {"order": [{"item": "a"}]}}
        },
        "assert": STORED,
    }
    assert check(case) == []
    parsed = parse_case(
        {"id": "c", "input": "hi", **case}, source_file="cases.jsonl", line=1, project_root=ROOT
    )
    assert parsed.to_dict()["state"] == case["state"]
    assert parsed.to_dict()["assert"] == [STORED]


def test_cases_that_use_data_models_leave_no_cycles_for_the_collector(tmp_path):
    """Process calls (a Create hook's, a tool's) and state checks free each case's objects
    when it ends: garbage found by the collector does not grow with N."""
    from tests.garbage import cyclic_garbage

    stored = STORED | {"value": {"$any": True}}
    case = {"input": PLACE, "metadata": {"email": "ada@example.com"}, "assert": stored}

    def run(count: int) -> int:
        folder = tmp_path / f"n{count}"
        folder.mkdir()
        cases = ({"id": f"c{i}", **case} for i in range(count))
        # Ours only: SQLAlchemy's statements hold cycles of their own (bind parameters and
        # their labels), built per call and freed by the collector in its young passes.
        return cyclic_garbage(lambda: evaluate(folder, *cases), of="agentcli")

    few, many = run(2), run(22)
    assert many - few < 20, (few, many)  # a cycle per case would add 20 x its size

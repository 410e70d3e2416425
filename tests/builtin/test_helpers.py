"""The shipped helpers (agentcli/builtin/): found by id from any folder, a project's own
package of that id wins, and their offline models answer each helper's JSON contract."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcli.assistant.package import resolve_assistant
from agentcli.builtin import PACKAGES_ROOT, builtin_dir
from agentcli.cli.main import _register, app
from agentcli.errors import UnknownAssistantError

_register()
runner = CliRunner()


@pytest.fixture(autouse=True)
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """cwd is a folder with no assistants root above it."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AGENT_ROOT", raising=False)
    return tmp_path


def ask(helper: str, request: dict) -> dict:
    result = runner.invoke(app, ["run", helper, json.dumps(request)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize("name", ["simulator", "validator", "generator"])
def test_found_by_id_from_a_folder_with_no_assistants(elsewhere: Path, name: str):
    package = resolve_assistant(f"builtin.{name}", cwd=elsewhere)
    assert package.id == f"builtin.{name}"
    assert package.path == PACKAGES_ROOT / "builtin" / name
    assert package.connector == f"python:{name}:reply"
    assert package.disable_global_prompts is True
    assert (package.path / "prompts.yml").is_file()  # the real-model prompt


def test_a_projects_own_package_of_that_id_wins(elsewhere: Path):
    mine = elsewhere / "assistants" / "builtin" / "simulator"
    mine.mkdir(parents=True)
    (mine / "package.yao").write_text('{"name": "Mine", "connector": "echo"}')
    assert resolve_assistant("builtin.simulator", cwd=elsewhere).path == mine
    assert resolve_assistant("builtin.validator", cwd=elsewhere).path == builtin_dir(
        "builtin.validator"
    )


def test_an_unknown_builtin_is_an_unknown_assistant(elsewhere: Path):
    assert builtin_dir("builtin.nope") is None
    with pytest.raises(UnknownAssistantError, match=r"unknown assistant 'builtin\.nope'") as raised:
        resolve_assistant("builtin.nope", cwd=elsewhere)
    assert raised.value.hint == (
        "the helpers shipped with agentcli: builtin.generator, builtin.simulator, builtin.validator"
    )


def test_validator_checks_quoted_phrases_and_words_of_the_criteria():
    criteria = "Friendly, and names 'A-1001'"
    assert ask("builtin.validator", {"output": "Hello! A-1001 shipped.", "criteria": criteria}) == {
        "passed": True,
        "reason": "the response contains 'A-1001', is friendly",
    }
    assert ask("builtin.validator", {"output": "A-1002 shipped.", "criteria": criteria}) == {
        "passed": False,
        "reason": "the response does not satisfy: contains 'A-1001', is friendly",
    }
    assert ask("builtin.validator", {"output": "", "criteria": "anything"})["passed"] is False
    assert ask("builtin.validator", {"output": '{"a": 1}', "criteria": "valid JSON"}) == {
        "passed": True,
        "reason": "the response is JSON",
    }


def test_simulator_follows_scripted_replies_then_completion_then_the_goal():
    conversation = [{"role": "assistant", "content": "Which city do you fly from?"}]
    request = {"goal": "Book a flight to Oslo", "persona": "A traveller"}
    replies = {"replies": [{"when": "(?i)which city", "say": "From Berlin."}]}
    assert ask(
        "builtin.simulator", {**request, "conversation": conversation, "extra": replies}
    ) == {
        "message": "From Berlin.",
        "goal_achieved": False,
        "reasoning": "a reply the case scripted for this question (as A traveller)",
    }
    restated = ask("builtin.simulator", {**request, "conversation": conversation})
    assert restated["message"] == "I'd like to book a flight to Oslo."
    assert restated["goal_achieved"] is False
    booked = [{"role": "assistant", "content": "Your flight is booked."}]
    assert ask("builtin.simulator", {**request, "conversation": booked})["goal_achieved"] is True
    shipped = [{"role": "assistant", "content": "It has shipped."}]
    done = {"done": "(?i)shipped"}
    assert ask("builtin.simulator", {**request, "conversation": shipped, "extra": done})[
        "goal_achieved"
    ]
    confirm = [{"role": "assistant", "content": "A flight to Oslo, is that right?"}]
    assert ask("builtin.simulator", {**request, "conversation": confirm})["message"] == (
        "Yes, that's right."
    )


def test_generator_writes_count_cases_from_the_tools():
    target = {
        "id": "Order Desk",
        "tools": [
            {
                "name": "orders__order_status",
                "input_schema": {"properties": {"qty": {"type": "integer"}}},
            }
        ],
    }
    cases = ask("builtin.generator", {"target_agent": target, "count": 3})
    assert [c["id"] for c in cases] == [
        "order-desk-greeting",
        "order-desk-order-status",
        "order-desk-greeting-2",
    ]
    assert cases[1] == {
        "id": "order-desk-order-status",
        "input": "Order status 2",
        "assert": [{"type": "tool_called", "value": "order_status"}],
    }
    edges = ask("builtin.generator", {"target_agent": target, "count": 5, "focus": "edge-cases"})
    assert [c["id"].rsplit("-edge-", 1)[1] for c in edges] == [
        "blank",
        "gibberish",
        "non-english",
        "very-long",
        "injection",
    ]


def test_eval_falls_back_to_the_shipped_judge_and_simulator():
    from agentcli.eval.cases.model import Assertion
    from agentcli.eval.cases.parse import parse_case
    from agentcli.eval.run.dynamic import simulator_id

    assert Assertion.from_obj({"type": "agent", "value": "polite"}).use == (
        "agents:builtin.validator"
    )
    assert Assertion.from_obj({"type": "agent", "use": "agents:mine", "value": "x"}).use == (
        "agents:mine"
    )
    assert Assertion.from_obj({"type": "contains", "value": "x"}).use is None
    dynamic = {"id": "d", "input": "hi", "checkpoints": [{"id": "c", "assert": "is_json"}]}
    case = parse_case(dynamic, source_file="cases.jsonl", line=1, project_root=Path.cwd())
    assert simulator_id(case, None) == "builtin.simulator"
    assert simulator_id(case, "agents:tests.simulator-agent") == "tests.simulator-agent"

"""`agent eval` in a project: suites for a bare `agent eval`, the runs folder and its
`latest`, flags > environment > agentcli.yml, tag selection, and no input outside one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcli.cli.main import _register, app
from agentcli.eval.reports import read_results

ROOT = Path(__file__).resolve().parents[2]
PROBE = ROOT / "fixtures" / "assistants" / "probe"

_register()
runner = CliRunner()

CASES = [
    {
        "id": "hello",
        "input": "hello",
        "tags": ["smoke"],
        "assert": {"type": "contains", "value": "Hello"},
    },
    {
        "id": "add",
        "input": "add 2 3",
        "tags": ["smoke", "math"],
        "assert": {"type": "contains", "value": "sum=5"},
    },
    {
        "id": "slow-one",
        "input": "sleep 0.01",
        "tags": "slow",
        "assert": {"type": "contains", "value": "slept"},
    },
    {
        "id": "plain",
        "input": "json",
        "assert": {"type": "json_path", "path": "city", "value": "Paris"},
    },
]
OTHER = [{"id": "echo", "input": "anything", "assert": {"type": "contains", "value": "anything"}}]


def write_cases(path: Path, cases: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    return path


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project: assistants/probe with two case files and an agentcli.yml naming them."""
    shutil.copytree(PROBE, tmp_path / "assistants" / "probe")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PROBE_LOG", str(tmp_path / "hooks.log"))
    for name in (
        "AGENT_ROOT",
        "AGENT_PARALLEL",
        "AGENT_TIMEOUT",
        "AGENT_EXCLUDE_TAGS",
        "AGENT_OUTPUT",
    ):
        monkeypatch.delenv(name, raising=False)
    tests = tmp_path / "assistants" / "probe" / "tests"
    write_cases(tests / "inputs.jsonl", CASES)
    write_cases(tests / "other.jsonl", OTHER)
    (tmp_path / "agentcli.yml").write_text(
        "assistants: assistants\n"
        "suites:\n"
        "  main: assistants/probe/tests/inputs.jsonl\n"
        "  extra: assistants/*/tests/other.jsonl\n"
        "parallel: 3\n"
        "timeout: 45s\n"
        "exclude_tags: [slow]\n",
        encoding="utf-8",
    )
    return tmp_path


def invoke(*args: str):
    return runner.invoke(app, ["eval", *args], catch_exceptions=False)


def runs(project: Path) -> Path:
    return project / ".agentcli" / "runs"


def test_bare_eval_runs_every_suite_into_the_runs_folder(project):
    result = invoke()
    assert result.exit_code == 0, result.output
    main = list((runs(project) / "assistants-probe-tests-inputs").glob("output-*.jsonl"))
    extra = list((runs(project) / "assistants-probe-tests-other").glob("output-*.jsonl"))
    assert len(main) == len(extra) == 1
    assert not list((project / "assistants" / "probe" / "tests").glob("output-*.jsonl"))
    # the project's exclude_tags left the slow case out
    assert [r.id for r in read_results(main[0]).results] == ["hello", "add", "plain"]
    assert result.output.endswith(
        "Suites: 2 case files\n"
        "  main   assistants/probe/tests/inputs.jsonl  passed\n"
        "  extra  assistants/probe/tests/other.jsonl   passed\n"
    )
    latest = (runs(project) / "latest").read_text(encoding="utf-8").strip()
    assert latest == f"assistants-probe-tests-other/{extra[0].name}"


def test_project_values_reach_the_run_and_its_header(project):
    result = invoke("--suite", "main")
    assert result.exit_code == 0, result.output
    assert "ℹ Timeout: 45s\n" in result.output
    assert "ℹ Parallel: 3\n" in result.output
    assert "ℹ Selected: 3 of 4 test cases (not tag slow)\n" in result.output
    (output,) = (runs(project) / "assistants-probe-tests-inputs").glob("output-*.jsonl")
    options = read_results(output).header.metadata["options"]
    assert (options["parallel"], options["timeout_s"], options["suites"]) == (3, 45.0, ["main"])
    assert options["default_excluded"] == ["slow"]


def test_flags_win_over_the_environment_which_wins_over_the_file(project, monkeypatch):
    monkeypatch.setenv("AGENT_PARALLEL", "2")
    result = invoke("--suite", "main")
    assert "ℹ Parallel: 2\n" in result.output
    result = invoke("--suite", "main", "--parallel", "1")
    assert "ℹ Parallel: 1\n" in result.output  # the flag's, though it is the default value


def test_a_tag_runs_any_of_its_cases_and_names_an_excluded_tag_back_in(project):
    result = invoke("--suite", "main", "--tag", "math", "--tag", "slow", "-v")
    assert result.exit_code == 0, result.output
    assert "ℹ Selected: 2 of 4 test cases (tag math or slow)\n" in result.output
    assert "  │ tags: smoke, math\n" in result.output
    (output,) = (runs(project) / "assistants-probe-tests-inputs").glob("output-*.jsonl")
    loaded = read_results(output)
    assert [r.id for r in loaded.results] == ["add", "slow-one"]
    assert loaded.results[0].tags == ["smoke", "math"]


def test_tags_exclusions_and_run_are_all_anded(project):
    path = "@assistants/probe/tests/inputs.jsonl"
    result = invoke(
        "probe", path, "--tag", "smoke", "--exclude-tag", "math", "--run", "^h", "--dry-run"
    )
    assert result.exit_code == 0, result.output
    assert "hello" in result.output and "add" not in result.output
    result = invoke("probe", path, "--tag", "smoke", "--exclude-tag", "math", "--run", "^a")
    assert result.exit_code == 2
    assert result.output.splitlines()[0] == (
        "error: no test cases of assistants/probe/tests/inputs.jsonl match the selection"
        " (tag smoke, not tag math, slow, --run ^a)"
    )


def test_a_tag_both_in_and_out_is_bad_input(project):
    result = invoke("--suite", "main", "--tag", "slow", "--exclude-tag", "slow")
    assert result.exit_code == 2
    assert "--tag slow and --exclude-tag slow: a case cannot be both in and out" in result.output


def test_a_suite_file_without_the_tag_is_skipped_not_an_error(project):
    result = invoke("--tag", "smoke")
    assert result.exit_code == 0, result.output
    assert (
        "  extra  assistants/probe/tests/other.jsonl   skipped (no case selected)\n"
        in result.output
    )


def test_unknown_suite_is_one_line_with_a_did_you_mean(project):
    result = invoke("--suite", "mian")
    assert result.exit_code == 2
    assert result.output.splitlines()[0] == (
        f"error: --suite mian: no such suite in {project / 'agentcli.yml'} (did you mean 'main'?)"
    )


def test_an_input_and_a_suite_together_are_bad_input(project):
    result = invoke("probe", "@assistants/probe/tests/inputs.jsonl", "--suite", "main")
    assert result.exit_code == 2
    assert "give an input or --suite main, not both" in result.output


def test_output_beside_cases_keeps_the_old_place(project, monkeypatch):
    monkeypatch.setenv("AGENT_OUTPUT", "beside-cases")
    result = invoke("--suite", "extra")
    assert result.exit_code == 0, result.output
    assert len(list((project / "assistants" / "probe" / "tests").glob("output-*.jsonl"))) == 1
    assert not runs(project).exists()


def test_last_failed_reads_the_runs_folder(project):
    write_cases(
        project / "assistants" / "probe" / "tests" / "other.jsonl",
        [*OTHER, {"id": "bad", "input": "x", "assert": {"type": "contains", "value": "nope"}}],
    )
    assert invoke("--suite", "extra").exit_code == 1
    result = invoke("probe", "@assistants/probe/tests/other.jsonl", "--last-failed")
    assert "Re-run: 1 failed case of" in result.output
    assert ".agentcli/runs/assistants-probe-tests-other/output-" in result.output


def test_the_project_assistant_runs_cases_no_package_holds(project):
    write_cases(project / "cases" / "loose.jsonl", OTHER)
    config = project / "agentcli.yml"
    config.write_text(config.read_text() + "assistant: probe\n", encoding="utf-8")
    result = invoke("-i", "cases/loose.jsonl")
    assert result.exit_code == 0, result.output
    assert "ℹ Agent: probe\n" in result.output


def test_the_project_connectors_file_is_used(project):
    (project / "conf").mkdir()
    (project / "conf" / "models.yml").write_text("house: echo\n", encoding="utf-8")
    config = project / "agentcli.yml"
    config.write_text(config.read_text() + "connectors: conf/models.yml\n", encoding="utf-8")
    result = invoke("--suite", "extra", "-c", "house")
    assert result.exit_code == 0, result.output
    assert "ℹ Connector: house (override)\n" in result.output


def test_a_bad_project_config_stops_eval_with_its_line(project):
    (project / "agentcli.yml").write_text(
        "suites:\n  main: a.jsonl\nparalel: 2\n", encoding="utf-8"
    )
    result = invoke()
    assert result.exit_code == 2
    assert result.output.splitlines()[0] == (
        f"error: {project / 'agentcli.yml'}:3: unknown key 'paralel' (did you mean 'parallel'?)"
    )


def test_no_input_and_no_project_is_one_error_and_a_hint_not_the_help(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = invoke()
    assert result.exit_code == 2
    assert result.output == (
        "error: agent eval needs an input: a message, @cases.jsonl or --scripts MODULE "
        f"(no agentcli.yml with suites found from {tmp_path})\n"
        "  hint: agent eval expense @assistants/expense/tests/inputs.jsonl, or add suites to "
        "agentcli.yml and run agent eval (agent eval --help lists the options)\n"
    )


def test_a_project_without_suites_needs_an_input(tmp_path, monkeypatch):
    (tmp_path / "agentcli.yml").write_text("parallel: 2\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = invoke()
    assert result.exit_code == 2
    assert result.output.startswith(
        f"error: {tmp_path / 'agentcli.yml'}: no suites defined, so agent eval needs an input\n"
    )


@pytest.fixture
def judged(tmp_path, monkeypatch):
    """A project holding the repository's assistants and a case judged by the validator."""
    shutil.copytree(ROOT / "assistants", tmp_path / "assistants")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AGENT_ROOT", raising=False)
    monkeypatch.delenv("AGENT_JUDGE_CONNECTOR", raising=False)
    judge = {"type": "agent", "use": "agents:tests.validator-agent", "value": "The reply greets"}
    write_cases(
        tmp_path / "cases" / "judged.jsonl", [{"id": "j", "input": "Hello!", "assert": judge}]
    )
    (tmp_path / "agentcli.yml").write_text(
        "assistant: expense\nsuites:\n  judged: cases/judged.jsonl\n", encoding="utf-8"
    )
    return tmp_path


def test_judges_use_their_package_connector_by_default(judged):
    result = invoke("-v")
    assert result.exit_code == 0, result.output


def test_the_judge_connector_reaches_the_judge(judged, monkeypatch):
    # echo answers the validator's request back: no "passed", so the judge is seen to be used
    monkeypatch.setenv("AGENT_JUDGE_CONNECTOR", "echo")
    result = invoke("-v")
    assert result.exit_code == 1, result.output
    assert "validator response missing a boolean 'passed' field" in result.output
    (output,) = (runs(judged) / "cases-judged").glob("output-*.jsonl")
    assert read_results(output).header.metadata["options"]["judge_connector"] == "echo"


def test_an_unknown_judge_connector_is_bad_input_before_anything_runs(judged):
    result = invoke("--judge-connector", "nope")
    assert result.exit_code == 2
    assert "judge 'tests.validator-agent': unknown connector 'nope'" in result.output


def test_one_message_takes_the_project_values_without_refusing_them(project):
    # parallel: 3 comes from agentcli.yml, not from a --parallel one message refuses
    result = invoke("probe", "hello")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("Hello there!")
    result = invoke("probe", "hello", "--parallel", "2")
    assert result.exit_code == 2
    assert "--parallel applies to a file of cases, not to one message" in result.output


@pytest.mark.parametrize("output", ["-", "all.jsonl"])
def test_one_output_for_several_case_files_is_refused(project, output):
    # -o names one file: the suites' runs would overwrite it (or mix three JSONL streams)
    result = invoke("-o", output)
    assert result.exit_code == 2
    assert result.output.startswith(
        f"error: -o {output} names one results file, and these suites run 2 case files"
    )
    assert not (project / "all.jsonl").exists()


def test_a_case_file_in_two_suites_runs_once(project):
    config = project / "agentcli.yml"
    config.write_text(
        config.read_text().replace(
            "suites:\n", "suites:\n  every: assistants/probe/tests/*.jsonl\n"
        ),
        encoding="utf-8",
    )
    result = invoke()
    assert result.exit_code == 0, result.output
    assert result.output.endswith(
        "Suites: 2 case files\n"
        "  every  assistants/probe/tests/inputs.jsonl  passed\n"
        "  every  assistants/probe/tests/other.jsonl   passed\n"
    )


@pytest.mark.parametrize("folder", ["agentcli.yml", "agentcli.yml/runs"])
def test_a_runs_folder_that_is_a_file_is_bad_input_with_its_line(project, folder):
    config = project / "agentcli.yml"
    config.write_text(config.read_text() + f"runs_folder: {folder}\n", encoding="utf-8")
    result = invoke()
    assert result.exit_code == 2
    assert result.output.startswith(f"error: {config}:8: runs_folder {folder} ")
    assert "not a folder" in result.output and "internal error" not in result.output


def test_a_latest_that_is_a_folder_is_bad_input_not_a_crash(project):
    (runs(project) / "latest").mkdir(parents=True)
    result = invoke("--suite", "main")
    assert result.exit_code == 2
    assert "latest: cannot point it at the new results" in result.output
    assert "internal error" not in result.output

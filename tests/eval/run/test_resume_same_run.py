"""``--resume`` goes on with the run its file holds (another agent, case file, ``-c`` or
``--runs`` is refused, exit 2, the file untouched; ``-c`` or ``--runs`` left out is the
header's), and
``--rerun`` of a connector matrix runs the failures on the matrix's columns."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agentcli.eval.reports import read_results
from tests.cli.test_eval import invoke

ROOT = Path(__file__).resolve().parents[3]
EXPENSE = ("expense", "@assistants/expense/tests/inputs.jsonl")


@pytest.fixture
def project(tmp_path, monkeypatch):
    """The expense and keyword assistants; cwd is the project."""
    for name in ("expense", "keyword"):
        shutil.copytree(ROOT / "assistants" / name, tmp_path / "assistants" / name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AGENT_ROOT", raising=False)
    return tmp_path


def made(*args: str) -> None:
    result = invoke(*args)
    assert result.exit_code == 0, result.output


def refused(path: Path, *args: str) -> str:
    """The error of a resume that must not run: exit 2, ``path`` as it was."""
    before = path.read_bytes()
    result = invoke(*args)
    assert result.exit_code == 2, result.output
    assert "internal error" not in result.output
    assert path.read_bytes() == before
    return result.output


def test_resume_with_other_runs_is_refused(project):
    made(*EXPENSE, "-o", "r.jsonl")  # --runs 1
    output = refused(project / "r.jsonl", *EXPENSE, "--resume", "r.jsonl", "--runs", "2")
    assert "that run was made with --runs 1, this one is asked --runs 2" in output
    assert "-o NEW.jsonl instead of --resume" in output


def test_resume_without_runs_takes_the_runs_of_its_file(project):
    made(*EXPENSE, "--runs", "3", "-o", "runs3.jsonl")
    whole = read_results(project / "runs3.jsonl")
    made(*EXPENSE, "--resume", "runs3.jsonl")
    after = read_results(project / "runs3.jsonl")
    assert [(r.id, r.run) for r in after.results] == [(r.id, r.run) for r in whole.results]
    assert after.summary is not None and after.summary.total == 33
    assert [item["id"] for item in after.stability_results] == [
        item["id"] for item in whole.stability_results
    ]
    assert len(after.stability_results) == 11


def test_resume_of_another_agents_file_is_refused(project):
    made(*EXPENSE, "-o", "r.jsonl")
    output = refused(
        project / "r.jsonl",
        "keyword",
        "@assistants/keyword/tests/inputs.jsonl",
        "--resume",
        "r.jsonl",
    )
    assert "that run evaluated agent 'expense', this one evaluates 'keyword'" in output


def test_resume_with_another_case_file_is_refused(project):
    made(*EXPENSE, "-o", "r.jsonl")
    cases = (project / "assistants/expense/tests/inputs.jsonl").read_text().splitlines()
    (project / "few.jsonl").write_text("\n".join(cases[:3]) + "\n")
    output = refused(project / "r.jsonl", "expense", "@few.jsonl", "--resume", "r.jsonl")
    assert (
        "that run read the cases of assistants/expense/tests/inputs.jsonl, this one reads "
        "few.jsonl" in output
    )


def test_resume_from_another_folder_is_the_same_case_file(project, monkeypatch):
    made(*EXPENSE, "-o", "r.jsonl")
    monkeypatch.chdir(project / "assistants")
    result = invoke("expense", "@expense/tests/inputs.jsonl", "--resume", "../r.jsonl")
    assert result.exit_code == 0, result.output
    assert "Resume: ../r.jsonl (11 finished results kept)" in result.output


def test_rerun_of_a_matrix_runs_the_failures_on_its_columns(project):
    result = invoke(*EXPENSE, "-c", "scripted", "-c", "echo", "-o", "mat.jsonl")
    assert result.exit_code == 1, result.output  # echo fails 10 cases
    result = invoke(*EXPENSE, "--rerun", "mat.jsonl", "-o", "again.jsonl")
    assert result.exit_code == 1, result.output  # they fail on echo again
    assert "Matrix: scripted, echo" in result.output
    again = read_results(project / "again.jsonl")
    assert len(again.results) == 22
    assert {r.connector for r in again.results} == {"scripted", "echo"}
    assert again.summary is not None and again.summary.passed == 12


def _torn(path: Path, keep: int) -> None:
    """``path`` as a run stopped after ``keep`` results leaves it: its header and those."""
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[: 1 + keep]) + "\n")


def test_resume_with_another_connector_is_refused(project):
    made(*EXPENSE, "-c", "scripted", "-o", "r.jsonl")
    output = refused(project / "r.jsonl", *EXPENSE, "--resume", "r.jsonl", "-c", "echo")
    assert "that run was made -c scripted, this one is asked -c echo" in output
    assert "leave -c out to take the file's" in output


def test_resume_of_a_run_without_c_refuses_another_connector(project):
    made(*EXPENSE, "-o", "r.jsonl")  # on the package's connector, scripted
    output = refused(project / "r.jsonl", *EXPENSE, "--resume", "r.jsonl", "-c", "echo")
    assert "that run was made without -c (on scripted), this one is asked -c echo" in output
    _torn(project / "r.jsonl", 4)
    made(*EXPENSE, "--resume", "r.jsonl", "-c", "scripted")  # the connector it ran on
    assert read_results(project / "r.jsonl").summary.passed == 11


def test_resume_without_c_takes_the_connector_of_its_file(project):
    result = invoke(*EXPENSE, "-c", "echo", "-o", "r.jsonl")
    assert result.exit_code == 1, result.output  # echo fails 10 of the 11
    whole = read_results(project / "r.jsonl")
    _torn(project / "r.jsonl", 3)
    result = invoke(*EXPENSE, "--resume", "r.jsonl")
    assert result.exit_code == 1, result.output
    after = read_results(project / "r.jsonl")
    # the cases it ran again were answered by echo, as the kept ones were (not by scripted)
    assert [(r.id, r.status) for r in after.results] == [(r.id, r.status) for r in whole.results]
    assert after.header.metadata["options"]["connector"] == "echo"


def test_rerun_without_c_runs_the_failures_on_the_connector_of_its_file(project):
    result = invoke(*EXPENSE, "-c", "echo", "-o", "r.jsonl")
    assert result.exit_code == 1, result.output
    result = invoke(*EXPENSE, "--rerun", "r.jsonl", "-o", "again.jsonl")
    assert result.exit_code == 1, result.output  # on echo they fail again, as they did
    again = read_results(project / "again.jsonl")
    assert again.summary is not None and again.summary.connector == "echo"
    assert (again.summary.total, again.summary.passed) == (11, 1)  # the 10 failed on echo again
    result = invoke(*EXPENSE, "--rerun", "r.jsonl", "-c", "scripted", "-o", "fixed.jsonl")
    assert result.exit_code == 0, result.output  # a re-run may be given another one


def test_a_result_the_file_holds_twice_is_kept_once_with_a_warning(project):
    made(*EXPENSE, "-o", "r.jsonl")
    lines = (project / "r.jsonl").read_text().splitlines()
    # two copies of a torn run joined by hand: the header, 3 results, then 2 of them again
    (project / "r.jsonl").write_text("\n".join([*lines[:4], *lines[1:3]]) + "\n")
    result = invoke(*EXPENSE, "--resume", "r.jsonl")
    assert result.exit_code == 0, result.output
    assert "r.jsonl:5: result 'greeting' is in the file twice (first at r.jsonl:2)" in result.output
    assert "Resume: r.jsonl (3 finished results kept)" in result.output
    after = read_results(project / "r.jsonl")
    whole = [json.loads(line)["id"] for line in lines[1:-1]]  # the run's results, in order
    assert [r.id for r in after.results] == whole
    assert after.summary is not None and after.summary.total == 11

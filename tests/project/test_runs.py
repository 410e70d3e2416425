"""The runs folder: a subfolder per case file, and the ``latest`` pointer."""

from __future__ import annotations

from agentcli.project import latest_results, load_project, results_folder, runs_folder, write_latest
from agentcli.project.runs import LATEST


def test_results_folder_is_named_after_the_case_file(tmp_path):
    (tmp_path / "agentcli.yml").write_text("", encoding="utf-8")
    project = load_project(tmp_path, env={})
    case_file = tmp_path / "assistants" / "expense" / "tests" / "inputs.jsonl"
    assert results_folder(project, case_file) == (
        tmp_path / ".agentcli" / "runs" / "assistants-expense-tests-inputs"
    )
    outside = tmp_path.parent / "elsewhere" / "cases.yaml"
    assert results_folder(project, outside) == runs_folder(project) / "cases"


def test_latest_names_the_newest_results_relative_to_the_folder(tmp_path):
    (tmp_path / "agentcli.yml").write_text("runs_folder: runs\n", encoding="utf-8")
    project = load_project(tmp_path, env={})
    assert latest_results(project) is None
    results = tmp_path / "runs" / "a-cases" / "output-20260101000000.jsonl"
    results.parent.mkdir(parents=True)
    results.write_text("{}\n", encoding="utf-8")
    write_latest(project, results)
    assert (tmp_path / "runs" / LATEST).read_text() == "a-cases/output-20260101000000.jsonl\n"
    assert latest_results(project) == results
    assert [p.name for p in (tmp_path / "runs").iterdir() if p.name.startswith(".")] == []
    results.unlink()
    assert latest_results(project) is None  # a pointer to nothing points nowhere

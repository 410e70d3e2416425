"""``-o`` through folders that do not exist yet (``./x/../cases.jsonl``) is checked like any
other path: the kernel cannot ``stat`` it before ``x`` exists, so the check works out where
the write would land. An output that is an input is refused (exit 2, even with --force), the
input untouched and no folder created; so is an existing file that is not a report.

Every command that writes ``-o`` is run as a real process: eval (a run, a dry run, --ctx),
merge, report, diff and extract."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.faults.harness import agent

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A folder with the probe assistant, a case file, a ctx file and two results files."""
    shutil.copytree(ROOT / "fixtures" / "assistants" / "probe", tmp_path / "assistants" / "probe")
    case = {"id": "a", "input": "hello", "assert": {"type": "contains", "value": "Hello"}}
    (tmp_path / "cases.jsonl").write_text(json.dumps(case) + "\n", encoding="utf-8")
    (tmp_path / "ctx.json").write_text('{"locale": "en-us"}', encoding="utf-8")
    first = agent(tmp_path, "eval", "probe", "@cases.jsonl", "-o", "res.jsonl")
    assert first.returncode == 0, first.stderr
    shutil.copy(tmp_path / "res.jsonl", tmp_path / "res2.jsonl")
    agent(tmp_path, "report", "res.jsonl", "-o", "rep.json").check_returncode()
    return tmp_path


def contents(folder: Path) -> dict[str, bytes]:
    """Every file of ``folder`` (recursively, by relative path) and its bytes."""
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and "home" not in path.relative_to(folder).parts
    }


def assert_refused(run: subprocess.CompletedProcess[str], *words: str) -> None:
    """Exit 2 with a clear ``error:`` naming ``words``, no traceback."""
    assert run.returncode == 2, run.stdout[-2000:] + run.stderr[-2000:]
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr, run.stderr
    assert run.stderr.startswith("error: "), run.stderr
    for word in words:
        assert word in run.stderr, run.stderr


# Each command, its output through the missing folder ``x``, and the input that output is.
INPUT_AS_OUTPUT = {
    "eval": ["eval", "probe", "@cases.jsonl", "-o", "./x/../cases.jsonl"],
    "eval-dry-run": ["eval", "probe", "@cases.jsonl", "--dry-run", "-o", "./x/../cases.jsonl"],
    "eval-ctx": ["eval", "probe", "@cases.jsonl", "--ctx", "ctx.json", "-o", "./x/../ctx.json"],
    "eval-deeper": ["eval", "probe", "@cases.jsonl", "-o", "x/y/../../cases.jsonl"],
    "merge": ["merge", "res.jsonl", "res2.jsonl", "-o", "./x/../res.jsonl", "--allow-duplicates"],
    "report": ["report", "res.jsonl", "-o", "./x/../res.jsonl"],
    "diff": ["diff", "rep.json", "res2.jsonl", "-o", "./x/../rep.json"],
}


@pytest.mark.parametrize("args", INPUT_AS_OUTPUT.values(), ids=INPUT_AS_OUTPUT.keys())
def test_an_input_named_through_a_missing_folder_is_refused(project: Path, args: list[str]) -> None:
    before = contents(project)
    run = agent(project, *args)
    assert_refused(run, "is the input file", "choose another output path")
    assert contents(project) == before  # the input untouched, nothing written beside it
    assert not (project / "x").exists()  # and no folder created
    forced = agent(project, *args, "--force")  # --force replaces a file, never an input
    assert_refused(forced, "is the input file")
    assert contents(project) == before and not (project / "x").exists()


def test_a_missing_folder_after_a_symlink_lands_where_the_link_points(project: Path) -> None:
    # link -> deep/inner: link/x/../../cases.jsonl is deep/cases.jsonl (by the link), which
    # undoing every ".." by name alone would take for ./cases.jsonl.
    (project / "deep" / "inner").mkdir(parents=True)
    shutil.move(project / "cases.jsonl", project / "deep" / "cases.jsonl")
    (project / "link").symlink_to(project / "deep" / "inner")
    before = contents(project)
    run = agent(project, "eval", "probe", "@deep/cases.jsonl", "-o", "link/x/../../cases.jsonl")
    assert_refused(run, "is the input file")
    assert contents(project) == before
    assert not (project / "deep" / "inner" / "x").exists()


def test_a_file_not_ours_through_a_missing_folder_needs_force(project: Path) -> None:
    notes = project / "notes.md"
    notes.write_text("# my notes\n", encoding="utf-8")
    run = agent(project, "eval", "probe", "@cases.jsonl", "-o", "./x/../notes.md")
    assert_refused(run, "not a results file", "--force")
    assert notes.read_text(encoding="utf-8") == "# my notes\n"
    assert not (project / "x").exists()


def test_no_folder_is_created_until_every_target_passed(project: Path) -> None:
    # r.html is fine; the results streamed beside it (r.html.jsonl) would replace notes.
    (project / "r.html.jsonl").write_text("my notes\n", encoding="utf-8")
    run = agent(project, "eval", "probe", "@cases.jsonl", "-o", "./x/../r.html")
    assert_refused(run, "r.html.jsonl", "not a results file")
    assert (project / "r.html.jsonl").read_text(encoding="utf-8") == "my notes\n"
    assert not (project / "x").exists() and not (project / "r.html").exists()


def test_a_new_output_through_a_missing_folder_is_written(project: Path) -> None:
    run = agent(project, "eval", "probe", "@cases.jsonl", "-o", "./x/../new.jsonl")
    assert run.returncode == 0, run.stderr
    assert '"type":"summary"' in (project / "new.jsonl").read_text(encoding="utf-8")


@pytest.mark.parametrize("folder", [".", "./x/.."])
def test_extract_never_writes_its_index_over_the_results_file(project: Path, folder: str) -> None:
    # A results file named index.md, extracted into its own folder: the index is it.
    os.replace(project / "res.jsonl", project / "index.md")
    before = contents(project)
    run = agent(project, "extract", "index.md", "-o", folder)
    assert_refused(run, "index.md", "is the results file")
    assert contents(project) == before
    assert not (project / "x").exists()


@pytest.mark.parametrize("target", [".", "", "./", ".."])
@pytest.mark.parametrize(
    "command",
    [
        ["eval", "probe", "@cases.jsonl", "-o"],
        ["eval", "probe", "@cases.jsonl", "--dry-run", "-o"],
        ["report", "res.jsonl", "-o"],
        ["merge", "res.jsonl", "-o"],
    ],
    ids=["eval", "eval-dry-run", "report", "merge"],
)
def test_an_output_that_is_a_folder_with_no_name_is_refused(project, command, target):
    # "." (and "", which is "." as a path) has no name to put a temporary file beside
    before = contents(project)
    run = agent(project, *command, target)
    assert_refused(run, "it is a folder", "name a file")
    assert contents(project) == before

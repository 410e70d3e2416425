"""Suites: globs to case files, results and tool folders left out."""

from __future__ import annotations

import pytest

from agentcli.errors import ConfigError
from agentcli.project import Suite
from agentcli.project.suites import expand_suite


def touch(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{}\n", encoding="utf-8")
    return path


def test_globs_expand_in_order_each_file_once(tmp_path):
    b = touch(tmp_path / "t" / "b.jsonl")
    a = touch(tmp_path / "t" / "a.jsonl")
    deep = touch(tmp_path / "t" / "x" / "y" / "c.yaml")
    touch(tmp_path / "t" / "notes.txt")
    suite = Suite("all", ("t/b.jsonl", "t/**/*.jsonl", "t/**/*.yaml"), "agentcli.yml:3")
    assert expand_suite(suite, tmp_path) == [b, a, deep]


def test_results_and_state_folders_are_not_cases(tmp_path):
    case = touch(tmp_path / "t" / "cases.jsonl")
    touch(tmp_path / "t" / "output-20260101000000.jsonl")
    touch(tmp_path / ".agentcli" / "runs" / "t-cases" / "output-20260101000000.jsonl")
    touch(tmp_path / ".agentcli" / "runs" / "x.jsonl")
    assert expand_suite(Suite("all", ("**/*.jsonl",), "f:1"), tmp_path) == [case]


def test_a_glob_matching_nothing_names_the_suite_line(tmp_path):
    suite = Suite("smoke", ("tests/*.jsonl",), "/p/agentcli.yml:4")
    with pytest.raises(ConfigError) as raised:
        expand_suite(suite, tmp_path)
    assert raised.value.message.startswith(
        "/p/agentcli.yml:4: suite 'smoke': 'tests/*.jsonl' matches no case file"
    )


def test_the_project_config_is_not_a_case_file(tmp_path):
    touch(tmp_path / "agentcli.yml")
    case = touch(tmp_path / "smoke.yml")
    assert expand_suite(Suite("y", ("*.yml",), "f:1"), tmp_path) == [case]


@pytest.mark.parametrize("pattern", ["../*/cases.jsonl", "t/../../x.jsonl", "/etc/*.conf"])
def test_a_glob_reaching_out_of_the_project_is_refused(tmp_path, pattern):
    touch(tmp_path / "t" / "cases.jsonl")
    with pytest.raises(ConfigError) as raised:
        expand_suite(Suite("out", (pattern,), "/p/agentcli.yml:2"), tmp_path / "t")
    assert "must be relative to the project root" in raised.value.message

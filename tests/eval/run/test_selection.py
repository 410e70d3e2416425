"""Selection: --run, --tag (any of), --exclude-tag and the project's excluded tags, ANDed."""

from __future__ import annotations

import pytest

from agentcli.errors import ConfigError
from agentcli.eval.cases.load import CaseInfo
from agentcli.eval.run.selection import Selection
from agentcli.patterns import compile_pattern


def info(case_id: str, *tags: str) -> CaseInfo:
    return CaseInfo(
        id=case_id, skip=False, connector=None, dynamic=False, simulator=None, tags=tags
    )


CASES = [info("a1", "smoke"), info("a2", "smoke", "slow"), info("b1", "db"), info("b2")]


def kept(selection: Selection) -> list[str]:
    return [case.id for case in CASES if selection.keeps(case)]


def test_tags_are_any_of():
    assert kept(Selection.of(None, None, ["smoke", "db"], [], [])) == ["a1", "a2", "b1"]


def test_exclusions_and_the_run_pattern_and_with_tags():
    pattern = compile_pattern("^a", label="--run pattern")
    selection = Selection.of(pattern, "^a", ["smoke"], ["slow"], [])
    assert kept(selection) == ["a1"]
    assert selection.describe() == "tag smoke, not tag slow, --run ^a"


def test_the_projects_excluded_tags_apply_unless_a_tag_names_them():
    assert kept(Selection.of(None, None, [], [], ["slow"])) == ["a1", "b1", "b2"]
    assert kept(Selection.of(None, None, ["slow"], [], ["slow"])) == ["a2"]
    assert kept(Selection.of(None, None, ["db"], [], ["slow"])) == ["b1"]


def test_no_filters_keep_everything_and_say_nothing():
    selection = Selection.of(None, None, [], [], [])
    assert not selection.by_tags and kept(selection) == ["a1", "a2", "b1", "b2"]
    assert selection.describe() == ""


def test_a_tag_both_wanted_and_excluded_is_bad_input():
    with pytest.raises(ConfigError, match=r"^--tag slow and --exclude-tag slow"):
        Selection.of(None, None, ["slow", "x"], ["slow"], [])

"""parse_case on one object: checkpoint dependencies (graphlib finds the cycles)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentcli.errors import CaseFileError
from agentcli.eval.cases.parse import parse_case


def problems(checkpoints: list[dict[str, Any]], tmp_path: Path) -> list[str]:
    """The problems parse_case reports for a dynamic case with these checkpoints."""
    obj = {"id": "dyn", "simulator": {"use": "sim"}, "checkpoints": checkpoints}
    with pytest.raises(CaseFileError) as caught:
        parse_case(obj, source_file=tmp_path / "cases.jsonl", line=7, project_root=tmp_path)
    return [p.split(": ", 1)[1] for p in caught.value.problems]


def point(name: str, *after: str) -> dict[str, Any]:
    """A checkpoint ``name`` waiting for ``after``."""
    return {"id": name, "after": list(after), "assert": {"type": "contains", "value": name}}


def test_a_cycle_is_named_in_the_order_checkpoints_wait(tmp_path: Path) -> None:
    # a waits for b, b for c, c for a; d (outside the cycle) waits for a.
    found = problems([point("a", "b"), point("b", "c"), point("c", "a"), point("d", "a")], tmp_path)
    assert found == ["checkpoints: dependency cycle a -> b -> c -> a"]


def test_a_cycle_after_a_chain_is_named_from_where_it_starts(tmp_path: Path) -> None:
    found = problems([point("x"), point("y", "x", "z"), point("z", "y")], tmp_path)
    assert found == ["checkpoints: dependency cycle y -> z -> y"]


def test_dependencies_without_a_cycle_parse(tmp_path: Path) -> None:
    obj = {
        "id": "dyn",
        "simulator": {"use": "sim"},
        "checkpoints": [point("c", "a", "b"), point("b", "a"), point("a")],
    }
    case = parse_case(obj, source_file=tmp_path / "c.jsonl", line=1, project_root=tmp_path)
    assert [(c.id, c.after) for c in case.checkpoints] == [
        ("c", ["a", "b"]),
        ("b", ["a"]),
        ("a", []),
    ]


def test_tags_may_be_one_string_or_a_list_and_repeat_only_once(tmp_path: Path) -> None:
    source = tmp_path / "cases.jsonl"
    one = parse_case(
        {"id": "a", "input": "x", "tags": "smoke"},
        source_file=source,
        line=1,
        project_root=tmp_path,
    )
    many = parse_case(
        {"id": "b", "input": "x", "tags": ["slow", "db", "slow"]},
        source_file=source,
        line=2,
        project_root=tmp_path,
    )
    assert (one.tags, many.tags) == (["smoke"], ["slow", "db"])
    assert many.to_dict()["tags"] == ["slow", "db"]
    assert (
        "tags"
        not in parse_case(
            {"id": "c", "input": "x"}, source_file=source, line=3, project_root=tmp_path
        ).to_dict()
    )


@pytest.mark.parametrize("tags", [3, ["ok", 4], ["two words"], "a,b"])
def test_a_tag_that_is_not_one_word_of_text_is_a_problem_with_its_line(
    tmp_path: Path, tags: Any
) -> None:
    with pytest.raises(CaseFileError) as caught:
        parse_case(
            {"id": "a", "tags": tags},
            source_file=tmp_path / "c.jsonl",
            line=4,
            project_root=tmp_path,
        )
    (problem,) = caught.value.problems
    assert problem.startswith("c.jsonl:4: ") or ":4: " in problem
    assert "tags" in problem

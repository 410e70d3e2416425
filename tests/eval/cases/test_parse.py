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

"""The results format stays byte-compatible: files written by the release before the typed
result model (``data/``) are read and written back unchanged, byte for byte, through the
path ``agent report`` and ``--resume`` take (the reader, the typed values, the writers)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.eval.reports import read_results, writer_for
from agentcli.eval.results.model import CaseResult, RunHeader, RunSummary

DATA = Path(__file__).with_name("data")
FILES = sorted(p for p in DATA.iterdir() if p.suffix in (".jsonl", ".json"))


def test_the_data_covers_every_kind_of_result() -> None:
    text = "".join(path.read_text(encoding="utf-8") for path in FILES)
    for key in ('"turns"', '"checkpoints"', '"agent_validation"', '"stability"', '"run"',
                '"tool_calls"', '"logs"', '"expected"', '"runs_per_case"', '"reasoning"'):  # fmt: skip
        assert key in text, key
    assert {path.suffix for path in FILES} == {".jsonl", ".json"}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_a_results_file_of_the_release_is_written_back_byte_for_byte(
    path: Path, tmp_path: Path
) -> None:
    loaded = read_results(path)
    assert loaded.warnings == []
    # Every record was reproduced by its typed value, none kept as read.
    assert all(result.source is None for result in loaded.results)
    assert loaded.header.source is None and loaded.summary is not None
    assert loaded.summary.source is None
    out = tmp_path / path.name
    writer = writer_for(out)
    writer.open(loaded.header, loaded.results)
    writer.close(loaded.summary, loaded.stability_results or None)
    assert out.read_bytes() == path.read_bytes()


@pytest.mark.parametrize("path", [p for p in FILES if p.suffix == ".jsonl"], ids=lambda p: p.name)
def test_typed_values_rebuilt_from_the_file_write_the_same_lines(path: Path) -> None:
    """Each line, read into its typed value and written by the codec, is the same text."""
    lines = path.read_text(encoding="utf-8").splitlines()
    for line in lines:
        record = json.loads(line)
        kind = record.pop("type")
        if kind == "result":
            value = CaseResult.from_dict(record)
        elif kind == "header":
            value = RunHeader.from_dict(record)
        elif kind == "summary":
            value = RunSummary.from_dict(record)
        else:
            continue
        assert value.source is None
        again = json.dumps(
            {"type": kind, **value.to_dict()}, ensure_ascii=False, separators=(",", ":")
        )
        assert again == line

"""Opening case files as a CaseSet: a long .jsonl file streamed, others kept whole."""

from __future__ import annotations

import json

from agentcli.eval.cases import load
from agentcli.eval.cases.load import CaseSet, open_cases


def test_open_cases_streams_long_jsonl_and_narrows_by_id(tmp_path, monkeypatch):
    monkeypatch.setattr(load, "KEEP_PARSED", 4)
    path = tmp_path / "cases.jsonl"
    path.write_text(
        "".join(json.dumps({"id": f"c{i}", "input": "hi", "skip": i == 2}) + "\n" for i in range(5))
    )
    cases = open_cases(path, project_root=tmp_path)
    assert isinstance(cases, CaseSet) and len(cases) == 5
    assert cases._cases is None  # parsed again while iterating, never held as objects
    assert [c.id for c in cases] == ["c0", "c1", "c2", "c3", "c4"]
    assert [i.skip for i in cases.infos] == [False, False, True, False, False]
    odd = cases.where(lambda case_id: int(case_id[1:]) % 2 == 1)
    assert len(odd) == 2 and [c.id for c in odd] == ["c1", "c3"]


def test_open_cases_keeps_a_short_jsonl_file_parsed(tmp_path, monkeypatch):
    monkeypatch.setattr(load, "KEEP_PARSED", 5)
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps({"id": f"c{i}", "input": "hi"}) + "\n" for i in range(5)))
    cases = open_cases(path, project_root=tmp_path)
    assert cases._cases is not None and [c.id for c in cases] == ["c0", "c1", "c2", "c3", "c4"]
    path.write_text("")  # not read again: the run uses the cases validation parsed
    assert [c.id for c in cases.where(lambda case_id: case_id != "c1")] == ["c0", "c2", "c3", "c4"]


def test_open_cases_keeps_whole_file_formats(tmp_path):
    path = tmp_path / "cases.json"
    path.write_text(json.dumps([{"id": "a", "input": "hi"}, {"id": "b", "input": "yo"}]))
    cases = open_cases(path, project_root=tmp_path)
    assert [c.id for c in cases] == ["a", "b"] and cases._cases is not None


def test_a_case_info_names_the_data_models_its_state_before_seeds(tmp_path):
    path = tmp_path / "cases.jsonl"
    case = {"id": "a", "input": "hi", "state": {"before": {"models": {"order": [], "user": []}}}}
    path.write_text(json.dumps(case) + '\n{"id": "b", "input": "hi"}\n', encoding="utf-8")
    infos = open_cases(path, project_root=tmp_path).infos
    assert [info.state_models for info in infos] == [("order", "user"), ()]

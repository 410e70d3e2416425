"""Searching a run: texts, not key names; case-folded; the byte pre-filter never hides a
match."""

from __future__ import annotations

from agentcli.cli.viewer.runfile import index_file
from tests.cli.viewer.runs import HOSTILE, forecast, write_run


def test_search_reads_texts_not_key_names_case_insensitively(tmp_path):
    path = write_run(
        tmp_path / "s.jsonl",
        [
            forecast("paris"),
            forecast("rome", status="failed", output="Il pleut à Rome"),
            forecast(HOSTILE, status="error", error="Connection RESET by peer"),
        ],
    )
    run = index_file(path)
    assert run.matching("status") == frozenset()  # a key of every line, in no text
    assert run.matching("reset by") == {2}  # the error
    assert run.matching("À ROME") == {1}  # not ASCII: decoded and case-folded
    assert run.matching("contain 'sunny'") == {1, 2}  # failed assertion messages
    assert run.matching("<script>") == {2}  # the id
    assert run.matching("get_forecast") == {0, 1, 2}  # an assertion's message
    assert run.matching("paris") == {0, 1, 2}  # every input asks about Paris


def test_search_finds_what_case_folds_to_the_needle(tmp_path):
    path = tmp_path / "fold.jsonl"
    path.write_text(
        '{"type":"header"}\n'
        '{"type":"result","id":"a","status":"passed","output":"Straße"}\n'
        '{"type":"result","id":"b","status":"passed","output":"Stra\\u00dfe"}\n'
        '{"type":"result","id":"c","status":"passed","output":"Strasse"}\n'
        '{"type":"result","id":"d","status":"passed","output":"Strand"}\n',
        encoding="utf-8",
    )
    assert index_file(path).matching("strasse") == {0, 1, 2}  # ß case-folds to ss

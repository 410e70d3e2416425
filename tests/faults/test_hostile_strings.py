"""Issue 13, item 9: every text path survives any JSON string.

Lone surrogates (valid JSON ``"\\ud800"``), NUL, terminal escapes, U+2028, a bidi override,
characters XML forbids and a 1 MB string, in a case's id, input, expected value, metadata
and (echoed) output, run through the real CLI: ``agent eval`` to every format (the console
and the ``--json`` stream included), then ``agent report``, ``extract`` and ``merge`` on the
results. No traceback, every result written and read back the same.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from agentcli.eval.reports import read_results

from .harness import agent

HOSTILE = {
    "high-surrogate": "a\ud800b",
    "low-surrogate": "\udfffz",
    "reversed-pair": "\ude00\ud83d",
    "nul": "nul\x00byte",
    "escape-sequence": "\x1b[2J\x1b]0;title\x07\x1b[31mred",
    "line-separator": "one\u2028two\u2029three",
    "rtl-override": "\u202eevil\u202c.txt",
    "xml-forbidden": "\x01\x08\x0b\x0c\x1f\ufffe\uffff",
    "megabyte": "m" * 1_000_000,
}
FORMATS = (".jsonl", ".json", ".md", ".html", ".xml")


def hostile_cases(path: Path, *, megabyte: bool = False) -> list[str]:
    """One case per hostile string, in id, input, expected and metadata; their ids. The
    1 MB string (seconds through every writer) only when ``megabyte``."""
    lines, ids = [], []
    for name, text in HOSTILE.items():
        if name == "megabyte" and not megabyte:
            continue
        case_id = f"{name}-{text[:64]}"
        ids.append(case_id)
        case = {
            "id": case_id,
            "input": f"say {text}",
            "expected": f"echo: say {text}",
            "metadata": {text[:64]: text, "nested": [text, {"k": text}]},
        }
        lines.append(json.dumps(case))  # ensure_ascii: lone surrogates as JSON escapes
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return ids


def clean(run, *, code: int = 0) -> None:
    """The command ended as it should: no traceback, no internal error."""
    output = run.stdout + run.stderr
    assert "Traceback" not in output and "internal error" not in output, output[-3000:]
    assert run.returncode == code, output[-3000:]


@pytest.mark.parametrize("suffix", FORMATS)
def test_eval_to_every_format_survives_hostile_strings(project: Path, suffix: str) -> None:
    ids = hostile_cases(project / "cases.jsonl")
    run = agent(project, "eval", "probe", "@cases.jsonl", "-o", f"r{suffix}", "-v")
    clean(run)
    assert run.stdout.count("PASSED (") == len(ids), run.stdout[-3000:]
    streamed = project / ("r.jsonl" if suffix == ".jsonl" else f"r{suffix}.jsonl")
    check_results(streamed, ids)
    check_document(project / f"r{suffix}", ids)


def test_report_extract_and_merge_survive_hostile_strings(project: Path) -> None:
    ids = hostile_cases(project / "cases.jsonl")
    clean(agent(project, "eval", "probe", "@cases.jsonl", "-o", "r.jsonl"))
    check_results(project / "r.jsonl", ids)
    for suffix in FORMATS:
        clean(agent(project, "report", "r.jsonl", "-o", f"again{suffix}"))
        check_document(project / f"again{suffix}", ids)
    clean(agent(project, "extract", "r.jsonl", "-o", "cases-md"))
    assert len(list((project / "cases-md").glob("*.md"))) == len(ids) + 1  # and index.md
    clean(agent(project, "extract", "again.json", "-o", "cases-json", "--format", "json"))
    files = (project / "cases-json").glob("*.json")
    assert sorted(json.loads(f.read_text(encoding="utf-8"))["id"] for f in files) == sorted(ids)
    clean(agent(project, "merge", "r.jsonl", "again.jsonl", "-o", "m.html", "--allow-duplicates"))
    clean(agent(project, "merge", "r.jsonl", "-o", "merged.jsonl"))
    check_results(project / "merged.jsonl", ids)


def test_a_megabyte_string_through_eval_report_and_extract(project: Path) -> None:
    # Fewer steps than above: redacting 1 MB strings takes a while in every command.
    ids = hostile_cases(project / "cases.jsonl", megabyte=True)
    clean(agent(project, "eval", "probe", "@cases.jsonl", "-o", "r.html"))
    check_results(project / "r.html.jsonl", ids)
    check_document(project / "r.html", ids)
    clean(agent(project, "report", "r.html.jsonl", "-o", "r.xml"))
    check_document(project / "r.xml", ids)
    clean(agent(project, "extract", "r.html.jsonl", "-o", "cases-md"))
    assert len(list((project / "cases-md").glob("*.md"))) == len(ids) + 1


def check_results(path: Path, ids: list[str]) -> None:
    """The JSON Lines results hold every case, every string exactly as it was."""
    loaded = read_results(path)
    assert [r.id for r in loaded.results] == ids  # surrogates and NUL read back too
    texts = [text for name, text in HOSTILE.items() if any(i.startswith(name) for i in ids)]
    for result, text in zip(loaded.results, texts, strict=True):
        assert result.output == f"echo: say {text}"
        assert result.metadata["nested"] == [text, {"k": text}]


def check_document(path: Path, ids: list[str]) -> None:
    """A report of any format is whole: readable back (JSON) or well-formed (XML)."""
    text = path.read_text(encoding="utf-8")  # valid UTF-8: no surrogate reached the disk raw
    if path.suffix in (".jsonl", ".json"):
        assert [r.id for r in read_results(path).results] == ids
    elif path.suffix == ".xml":
        cases = ET.fromstring(text.encode("utf-8")).iter("testcase")
        assert len(list(cases)) == len(ids)
    else:  # Markdown and HTML show every case's input
        assert text.count("say ") >= len(ids)


def test_the_json_event_stream_stays_json(project: Path) -> None:
    ids = hostile_cases(project / "cases.jsonl")
    run = agent(project, "eval", "probe", "@cases.jsonl", "-o", "r.jsonl", "--json")
    clean(run)
    # NDJSON lines end at "\n" only (U+2028 and friends are legal inside a JSON string)
    events = [json.loads(line) for line in run.stdout.split("\n") if line]
    assert [e["id"] for e in events if e["type"] == "test_result"] == ids
    assert len(read_results(project / "r.jsonl").results) == len(ids)

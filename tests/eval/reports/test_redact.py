"""Report writers redact every string of the typed values they are handed: results (their
tool calls, traces, turns, unknown fields and records kept as read), headers, summaries."""

from __future__ import annotations

import json
from pathlib import Path

from agentcli.eval.reports import writer_for
from agentcli.eval.reports._redact import redacted
from agentcli.eval.results.model import (
    CaseResult,
    RunHeader,
    RunSummary,
    ToolCall,
    Trace,
    Turn,
)
from agentcli.secrets import REDACTED

KEY = "sk-" + "A" * 24  # shaped like an API key


def typed_result() -> CaseResult:
    call = ToolCall(id="c1", tool="login", arguments={"token": KEY}, result=[KEY])
    return CaseResult(
        id="c",
        status="passed",
        output=f"the key is {KEY}",
        trace=Trace(completion=KEY, tool_calls=[call]),
        turns=[Turn(turn=1, input=KEY, tool_calls=[call])],
        extra={"note": KEY},
    )


def test_a_typed_result_is_copied_with_every_string_redacted() -> None:
    original = typed_result()
    clean = redacted(original)
    text = json.dumps(clean.to_dict())
    assert KEY not in text and REDACTED in text
    assert original.trace is not None and original.trace.completion == KEY  # not edited
    assert clean.trace is not None and clean.trace.tool_calls[0].arguments == {"token": REDACTED}
    read = CaseResult.from_dict({"id": "r", "status": "PASSED", "error": KEY})
    assert read.source is not None and KEY not in json.dumps(redacted(read).to_dict())


def test_no_secret_reaches_a_jsonl_file(tmp_path: Path) -> None:
    writer = writer_for(tmp_path / "out.jsonl")
    writer.open(RunHeader(environment={"user_id": KEY}, metadata={}))
    writer.add(typed_result())
    writer.close(RunSummary(total=1, passed=1, agent_id=KEY), [{"id": KEY}])
    text = (tmp_path / "out.jsonl").read_text(encoding="utf-8")
    assert KEY not in text and text.count(REDACTED) >= 6


def test_parts_without_a_secret_are_handed_back_not_copied() -> None:
    # Copy on change keeps redaction cheap per result; the parts it copies are the secret's.
    plain = CaseResult(id="c", status="passed", output="fine", turns=[Turn(turn=1, input="hi")])
    assert redacted(plain) is plain
    mixed = CaseResult(
        id="c", status="passed", output=f"the key is {KEY}", turns=[Turn(turn=1, input="hi")]
    )
    clean = redacted(mixed)
    assert clean is not mixed and clean.output == f"the key is {REDACTED}"
    assert mixed.output == f"the key is {KEY}"  # the original is not edited
    assert clean.turns is mixed.turns  # nothing to redact there
    assert redacted(("a", KEY)) == ("a", REDACTED)  # a tuple stays a tuple

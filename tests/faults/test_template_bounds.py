"""Issue 13, item 5 (first half): a scripted rule's template cannot build huge text.

``{{ user * 100000000 }}`` used to build 1.2 GB (or die of MemoryError) inside the model
call. In the bounded sandbox (agentcli/sandbox.py) it ends that case as ``error`` at once,
naming the rule file and rule; ordinary templates in the same run still work.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from .harness import agent, check_complete

RULES = """rules:
  - when: {user: "^say$"}
    say: "{{ user * 100000000 }}"
  - when: {user: "^call$"}
    call: {name: note, arguments: {text: "{{ user * 100000000 }}"}}
  - when: {user: "^loop$"}
    say: "{% for i in range(100000) %}{{ user * 200 }}{% endfor %}"
  - when: {user: "^ns$"}
    say: "{% set ns = namespace(s=user) %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}"
  - say: "{{ user | upper }} {{ user * 2 }} {{ '%03d' % 7 }} {{ [1, 2] | join('+') }}"
"""
LIMIT = "over the template limit of 16,000,000"


def test_huge_template_output_errors_the_case_and_ordinary_templates_still_work(tmp_path: Path):
    folder = tmp_path / "assistants" / "big"
    folder.mkdir(parents=True)
    (folder / "package.yao").write_text(json.dumps({"name": "big", "connector": "scripted"}))
    (folder / "scripted.yml").write_text(RULES, encoding="utf-8")
    cases = [{"id": word, "input": word} for word in ("say", "call", "loop", "ns")]
    cases.append(
        {"id": "ok", "input": "hi", "assert": {"type": "equals", "value": "HI hihi 007 1+2"}}
    )
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    started = time.monotonic()
    done = agent(tmp_path, "eval", "big", "@cases.jsonl", "-o", "out.jsonl", timeout=30)
    assert time.monotonic() - started < 15
    assert done.returncode == 1, done.stdout + done.stderr
    report = check_complete(tmp_path / "out.jsonl", 5).report
    results = {r.id: r.to_dict() for r in report.results}
    assert results["ok"]["status"] == "passed", results["ok"]
    for index, (case, action) in enumerate(
        [("say", "say"), ("call", "call"), ("loop", "say"), ("ns", "say")]
    ):
        result = results[case]
        assert result["status"] == "error", result
        assert f"scripted.yml: rules[{index}].{action}: template error: " in result["error"]
        assert LIMIT in result["error"], result["error"]
    assert "internal error" not in done.stdout + done.stderr
    assert "MemoryError" not in done.stdout + done.stderr

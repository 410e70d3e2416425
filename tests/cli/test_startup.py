"""Start-up stays light: `agent --help` and offline runs never import the heavy clients.

A regression guard for the performance work: importing litellm costs ~3 s, the openai SDK
~0.4 s, the mcp SDK ~0.5 s; none of them may creep into paths that do not use them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("litellm", "openai", "mcp", "jsonschema", "jinja2", "httpx", "httpx2", "prompt_toolkit")

PROBE = """
import json, sys
sys.argv = ["agent", *json.loads(sys.argv[1])]
from agentcli.cli.main import main
try:
    main()
except SystemExit:
    pass
sys.stdout = sys.__stdout__
print("\\nLOADED=" + json.dumps(sorted(m for m in {heavy} if m in sys.modules)))
"""


def loaded_after(args: list[str], cwd: Path) -> list[str]:
    code = PROBE.format(heavy=repr(HEAVY))
    completed = subprocess.run(
        [sys.executable, "-c", code, json.dumps(args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "AGENTCLI_HOME": str(cwd / "home")},
    )
    marker = completed.stdout.rsplit("LOADED=", 1)
    assert len(marker) == 2, completed.stdout + completed.stderr
    return json.loads(marker[1])


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["eval", "--help"], ["run", "--help"]])
def test_help_imports_nothing_heavy(args, tmp_path):
    assert loaded_after(args, tmp_path) == []


def test_an_offline_eval_imports_no_client(tmp_path):
    package = tmp_path / "assistants" / "bench"
    package.mkdir(parents=True)
    (package / "package.yao").write_text('{"name": "Bench", "connector": "echo"}')
    (tmp_path / "cases.jsonl").write_text(
        json.dumps({"id": "a", "input": "hello", "assert": {"type": "contains", "value": "hello"}})
        + "\n"
    )
    loaded = loaded_after(["eval", "bench", "@cases.jsonl", "-o", "out.jsonl"], tmp_path)
    assert not {"litellm", "openai", "mcp", "httpx", "httpx2", "jinja2"} & set(loaded)
    assert json.loads((tmp_path / "out.jsonl").read_text().splitlines()[-1])["passed"] == 1

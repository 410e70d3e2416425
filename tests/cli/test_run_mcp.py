"""`agent run -v` against a real MCP server: progress notifications are shown as the tool
reports them."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcli.cli.main import _register, app

_register()
LIBRARY = Path(__file__).resolve().parents[2] / "fixtures" / "library_server.py"
RULES = """rules:
  - when: {user: "count"}
    call: {name: count, arguments: {to: 2}}
  - when: {tool_result: count}
    say: "{{ result }}"
"""


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AGENT_ROOT", raising=False)
    monkeypatch.chdir(tmp_path)


def test_verbose_run_shows_mcp_progress(tmp_path: Path) -> None:
    package = tmp_path / "assistants" / "lib"
    (package / "mcps").mkdir(parents=True)
    (package / "package.yao").write_text('{"name": "Lib", "connector": "scripted:rules.yml"}')
    (package / "rules.yml").write_text(RULES)
    server = {"transport": "stdio", "command": sys.executable, "args": [str(LIBRARY)]}
    (package / "mcps" / "library.mcp.yao").write_text(json.dumps(server))
    args = ["run", "lib", "count please", "--root", str(tmp_path / "assistants")]
    verbose = CliRunner().invoke(app, [*args, "-v"], catch_exceptions=False)
    assert verbose.exit_code == 0, verbose.output
    assert verbose.stdout.strip() == "counted to 2"
    assert "… count (library) 1/2 counted 1\n" in verbose.stderr
    assert "… count (library) 2/2 counted 2\n" in verbose.stderr
    quiet = CliRunner().invoke(app, args, catch_exceptions=False)
    assert "counted 1" not in quiet.stderr  # progress is for -v only

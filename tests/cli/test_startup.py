"""Start-up stays light: `agent --help` and offline runs never import the heavy clients.

A regression guard for the performance work: importing litellm costs ~3 s, the openai SDK
~0.4 s, the mcp SDK ~0.5 s; none of them may creep into paths that do not use them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.imports import modules_after

ROOT = Path(__file__).resolve().parents[2]
HEAVY = (
    "litellm",
    "openai",
    "mcp",
    "jsonschema",
    "jinja2",
    "httpx",
    "httpx2",
    "aiohttp",  # the default transport of OpenAI-compatible calls: only when one is made
    "prompt_toolkit",
    "regex",  # user patterns only (agentcli/patterns.py)
    "pydantic",  # typer >= 0.29 imports it to parse every command line (see pyproject)
    "opentelemetry",  # --otel only
    "tiktoken",  # --estimate only
    "fsspec",  # agent merge of URLs only
    "sqlalchemy",  # data models only: a package without models opens no database
    "psycopg",
)


def loaded_after(args: list[str], cwd: Path) -> list[str]:
    """The heavy modules ``agent <args>`` imports."""
    return [name for name in modules_after(args, cwd, "") if name in HEAVY]


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["eval", "--help"], ["run", "--help"]])
def test_help_imports_nothing_heavy(args, tmp_path):
    assert loaded_after(args, tmp_path) == []


def bench_project(folder: Path, connector: str) -> None:
    """An assistant answering through ``connector`` and one case it passes."""
    package = folder / "assistants" / "bench"
    package.mkdir(parents=True)
    (package / "package.yao").write_text(json.dumps({"name": "Bench", "connector": connector}))
    (folder / "cases.jsonl").write_text(
        json.dumps({"id": "a", "input": "hello", "assert": {"type": "contains", "value": "hello"}})
        + "\n"
    )


def test_an_offline_eval_imports_no_client(tmp_path):
    bench_project(tmp_path, "echo")
    loaded = loaded_after(["eval", "bench", "@cases.jsonl", "-o", "out.jsonl"], tmp_path)
    heavy = {
        "litellm",
        "openai",
        "mcp",
        "httpx",
        "httpx2",
        "aiohttp",
        "jinja2",
        "pydantic",
        "regex",
        "opentelemetry",
        "tiktoken",
        "fsspec",
        "sqlalchemy",  # no data models in the package: no database, no SQLAlchemy
    }
    assert not heavy & set(loaded)
    assert json.loads((tmp_path / "out.jsonl").read_text().splitlines()[-1])["passed"] == 1


def test_an_openai_compatible_eval_imports_aiohttp_only(tmp_path, openai_server, no_proxies):
    bench_project(tmp_path, "loop")
    (tmp_path / "connectors.yml").write_text(
        f"loop: {{model: openai/echo, api_base: '{openai_server.base_url}', api_key: none}}\n"
    )
    loaded = loaded_after(["eval", "bench", "@cases.jsonl", "-o", "out.jsonl"], tmp_path)
    assert loaded == ["aiohttp"]  # the aiohttp transport: no httpx, openai SDK or pydantic
    assert json.loads((tmp_path / "out.jsonl").read_text().splitlines()[-1])["passed"] == 1

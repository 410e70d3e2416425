"""Every file loader, fed valid files damaged at random: only agentcli's own errors come out
(``AgentCliError`` subclasses with a message), never a bare exception."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from agentcli import datafiles
from agentcli.assistant.identity import load_context_file
from agentcli.assistant.jsonc import parse_jsonc
from agentcli.assistant.locales import load_locales, localize_package
from agentcli.assistant.mcps import load_tool_servers
from agentcli.assistant.package import _yaml_cache, load_package
from agentcli.assistant.prompts import load_presets, load_prompts
from agentcli.eval.cases.load import load_cases, open_cases
from agentcli.models.connectors import load_connectors_file, resolve_connector
from agentcli.secrets import _registered, refresh_secrets

from .mutate import (
    FUZZ,
    as_json,
    as_yaml,
    mutated,
    mutated_bytes,
    mutated_data,
    only_own_errors,
)

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = sorted(
    p
    for p in [
        *ROOT.glob("assistants/**/package.yao"),
        *ROOT.glob("fixtures/assistants/**/package.yao"),
    ]
    if "tests" not in p.relative_to(ROOT).parts[2:]
)


def texts(pattern: str) -> list[str]:
    """The repository's own files matching ``pattern``: real, valid seeds."""
    found = sorted({*ROOT.glob(f"assistants/{pattern}"), *ROOT.glob(f"fixtures/{pattern}")})
    return [p.read_text(encoding="utf-8") for p in found]


# --- case files -----------------------------------------------------------------------------

CASES = [
    {"id": "hello", "input": "hello", "assert": {"type": "contains", "value": "Hello"}},
    {
        "id": "add",
        "input": "add 2 3",
        "assert": [
            {"type": "tool_called", "value": {"name": "add", "arguments": {"a": 2}}},
            {"type": "tool_result", "value": {"tool": "add", "result": "regex:^5$"}},
            {"type": "regex", "value": "(?i)sum=\\d+", "negate": False, "message": "sum"},
        ],
    },
    {
        "id": "json",
        "input": [{"role": "user", "content": "json"}],
        "assert": {"type": "json_path", "path": "$.city", "value": ["Paris", "Rome"]},
    },
    {
        "id": "multimodal",
        "input": {
            "role": "user",
            "content": [{"type": "text", "text": "look"}, {"type": "image", "source": "file://img.png"}],
        },
        "expected": {"a": [1, 2.0]},
    },
    {
        "id": "dynamic",
        "input": "Submit",
        "simulator": {"use": "tests.simulator-agent", "options": {"metadata": {"goal": "g"}}},
        "checkpoints": [
            {"id": "a", "assert": {"type": "regex", "value": "(?i)type"}},
            {"id": "b", "after": ["a"], "required": False, "assert": {"type": "contains", "value": "x"}},
        ],
        "max_turns": 5,
    },
    {
        "id": "options",
        "input": "hi",
        "user": "u1",
        "team": "t1",
        "metadata": {"k": 1},
        "options": {"connector": "echo", "mode": "task", "metadata": {"m": 2}, "skip": {"history": True}},
        "timeout": "30s",
        "before": "env_test.Before",
        "after": "env_test.After",
        "skip": False,
    },
    {"id": "judge", "input": "hi", "assert": {"type": "agent", "use": "agents:tests.validator-agent", "value": "polite"}},
    {"id": "schema", "input": "hi", "assert": {"type": "is_json", "value": {"type": "object", "required": ["a"]}}},
]  # fmt: skip
CASE_TEXTS = {
    ".jsonl": ["// cases\n" + "\n".join(json.dumps(c) for c in CASES) + "\n"],
    ".json": [json.dumps(CASES, indent=1), json.dumps(CASES[0])],
    ".yaml": [as_yaml(CASES)],
}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A project folder with the image the multimodal seed refers to."""
    (tmp_path / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    return tmp_path


def load_both(path: Path, root: Path) -> None:
    """Both case readers, the eager one and the streaming one (iterated to the end)."""
    only_own_errors(lambda: load_cases(path, project_root=root))
    only_own_errors(lambda: list(open_cases(path, project_root=root)))


@pytest.mark.parametrize("suffix", sorted(CASE_TEXTS))
@FUZZ
@given(data=st.data())
def test_case_files_damaged_text(folder: Path, suffix: str, data: st.DataObject) -> None:
    path = folder / f"cases{suffix}"
    path.write_bytes(data.draw(mutated_bytes(CASE_TEXTS[suffix])))
    load_both(path, folder)


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".yaml"])
@FUZZ
@given(data=st.data())
def test_case_files_swapped_types(folder: Path, suffix: str, data: st.DataObject) -> None:
    cases = data.draw(st.lists(mutated_data(CASES), min_size=1, max_size=3))
    path = folder / f"cases{suffix}"
    if suffix == ".jsonl":
        path.write_text("\n".join(as_json(c) for c in cases), encoding="utf-8")
    elif suffix == ".json":
        path.write_text(as_json(cases), encoding="utf-8")
    else:
        path.write_text(as_yaml(cases), encoding="utf-8")
    load_both(path, folder)


def _anchored(depth: int, fan: int) -> str:
    """A YAML case whose metadata nests ``depth`` anchors, each aliasing the last ``fan`` times."""
    lines = ["- id: a", "  input: hi", "  metadata:", "    a0: &a0 [x]"]
    lines += [f"    a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * fan) + "]" for i in range(1, depth)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("libyaml", [True, False], ids=["libyaml", "python"])
@settings(FUZZ, max_examples=25)
@given(
    depth=st.integers(1, 9),
    fan=st.integers(1, 9),
    nesting=st.integers(0, 1500),
    opener=st.sampled_from(["[", "{a: ", "- "]),
)
def test_case_files_built_to_explode(
    folder: Path, monkeypatch, libyaml: bool, depth: int, fan: int, nesting: int, opener: str
) -> None:
    """Alias fan-out and nesting of any size end as a case or a case-file error, never a
    RecursionError, a hang or a document writers cannot serialise."""
    monkeypatch.setattr(datafiles, "USE_LIBYAML", libyaml)
    path = folder / "cases.yaml"
    path.write_text(_anchored(depth, fan), encoding="utf-8")
    for case in only_own_errors(lambda: load_cases(path, project_root=folder)) or []:
        assert len(json.dumps(case.metadata)) < 50_000_000
    closer = {"[": "]", "{a: ": "}", "- ": ""}[opener]
    path.write_text("- id: a\n  input: hi\n  metadata: {x: " + opener * nesting + "1"
                    + closer * nesting + "}\n", encoding="utf-8")  # fmt: skip
    load_both(path, folder)
    for suffix in (".json", ".jsonl"):
        deep = "[" * nesting + "]" * nesting
        (folder / f"cases{suffix}").write_text(
            json.dumps({"id": "a", "input": "hi"})[:-1] + f', "metadata": {{"x": {deep}}}}}',
            encoding="utf-8",
        )
        load_both(folder / f"cases{suffix}", folder)


# --- package.yao and JSONC ------------------------------------------------------------------

PACKAGE_TEXTS = [p.read_text(encoding="utf-8") for p in PACKAGES]
JSONC_TEXTS = PACKAGE_TEXTS + texts("**/*.mcp.yao") + texts("**/*.in.yao")


@FUZZ
@given(text=mutated(JSONC_TEXTS))
def test_jsonc_damaged(text: str) -> None:
    only_own_errors(lambda: parse_jsonc(text, path="x.yao"))


@FUZZ
@given(data=st.data())
def test_package_yao_damaged(tmp_path: Path, data: st.DataObject) -> None:
    folder = tmp_path / "assistants" / "pkg"
    folder.mkdir(parents=True, exist_ok=True)
    if data.draw(st.booleans()):
        raw = data.draw(mutated_bytes(PACKAGE_TEXTS))
    else:
        seeds = [parse_jsonc(t) for t in PACKAGE_TEXTS]
        raw = as_json(data.draw(mutated_data(seeds))).encode()
    (folder / "package.yao").write_bytes(raw)
    package = only_own_errors(
        lambda: load_package(folder, root=tmp_path / "assistants", env={"HOME": "/h"})
    )
    if package is not None:
        only_own_errors(lambda: localize_package(package, "zh-cn"))


# --- package parts: prompts, presets, locales, tool servers ---------------------------------


@pytest.fixture
def package(tmp_path: Path):
    """A minimal valid package whose parts each example overwrites."""
    folder = tmp_path / "pkg"
    (folder / "assets").mkdir(parents=True)
    (folder / "assets" / "rules.md").write_text("Be brief.")
    (folder / "package.yao").write_text(
        '{"name": "{{ name }}", "description": "{{ chat.title }}", "connector": "echo",'
        ' "placeholder": {"title": "{{ chat.title }}", "prompts": ["{{ chat.prompts.0 }}"]}}'
    )
    return load_package(folder, root=tmp_path)


def fresh_yaml() -> None:
    """Forget parsed YAML: files rewritten within one clock tick keep their mtime, and a
    same-size rewrite would otherwise be served from the loader's cache."""
    _yaml_cache.clear()


PROMPT_TEXTS = [
    *texts("**/prompts.yml"),
    *texts("**/prompts/*.yml"),
    "- role: system\n  content: '@assets/rules.md and $CTX.LOCALE on $SYS.DATE'\n- role: user\n  content: hi\n  name: u\n",
]


@FUZZ
@given(data=st.data())
def test_prompts_and_presets_damaged(package, data: st.DataObject) -> None:
    fresh_yaml()
    if data.draw(st.booleans()):
        raw = data.draw(mutated_bytes(PROMPT_TEXTS))
    else:
        seeds = [yaml.safe_load(t) for t in PROMPT_TEXTS]
        raw = as_yaml(data.draw(mutated_data(seeds))).encode()
    (package.path / "prompts.yml").write_bytes(raw)
    presets = package.path / "prompts" / "chat"
    presets.mkdir(parents=True, exist_ok=True)
    (presets / "friendly.yml").write_bytes(raw)
    only_own_errors(lambda: load_prompts(package))
    only_own_errors(lambda: load_presets(package))


LOCALE_TEXTS = texts("**/locales/*.yml")
TEMPLATES = [
    "{{ name }}",
    "{{ chat.title }} - {{ chat.prompts.0 }} / {{ missing.key }}",
    "Hello {{name}}! {% raw %}{{ x }}{% endraw %}",
]


@FUZZ
@given(data=st.data())
def test_locales_and_rendering_damaged(package, data: st.DataObject) -> None:
    fresh_yaml()
    folder = package.path / "locales"
    shutil.rmtree(folder, ignore_errors=True)  # only this example's locale file
    folder.mkdir()
    if data.draw(st.booleans()):
        raw = data.draw(mutated_bytes(LOCALE_TEXTS))
    else:
        seeds = [yaml.safe_load(t) for t in LOCALE_TEXTS]
        raw = as_yaml(data.draw(mutated_data(seeds))).encode()
    name = data.draw(st.sampled_from(["en-us.yml", "zh-CN.yml", "en.yaml", "x_y.yml"]))
    (folder / name).write_bytes(raw)
    locales = only_own_errors(lambda: load_locales(package))
    if locales is not None:
        template = data.draw(mutated(TEMPLATES))
        locale = data.draw(st.sampled_from(["en-us", "zh-cn", "ZH_cn", "", None, "x-y-z"]))
        only_own_errors(lambda: locales.render(template, locale, key="name"))
        only_own_errors(lambda: localize_package(package, locale, locales=locales))


MCP_TEXTS = [
    *texts("**/*.mcp.yao"),
    '{"transport": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"A": "$ENV.TOKEN"}, "timeout": 5}',
    '{"transport": "sse", "url": "http://localhost:9/sse"}',
    '{"transport": "stdio", "command": "python", "args": ["mcps/server.py"], "env": {"A": "b"}}',
]
SCHEMA_TEXTS = texts("**/*.in.yao")


@FUZZ
@given(data=st.data())
def test_tool_server_definitions_damaged(package, data: st.DataObject) -> None:
    folder = package.path / "mcps"
    schemes = folder / "mapping" / "tools" / "schemes"
    schemes.mkdir(parents=True, exist_ok=True)
    (folder / "tools.mcp.yao").write_bytes(data.draw(mutated_bytes(MCP_TEXTS)))
    (schemes / "add.in.yao").write_bytes(data.draw(mutated_bytes(SCHEMA_TEXTS)))
    only_own_errors(lambda: load_tool_servers(package.path, env={"TOKEN": "t"}))


# --- --ctx and connectors.yml ---------------------------------------------------------------

CTX_TEXTS = [
    json.dumps(
        {
            "chat_id": "c1",
            "locale": "zh-cn",
            "authorized": {"user_id": "u", "team_id": "t", "scope": "a"},
            "metadata": {"tier": "gold", "n": 1},
        },
        indent=2,
    ),
    '{"user_id": "u", "team_id": "t"}',
]


@FUZZ
@given(data=st.data())
def test_ctx_files_damaged(tmp_path: Path, data: st.DataObject) -> None:
    path = tmp_path / "ctx.json"
    if data.draw(st.booleans()):
        path.write_bytes(data.draw(mutated_bytes(CTX_TEXTS)))
    else:
        seeds = [json.loads(t) for t in CTX_TEXTS]
        path.write_text(as_json(data.draw(mutated_data(seeds))), encoding="utf-8")
    only_own_errors(lambda: load_context_file(path))


CONNECTOR_TEXTS = [
    "loop: {model: openai/echo, api_base: 'http://127.0.0.1:9/v1', api_key: none, timeout: 0.5,"
    " retry: {max_attempts: 4, base_delay: 0.01, max_delay: 0.05}}\n"
    "fast: openai/gpt-4o-mini\n"
    "keyed: {model: anthropic/claude, api_key: $ENV.ANTHROPIC_API_KEY, temperature: 0.2}\n"
    "local: {model: ollama/llama3, api_base: 'http://localhost:11434', retry: 2, transport: sdk}\n"
    "rules: {model: 'scripted:rules.yml'}\n",
]


@pytest.fixture
def keep_registered_secrets():
    """Fuzzed connectors register random api_key values as secrets; forget them after, so
    later tests' outputs are not redacted by accident."""
    before = set(_registered)
    yield
    _registered.intersection_update(before)
    refresh_secrets()


@FUZZ
@given(data=st.data())
def test_connectors_file_damaged(tmp_path: Path, keep_registered_secrets, data: st.DataObject):
    path = tmp_path / "connectors.yml"
    if data.draw(st.booleans()):
        path.write_bytes(data.draw(mutated_bytes(CONNECTOR_TEXTS)))
    else:
        seeds = [yaml.safe_load(t) for t in CONNECTOR_TEXTS]
        path.write_text(as_yaml(data.draw(mutated_data(seeds))), encoding="utf-8")
    aliases = only_own_errors(lambda: load_connectors_file(path))
    for name in aliases or {}:
        model = only_own_errors(
            lambda name=name: resolve_connector(name, cwd=tmp_path, env={"ANTHROPIC_API_KEY": "k"})
        )
        if model is not None and hasattr(model, "aclose"):
            asyncio.run(model.aclose())


def test_the_seeds_themselves_load(folder: Path, package) -> None:
    """The unmutated seeds are valid, so the properties above start from real inputs."""
    for suffix, seeds in CASE_TEXTS.items():
        path = folder / f"seed{suffix}"
        path.write_text(seeds[0], encoding="utf-8")
        assert len(load_cases(path, project_root=folder)) >= 1
    for text in JSONC_TEXTS:
        parse_jsonc(text)
    (folder / "connectors.yml").write_text(CONNECTOR_TEXTS[0], encoding="utf-8")
    assert len(load_connectors_file(folder / "connectors.yml")) == 5
    (folder / "ctx.json").write_text(CTX_TEXTS[0], encoding="utf-8")
    assert load_context_file(folder / "ctx.json").chat_id == "c1"

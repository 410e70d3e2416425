"""`agent list` and `agent list --check`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcli.cli.main import _register, app

ROOT = Path(__file__).resolve().parents[2]
ASSISTANTS = ROOT / "assistants"

_register()
runner = CliRunner()


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AGENT_ROOT", raising=False)
    monkeypatch.delenv("AGENT_CONNECTOR", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)


def invoke(*args: str):
    return runner.invoke(app, ["list", *args], catch_exceptions=False)


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_table_of_the_example_assistants() -> None:
    result = invoke("--root", str(ASSISTANTS))
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["ID", "NAME", "CONNECTOR", "TOOLS"]
    rows = {line.split()[0]: line for line in lines[1:]}
    assert {"expense", "keyword", "coffee", "weather", "tests.simulator-agent"} <= set(rows)
    assert rows["expense"].split()[-2:] == ["scripted", "3"]
    assert "Expense Assistant" in rows["expense"]  # the localized name
    assert rows["weather"].endswith("?")  # stdio server: known once started
    assert rows["tests.validator-agent"].split()[-2:] == ["python:validator:reply", "0"]


def test_json_listing() -> None:
    result = invoke("--root", str(ASSISTANTS), "--json")
    listing = {item["id"]: item for item in json.loads(result.stdout)}
    assert listing["expense"]["tools"] == 3
    assert listing["weather"]["tools"] is None  # stdio server: not known until started
    assert listing["expense"]["path"] == str(ASSISTANTS / "expense")
    assert listing["coffee"]["errors"] == []


def test_check_passes_on_the_examples() -> None:
    result = invoke("--root", str(ASSISTANTS), "--check")
    assert result.exit_code == 0, result.stdout
    assert "✓ expense" in result.stdout
    assert "0 with errors" in result.stdout


def test_found_from_the_current_folder(tmp_path: Path) -> None:
    shutil.copytree(ASSISTANTS / "coffee", tmp_path / "assistants" / "coffee")
    result = invoke()
    assert result.stdout.splitlines()[1].split()[:2] == ["coffee", "Coffee"]


def test_no_root_is_a_usage_error() -> None:
    result = invoke()
    assert result.exit_code == 2
    assert result.stderr.startswith("error: no assistants root found")


def broken_root(root: Path) -> Path:
    write(root / "good", {"package.yao": '{"name": "Good", "connector": "echo"}'})
    write(root / "badjson", {"package.yao": '{\n  "name": "Bad",\n  "connector" "echo"\n}'})
    write(
        root / "many",
        {
            "package.yao": '{"name": "Many", "connector": "scripted", "colour": "red",'
            ' "mcp": {"servers": [{"server_id": "kit", "tools": ["add", "nope"]}]}}',
            "scripted.yml": "rules:\n  - when: {usr: x}\n    say: hi\n",
            "src/index.py": "def Create(ctx, messages)\n    return None\n",
            "mcps/kit.mcp.yao": '{"transport": "process", "tools": {"add": "kit.Add",'
            ' "gone": "kit.Gone"}}',
            "src/kit.py": "def Add(args):\n    return 1\n",
            "prompts.yml": "- role: wizard\n  content: hi\n",
            "locales/en-us.yml": "- not a mapping\n",
        },
    )
    write(
        root / "keyed",
        {
            "package.yao": '{"name": "Keyed", "connector": "openai/gpt-4o-mini",'
            ' "modes": ["chat", "task"]}',
        },
    )
    return root


def test_check_reports_every_problem_and_exits_1(tmp_path: Path) -> None:
    root = broken_root(tmp_path / "broken")
    plain = invoke("--root", str(root))
    assert plain.exit_code == 0
    assert "(cannot load: agent list --check)" in plain.stdout
    result = invoke("--root", str(root), "--check")
    assert result.exit_code == 1
    out = result.stdout
    assert out.startswith("✗ badjson")
    assert f"{root / 'badjson' / 'package.yao'}:3:15: invalid JSON" in out
    assert "✓ good" in out
    many = out[out.index("✗ many") : out.index("4 packages")]
    assert "warning: unknown field 'colour' (kept, not used)" in many
    assert "locales/en-us.yml:1: a locale file must be a YAML mapping" in many
    assert "prompts.yml:1: prompt 1: role must be one of" in many
    assert "src/index.py:1: syntax error" in many
    assert "scripted.yml:2: rules[0].when.usr: unknown condition" in many
    assert "'kit.Gone': src/kit.py has no function 'Gone'" in many
    assert "mcp.servers selects nope from 'kit'" in many
    keyed = out[out.index("! keyed") : out.index("✗ many")]
    assert "warning: connector 'openai/gpt-4o-mini' needs an API key: OPENAI_API_KEY" in keyed
    assert "warning: mode 'chat' has no preset prompts/chat.yml" in keyed
    assert out.rstrip().endswith(
        "4 packages checked under " + str(root) + ": 2 with errors, 1 with warnings only"
    )


def test_check_json_has_errors_and_warnings(tmp_path: Path) -> None:
    root = broken_root(tmp_path / "broken")
    result = invoke("--root", str(root), "--check", "--json")
    assert result.exit_code == 1
    listing = {item["id"]: item for item in json.loads(result.stdout)}
    assert listing["good"]["errors"] == listing["good"]["warnings"] == []
    assert len(listing["many"]["errors"]) >= 6
    assert listing["keyed"]["errors"] == []


def test_check_of_one_package_with_a_connector_whose_api_base_has_no_scheme(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "assistants"
    (root / "demo").mkdir(parents=True)
    (root / "demo" / "package.yao").write_text('{"name": "Demo", "connector": "lm"}')
    (tmp_path / "connectors.yml").write_text(
        'lm: {model: openai/qwen3, api_base: "localhost:1/v1"}\n'
    )
    monkeypatch.chdir(tmp_path)
    result = invoke("--root", str(root), "--check")
    assert result.exit_code == 1
    assert result.output.splitlines()[1:] == [
        f"    error: connector 'lm' ({tmp_path / 'connectors.yml'}:1): api_base 'localhost:1/v1' "
        "is not an http(s) URL",
        "      hint: write http://localhost:1/v1",
        f"1 package checked under {root}: 1 with errors, 0 with warnings only",
    ]


def test_check_refuses_a_misspelt_connector_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `api_bse` passed on as an option sent the request, key and all, to api.openai.com
    root = write(
        tmp_path / "assistants", {"demo/package.yao": '{"name": "Demo", "connector": "lm"}'}
    )
    (tmp_path / "connectors.yml").write_text(
        'lm: {model: openai/m, api_bse: "http://127.0.0.1:9/v1", api_key: none}\n'
    )
    monkeypatch.chdir(tmp_path)
    result = invoke("--root", str(root), "--check")
    assert result.exit_code == 1
    assert result.stdout.splitlines()[:2] == [
        f"✗ demo  ({root / 'demo'})",
        f"    error: {tmp_path / 'connectors.yml'}:1: lm.api_bse: unknown connector key "
        "(did you mean 'api_base'?)",
    ]


def test_check_reports_every_problem_of_every_file_at_once(tmp_path: Path) -> None:
    """Not the first problem of a package, nor the first of a file: all of them, each with
    its file and line, in one run (a broken package.yao does not hide the other files)."""
    root = tmp_path / "assistants"
    package = write(
        root / "p",
        {
            "package.yao": '{\n  "name": "P",\n  "connector": "scripted",\n'
            '  "max_steps": "many",\n  "modes": 3,\n'
            '  "options": {"temprature": 0.2, "top_p": 0.9, "zzq": 1},\n}\n',
            "prompts.yml": "- role: wizard\n  content: hi\n- role: user\n  content: 3\n",
            "prompts/task.yml": "- role: sorcerer\n  content: x\n",
            "scripted.yml": 'rules:\n  - when: {usr: x}\n    say: hi\n  - when: {user: "("}\n'
            "    say: hi\n  - sya: x\n",
            "locales/en-us.yml": "- not a mapping\n",
            "locales/zh-cn.yml": "- nor this\n",
            "mcps/bad.mcp.yao": '{"transport": "warp"}',
            "mcps/worse.mcp.yao": '{"transport": "stdio"}',
        },
    )
    result = invoke("--root", str(root), "--check")
    assert result.exit_code == 1
    at = f"{package}/"
    assert result.stdout.splitlines() == [
        f"✗ p  ({package})",
        f"    error: {at}package.yao:4: field 'max_steps' must be an integer, got a string",
        f"    error: {at}package.yao:5: field 'modes' must be an array of strings, got a number",
        f"    error: {at}locales/en-us.yml:1: a locale file must be a YAML mapping of keys to texts",
        f"    error: {at}locales/zh-cn.yml:1: a locale file must be a YAML mapping of keys to texts",
        f"    error: {at}prompts.yml:1: prompt 1: role must be one of system, user, assistant, "
        "developer, got 'wizard'",
        f"    error: {at}prompts.yml:4: prompt 2: content must be a string",
        f"    error: {at}prompts/task.yml:1: prompt 1: role must be one of system, user, "
        "assistant, developer, got 'sorcerer'",
        f"    error: {at}scripted.yml:2: rules[0].when.usr: unknown condition (did you mean "
        "'user'?); use one of user, tool_result, turn",
        f"    error: {at}scripted.yml:4: rules[1].when.user: invalid regex '(': missing ), "
        "unterminated subpattern at position 0",
        f"    error: {at}scripted.yml:6: rules[2].sya: unknown key (did you mean 'say'?)",
        f"    error: {at}mcps/bad.mcp.yao: unknown transport 'warp'",
        "      hint: use one of: process, stdio, http, sse",
        f"    error: {at}mcps/worse.mcp.yao: a stdio server needs `command`",
        f"    warning: {at}package.yao:6: unknown option 'options.temprature' (did you mean "
        "'temperature'?); it is passed to the provider as is",
        f"    warning: {at}package.yao:6: unknown option 'options.zzq'; it is passed to the "
        "provider as is",
        f"1 package checked under {root}: 1 with errors, 0 with warnings only",
    ]


def test_check_warns_on_an_unknown_option_of_a_package_that_is_otherwise_fine(
    tmp_path: Path,
) -> None:
    root = write(
        tmp_path / "assistants",
        {"ok/package.yao": '{"name": "Ok", "connector": "echo",\n "options": {"max_tokns": 5}}'},
    )
    result = invoke("--root", str(root), "--check")
    assert result.exit_code == 0  # a warning, not an error: the key is still sent
    assert result.stdout.splitlines()[1] == (
        f"    warning: {root / 'ok' / 'package.yao'}:2: unknown option 'options.max_tokns' "
        "(did you mean 'max_tokens'?); it is passed to the provider as is"
    )


def test_check_reports_each_broken_nested_field(tmp_path: Path) -> None:
    root = write(
        tmp_path / "assistants",
        {
            "p/package.yao": '{"name": "P", "connector": "echo",\n'
            ' "options": {"temperature": "hot",\n "max_tokens": "lots"}}',
        },
    )
    result = invoke("--root", str(root), "--check")
    assert result.exit_code == 1
    file = root / "p" / "package.yao"
    assert result.stdout.splitlines()[1:3] == [
        f"    error: {file}:2: field 'options.temperature' must be a number, got a string",
        f"    error: {file}:3: field 'options.max_tokens' must be an integer, got a string",
    ]


def test_check_finds_a_kb_collection_without_its_folder(tmp_path: Path) -> None:
    # every case's search would fail on it: an error here, before a run
    root = write(
        tmp_path / "assistants",
        {
            "hd/package.yao": '{"name": "Hd", "connector": "echo",\n'
            ' "kb": {"collections": ["faq", "nosuch"]}}',
            "hd/kb/faq/a.md": "# A\ntext\n",
        },
    )
    result = invoke("--root", str(root), "--check")
    assert result.exit_code == 1
    assert result.stdout.splitlines()[1] == (
        f"    error: {root / 'hd' / 'package.yao'}: kb collection 'nosuch' has no folder "
        "kb/nosuch/ (put its .md, .txt and .json files there)"
    )


def test_check_refuses_a_field_named_twice(tmp_path: Path) -> None:
    root = write(
        tmp_path / "assistants",
        {"k/package.yao": '{"name": "k",\n "connector": "scripted",\n "connector": "echo"}'},
    )
    result = invoke("--root", str(root), "--check")
    assert result.exit_code == 1
    assert result.stdout.splitlines()[1] == (
        f'    error: {root / "k" / "package.yao"}:3:2: duplicate key "connector" (first at line 2)'
    )


def test_check_finds_db_models_that_are_no_data_model_of_the_package(tmp_path: Path) -> None:
    # eval errored each case ("has no data models") while --check said ✓
    root = tmp_path / "assistants"
    shutil.copytree(ASSISTANTS / "helpdesk", root / "hd")
    shutil.copytree(ASSISTANTS / "shop", root / "shop")
    for name, models in (("hd", '["nope"]'), ("shop", '["order",\n "ordr"]')):
        file = root / name / "package.yao"
        file.write_text(
            file.read_text().replace('"name":', f'"db": {{"models": {models}}},\n"name":', 1)
        )
    result = invoke("--root", str(root), "--check")
    assert result.exit_code == 1
    out = result.stdout.splitlines()
    assert out[1] == (
        f"    error: {root / 'hd' / 'package.yao'}:5: db.models names 'nope', but the package "
        "has no data models (no models/*.mod.yao)"
    )
    assert (
        f"    error: {root / 'shop' / 'package.yao'}:6: db.models names 'ordr', which is no "
        'data model of the package (did you mean "order"?) (models: customer, order)'
    ) in out


def test_check_finds_a_kb_embedding_that_names_no_connector(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write(
        tmp_path / "assistants",
        {
            "hd/package.yao": '{"name": "Hd", "connector": "echo",\n'
            ' "kb": {"collections": ["faq"],\n "embedding": "nosuchconn"}}',
            "hd/kb/faq/a.md": "# A\ntext\n",
            "off/package.yao": '{"name": "Off", "connector": "echo",\n'
            ' "kb": {"collections": ["faq"], "embedding": "echo"}}',
            "off/kb/faq/a.md": "# A\ntext\n",
            "keyed/package.yao": '{"name": "Keyed", "connector": "echo",\n'
            ' "kb": {"collections": ["faq"], "embedding": "openai/text-embedding-3-small"}}',
            "keyed/kb/faq/a.md": "# A\ntext\n",
        },
    )
    monkeypatch.chdir(tmp_path)
    result = invoke("--root", str(root), "--check")
    assert result.exit_code == 1
    out = result.stdout
    assert (
        f"    error: {root / 'hd' / 'package.yao'}:3: kb.embedding 'nosuchconn': unknown "
        "connector 'nosuchconn'; no aliases defined" in out
    )
    assert (
        f"    error: {root / 'off' / 'package.yao'}:2: kb.embedding 'echo': kb.embedding: "
        "connector 'echo' has no embeddings endpoint" in out
    )
    assert "! keyed" in out  # no OPENAI_API_KEY here: the machine's business, a warning
    assert "warning: " + str(root / "keyed" / "package.yao") + ":2: kb.embedding" in out


def test_check_names_an_unknown_field_once(tmp_path: Path) -> None:
    root = write(
        tmp_path / "assistants",
        {"p/package.yao": '{"name": "P", "connector": "echo",\n "serach": {}}'},
    )
    result = invoke("--root", str(root), "--check")
    warnings = [line for line in result.stdout.splitlines() if "serach" in line]
    assert len(warnings) == 1, result.stdout

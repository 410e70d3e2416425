"""Tool server definitions: mcps/**/*.mcp.yao, $ENV, mappings, and bad files."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agentcli.assistant.mcps import load_tool_servers
from agentcli.errors import PackageError


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_no_mcps_folder_means_no_servers(tmp_path: Path) -> None:
    assert load_tool_servers(tmp_path) == []


def test_ids_come_from_paths_and_every_suffix_is_read(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "mcps/tools.mcp.yao": '{"transport": "process", "tools": {"a": "t.A"}}',
            "mcps/sub/deep.mcp.json": '{"transport": "process", "tools": {"b": "t.B"}}',
            "mcps/other.mcp.jsonc": '{"transport": "process", "tools": {"c": "t.C"}}',
            "mcps/readme.md": "not a server",
            "mcps/mapping/x.mcp.yao": '{"transport": "bogus"}',  # mapping/ is never a server
        },
    )
    specs = load_tool_servers(tmp_path)
    assert [s.id for s in specs] == ["other", "sub.deep", "tools"]
    assert specs[1].path == tmp_path / "mcps/sub/deep.mcp.json"
    assert specs[2].tools == {"a": "t.A"}


def test_yao_style_file_with_comments_and_trailing_commas(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "mcps/tools.mcp.yao": """{
  // Yao's documented form
  "label": "Tools",
  "description": "Custom tools",
  "transport": "process",
  "tools": {"search": "scripts.tools.Search", /* two */ "create": "data.Create",},
  "resources": {"detail": "data.Find"},
}"""
        },
    )
    (spec,) = load_tool_servers(tmp_path)
    assert (spec.label, spec.description, spec.transport) == ("Tools", "Custom tools", "process")
    assert spec.tools == {"search": "scripts.tools.Search", "create": "data.Create"}


def test_stdio_command_python_and_relative_paths(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "mcps/a.mcp.yao": '{"transport": "stdio", "command": "python", "arguments": ["mcps/s.py", 3]}',
            "mcps/b.mcp.yao": '{"transport": "stdio", "command": "./bin/srv", "args": ["--x"]}',
            "mcps/c.mcp.yao": '{"transport": "stdio", "command": "npx"}',
        },
    )
    a, b, c = load_tool_servers(tmp_path)
    assert a.command == sys.executable
    assert a.args == ["mcps/s.py", "3"]
    assert a.cwd == tmp_path.resolve()
    assert b.command == str((tmp_path / "bin/srv").resolve())
    assert b.args == ["--x"]
    assert c.command == "npx"  # a bare name is looked up on PATH


def test_env_substitution_in_env_token_headers_and_url(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "mcps/s.mcp.yao": '{"transport": "stdio", "command": "python",'
            ' "env": {"API_KEY": "$ENV.MY_KEY", "MODE": "fast-$ENV.MODE"}}',
            "mcps/h.mcp.yao": '{"transport": "http", "url": "http://$ENV.HOST/mcp",'
            ' "authorization_token": "$ENV.TOKEN", "headers": {"X-Team": "$ENV.MODE"}}',
            "mcps/e.mcp.yao": '{"transport": "sse", "url": "https://e.example/sse",'
            ' "authorization_token": "Basic abc"}',
        },
    )
    env = {"MY_KEY": "k1", "MODE": "m", "HOST": "127.0.0.1:9", "TOKEN": "secret"}
    e, h, s = load_tool_servers(tmp_path, env=env)
    assert s.env == {"API_KEY": "k1", "MODE": "fast-m"}
    assert h.url == "http://127.0.0.1:9/mcp"
    assert h.headers == {"X-Team": "m", "Authorization": "Bearer secret"}
    assert e.headers == {"Authorization": "Basic abc"}


def test_unset_env_variable_is_empty_with_a_warning_naming_variable_and_file(
    tmp_path: Path,
) -> None:
    write(
        tmp_path,
        {"mcps/s.mcp.yao": '{"transport": "stdio", "command": "x", "env": {"K": "$ENV.NOPE_X"}}'},
    )
    (spec,) = load_tool_servers(tmp_path, env={})
    assert spec.env == {"K": ""}
    (warning,) = spec.warnings
    assert "NOPE_X" in warning and "s.mcp.yao" in warning and "env.K" in warning


@pytest.mark.parametrize(
    "definition, key",
    [
        ('{"transport": "stdio", "command": "python", "arguments": ["$ENV.NOPE_X"]}', "arguments"),
        ('{"transport": "stdio", "command": "$ENV.NOPE_X"}', "command"),
        ('{"transport": "sse", "url": "http://$ENV.NOPE_X/sse"}', "url"),
    ],
)
def test_unset_env_variable_in_what_starts_a_server_is_an_error(
    tmp_path: Path, definition: str, key: str
) -> None:
    write(tmp_path, {"mcps/s.mcp.yao": definition})
    with pytest.raises(PackageError, match=rf"`{key}` uses \$ENV.NOPE_X, but NOPE_X is not set"):
        load_tool_servers(tmp_path, env={})
    # the file is named in the message
    with pytest.raises(PackageError) as caught:
        load_tool_servers(tmp_path, env={})
    assert caught.value.path and caught.value.path.endswith("s.mcp.yao")


@pytest.mark.parametrize("value", ["NaN", "Infinity", "1e999", "-Infinity", '"5"'])
def test_non_finite_server_timeout_is_an_error(tmp_path: Path, value: str) -> None:
    write(
        tmp_path,
        {"mcps/s.mcp.yao": f'{{"transport": "stdio", "command": "x", "timeout": {value}}}'},
    )
    with pytest.raises(PackageError, match="timeout"):
        load_tool_servers(tmp_path, env={})


def test_input_schemas_from_mapping(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "mcps/tools.mcp.yao": '{"transport": "process", "tools": {"search": "t.S"}}',
            "mcps/mapping/tools/schemes/search.in.yao": """{
  "type": "object", "description": "Search data",
  "properties": {"keyword": {"type": "string"}},  // comment
  "x-process-args": [":arguments"],
}""",
            "mcps/mapping/tools/schemes/search.out.yao": '{"type": "object"}',
        },
    )
    (spec,) = load_tool_servers(tmp_path)
    assert spec.schemas == {
        "search": {
            "type": "object",
            "description": "Search data",
            "properties": {"keyword": {"type": "string"}},
        }
    }
    assert spec.schema_paths["search"].name == "search.in.yao"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"transport": "carrier-pigeon"}', "unknown transport 'carrier-pigeon'"),
        ('{"label": "nothing"}', "missing `transport`"),
        ('{"transport": "process"}', "needs `tools`"),
        ('{"transport": "stdio"}', "needs `command`"),
        ('{"transport": "http", "url": "ftp://x"}', "http(s) `url`"),
        ('{"transport": "stdio", "command": "x", "arguments": "a b"}', "`arguments` must be"),
        ('{"transport": "stdio", "command": "x", "timeout": -1}', "`timeout` must be"),
        ('{"transport": "process", "tools": ["a"]}', "`tools` must be an object"),
        (
            '{"transport": "stdio", "command": "x", "sequential": "a"}',
            "`sequential` must be a list",
        ),
        ('{"tools": {"a": "t.a"}, "sequential": ["b"]}', "`sequential` names 'b'"),
        ("[1, 2]", "must be a JSON object"),
        ('{"transport": "stdio",\n "command": }', ":2:"),
    ],
)
def test_bad_definition_names_the_file(tmp_path: Path, text: str, expected: str) -> None:
    write(tmp_path, {"mcps/bad.mcp.yao": text})
    with pytest.raises(PackageError) as error:
        load_tool_servers(tmp_path)
    assert expected in str(error.value)
    assert "bad.mcp.yao" in str(error.value)


def test_transport_is_inferred_from_fields_when_omitted(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "mcps/a.mcp.yao": '{"command": "npx", "args": ["srv"]}',
            "mcps/b.mcp.yao": '{"url": "http://127.0.0.1:1/mcp"}',
            "mcps/c.mcp.yao": '{"transport": "streamable-http", "url": "http://127.0.0.1:1/mcp"}',
        },
    )
    assert [s.transport for s in load_tool_servers(tmp_path)] == ["stdio", "http", "http"]


def test_bad_schema_file_names_the_schema(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "mcps/tools.mcp.yao": '{"transport": "process", "tools": {"s": "t.S"}}',
            "mcps/mapping/tools/schemes/s.in.yao": '{"type": "array"}',
        },
    )
    with pytest.raises(PackageError, match=r"s\.in\.yao.*\"type\": \"object\""):
        load_tool_servers(tmp_path)


def test_duplicate_server_id_is_an_error(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "mcps/tools.mcp.yao": '{"transport": "process", "tools": {"a": "t.A"}}',
            "mcps/tools.mcp.json": '{"transport": "process", "tools": {"a": "t.A"}}',
        },
    )
    with pytest.raises(PackageError, match="defined twice"):
        load_tool_servers(tmp_path)


def test_sequential_names_tools_or_every_tool(tmp_path: Path) -> None:
    from agentcli.assistant.mcps import is_sequential

    write(
        tmp_path,
        {
            "mcps/db.mcp.yao": '{"tools": {"book": "t.book", "look": "t.look"}, "sequential": ["book"]}',
            "mcps/all.mcp.yao": '{"transport": "stdio", "command": "x", "sequential": true}',
        },
    )
    every, db = load_tool_servers(tmp_path)
    assert (is_sequential(db, "book"), is_sequential(db, "look")) == (True, False)
    assert is_sequential(every, "anything")

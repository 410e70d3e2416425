"""package.yao loading, validation, $ENV, ids, root discovery and assistant resolution."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from agentcli.assistant.package import (
    PACKAGE_SCHEMA,
    AssistantPackage,
    McpServerRef,
    assistant_id,
    find_assistants_root,
    find_package_dir,
    iter_packages,
    load_package,
    read_yaml,
    resolve_assistant,
    substitute_env,
)
from agentcli.errors import ConfigError, PackageError, UnknownAssistantError


def make_package(folder: Path, data: dict[str, Any] | str, *, file: str = "package.yao") -> Path:
    """Write a package folder with the given package file content."""
    folder.mkdir(parents=True, exist_ok=True)
    text = data if isinstance(data, str) else json.dumps(data, indent=2)
    (folder / file).write_text(text, encoding="utf-8")
    return folder


@pytest.fixture(autouse=True)
def _no_agent_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENT_ROOT", raising=False)


# ---------------------------------------------------------------------------- loading


def test_minimal_package_defaults(tmp_path: Path) -> None:
    folder = make_package(tmp_path / "assistants" / "bot", {"name": "Bot"})
    package = load_package(folder)
    assert isinstance(package, AssistantPackage)
    assert package.id == "bot"
    assert package.path == folder
    assert package.file == folder / "package.yao"
    assert package.root == tmp_path / "assistants"
    assert (package.name, package.type, package.description) == ("Bot", "assistant", "")
    assert package.connector is None
    assert package.options == {} and package.tags == [] and package.mcp == []
    assert package.share == "private" and package.public is False
    assert package.unknown_fields == [] and package.warnings == []


def test_full_package_with_comments_and_trailing_commas(tmp_path: Path) -> None:
    text = """
    // The keyword worker
    {
      "name": "{{ name }}",
      "type": "worker",
      "avatar": "/assets/avatar.png",
      "description": "Finds keywords", /* shown in lists */
      "connector": "echo",
      "connector_options": {"optional": true, "connectors": ["echo", "gpt-4o"], "filters": ["tool_calls"],},
      "options": {"temperature": 0.2, "max_tokens": 512,},
      "placeholder": {"title": "{{ chat.title }}", "prompts": ["{{ chat.prompts.0 }}"]},
      "tags": ["Productivity"],
      "sort": 3,
      "public": true, "share": "team", "readonly": true, "built_in": true,
      "mentionable": true, "automated": true,
      "modes": ["chat", "task"], "default_mode": "task",
      "disable_global_prompts": true,
      "mcp": {"servers": ["search", {"server_id": "tools", "tools": ["a", "b"]},
                          {"server_id": "res", "resources": ["uri://x"]}]},
      "uses": {"vision": "vision-agent"},
      "search": {"web": {"provider": "tavily"}},
      "kb": {"collections": ["c1"]},
      "db": ["model.a"],
    }
    """
    folder = make_package(tmp_path / "assistants" / "workers" / "keyword", text)
    package = load_package(folder)
    assert package.id == "workers.keyword"
    assert package.type == "worker"
    assert package.connector == "echo"
    assert package.connector_options == {
        "optional": True,
        "connectors": ["echo", "gpt-4o"],
        "filters": ["tool_calls"],
    }
    assert package.options == {"temperature": 0.2, "max_tokens": 512}
    assert package.placeholder == {"title": "{{ chat.title }}", "prompts": ["{{ chat.prompts.0 }}"]}
    assert package.sort == 3 and package.share == "team"
    assert package.public and package.readonly and package.built_in
    assert package.mentionable and package.automated and package.disable_global_prompts
    assert package.modes == ["chat", "task"] and package.default_mode == "task"
    assert package.mcp == [
        McpServerRef("search"),
        McpServerRef("tools", tools=["a", "b"]),
        McpServerRef("res", resources=["uri://x"]),
    ]
    assert package.uses == {"vision": "vision-agent"}
    assert package.search == {"web": {"provider": "tavily"}}
    assert package.kb == {"collections": ["c1"]}
    assert package.db == {"models": ["model.a"]}
    assert package.warnings == []


@pytest.mark.parametrize("file", ["package.json", "package.jsonc"])
def test_alternative_package_file_names(tmp_path: Path, file: str) -> None:
    folder = make_package(tmp_path / "bot", '{"name": "Bot", // c\n}', file=file)
    assert load_package(folder).file.name == file


def test_package_yao_wins_over_package_json(tmp_path: Path) -> None:
    folder = make_package(tmp_path / "bot", {"name": "From json"}, file="package.json")
    make_package(folder, {"name": "From yao"})
    assert load_package(folder).name == "From yao"


def test_load_accepts_the_package_file_itself(tmp_path: Path) -> None:
    folder = make_package(tmp_path / "bot", {"name": "Bot"})
    assert load_package(folder / "package.yao").path == folder


def test_folder_without_package_file(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(PackageError, match=r"no package\.yao in folder"):
        load_package(tmp_path / "empty")


def test_missing_name_names_file_and_field(tmp_path: Path) -> None:
    folder = make_package(tmp_path / "bot", {"connector": "echo"})
    with pytest.raises(PackageError) as info:
        load_package(folder)
    assert info.value.path == str(folder / "package.yao")
    assert "missing required field 'name'" in str(info.value)


def test_empty_name_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(PackageError, match="field 'name' must not be empty"):
        load_package(make_package(tmp_path / "bot", {"name": "  "}))


def test_options_not_an_object_names_field_and_line(tmp_path: Path) -> None:
    text = '{\n  "name": "Bot",\n  "options": [1, 2]\n}'
    folder = make_package(tmp_path / "bot", text)
    with pytest.raises(PackageError) as info:
        load_package(folder)
    assert str(info.value).startswith(f"{folder / 'package.yao'}:3: field 'options'")
    assert "must be an object, got an array" in str(info.value)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"name": 3}, "field 'name' must be a string, got a number"),
        ({"name": "b", "public": "yes"}, "field 'public' must be true or false, got a string"),
        ({"name": "b", "sort": 1.5}, "field 'sort' must be an integer"),
        ({"name": "b", "sort": True}, "field 'sort' must be an integer"),
        ({"name": "b", "modes": "chat"}, "field 'modes' must be an array of strings"),
        ({"name": "b", "options": {"temperature": "hot"}}, "field 'options.temperature'"),
        ({"name": "b", "options": {"max_tokens": 1.5}}, "field 'options.max_tokens'"),
        ({"name": "b", "placeholder": {"prompts": [1]}}, "field 'placeholder.prompts.0'"),
        ({"name": "b", "connector_options": {"connectors": "x"}}, "'connector_options.connectors'"),
        ({"name": "b", "mcp": {"servers": [{"tools": []}]}}, "'mcp.servers.0' needs a 'server_id'"),
        ({"name": "b", "mcp": {"servers": "tools"}}, "field 'mcp.servers' must be an array"),
        ({"name": "b", "uses": []}, "field 'uses' must be an object"),
    ],
)
def test_field_type_errors(tmp_path: Path, data: dict[str, Any], message: str) -> None:
    folder = make_package(tmp_path / "bot", data)
    with pytest.raises(PackageError, match=message.replace(".", r"\.")) as info:
        load_package(folder)
    assert info.value.path == str(folder / "package.yao")


def test_top_level_must_be_an_object(tmp_path: Path) -> None:
    with pytest.raises(PackageError, match="must contain a JSON object, got an array"):
        load_package(make_package(tmp_path / "bot", "[1]"))


def test_syntax_error_points_into_package_file(tmp_path: Path) -> None:
    folder = make_package(tmp_path / "bot", '{\n  "name": "Bot"\n  "x": 1\n}')
    with pytest.raises(PackageError) as info:
        load_package(folder)
    assert (info.value.path, info.value.line, info.value.column) == (
        str(folder / "package.yao"),
        3,
        3,
    )


def test_a_field_named_twice_is_refused_with_its_line(tmp_path: Path) -> None:
    folder = make_package(
        tmp_path / "bot", '{"name": "k",\n "connector": "scripted",\n "connector": "echo"}'
    )
    with pytest.raises(PackageError) as info:
        load_package(folder)
    assert str(info.value).splitlines()[0] == (
        f'{folder / "package.yao"}:3:2: duplicate key "connector" (first at line 2)'
    )
    assert info.value.exit_code == 2


def test_null_means_not_set_and_single_tag_string(tmp_path: Path) -> None:
    package = load_package(
        make_package(tmp_path / "bot", {"name": "Bot", "avatar": None, "tags": "Solo"})
    )
    assert package.avatar is None and package.tags == ["Solo"]


def test_unknown_fields_are_kept_and_listed(tmp_path: Path) -> None:
    data = {
        "name": "Bot",
        "capabilities": ["x"],
        "my_extension": {"a": 1},
        "$schema": "https://example.com/schema.json",
        "__yao_created_by": "me",
    }
    package = load_package(make_package(tmp_path / "bot", data))
    assert package.unknown_fields == ["capabilities", "my_extension"]
    assert package.raw == data


def test_default_mode_outside_modes_warns(tmp_path: Path) -> None:
    package = load_package(
        make_package(tmp_path / "bot", {"name": "b", "modes": ["chat"], "default_mode": "task"})
    )
    assert any("default_mode 'task' is not one of modes" in w for w in package.warnings)


def test_nested_mistakes_name_the_field_and_what_to_write(tmp_path: Path) -> None:
    folder = make_package(tmp_path / "bot", '{"name": "b",\n "mcp": [{"server_id": ""}]}')
    with pytest.raises(PackageError) as info:
        load_package(folder)
    assert (
        str(info.value) == f"{folder / 'package.yao'}:2: field 'mcp.0.server_id' must not be empty"
    )
    folder = make_package(tmp_path / "bot", '{"name": "b",\n "mcp": {"servers": [{"tools": []}]}}')
    with pytest.raises(PackageError) as info:
        load_package(folder)
    assert str(info.value) == (
        f"{folder / 'package.yao'}:2: field 'mcp.servers.0' needs a 'server_id' string\n"
        '  hint: e.g. {"server_id": "tools", "tools": ["search"]}'
    )
    with pytest.raises(PackageError) as info:
        load_package(make_package(tmp_path / "bot", {"name": "b", "tags": 5, "kb": 5}))
    assert "field 'tags' must be a string or an array of strings, got a number" in str(info.value)


def test_the_first_mistake_in_the_file_is_reported(tmp_path: Path) -> None:
    folder = make_package(tmp_path / "bot", {"name": "b", "sort": "x", "public": 1})
    with pytest.raises(PackageError, match="field 'sort' must be an integer, got a string"):
        load_package(folder)
    folder = make_package(tmp_path / "bot", {"public": 1, "name": "b", "sort": "x"})
    with pytest.raises(PackageError, match="field 'public' must be true or false, got a number"):
        load_package(folder)


def test_missing_name_hint_comes_from_the_schema(tmp_path: Path) -> None:
    with pytest.raises(PackageError) as info:
        load_package(make_package(tmp_path / "bot", {"name": None, "connector": "echo"}))
    assert "missing required field 'name'" in str(info.value)
    assert info.value.hint == 'add "name": "My assistant"'


def test_integral_numbers_become_ints_and_nested_nulls_are_not_set(tmp_path: Path) -> None:
    data = {
        "name": "b",
        "sort": 2.0,
        "options": {"max_tokens": 512.0, "temperature": None},
        "mcp": [{"server_id": "s", "tools": None}],
        "kb": ["c1"],
    }
    package = load_package(make_package(tmp_path / "bot", data))
    assert package.sort == 2 and isinstance(package.sort, int)
    assert package.options == {"max_tokens": 512, "temperature": None}
    assert isinstance(package.options["max_tokens"], int)
    assert package.mcp == [McpServerRef("s")] and package.kb == {"collections": ["c1"]}
    assert package.raw["sort"] == 2.0  # the file's value is kept as written


def test_a_misspelt_field_gets_a_did_you_mean_warning(tmp_path: Path) -> None:
    text = '{\n  "name": "Bot",\n  "conector": "echo",\n  "my_extension": 1\n}'
    folder = make_package(tmp_path / "bot", text)
    package = load_package(folder)
    assert package.connector is None
    assert package.unknown_fields == ["conector", "my_extension"]
    assert package.warnings == [
        f"{folder / 'package.yao'}:3: unknown field 'conector' (did you mean 'connector'?);"
        " it is not used"
    ]


# Generated package-like objects: every field the schema knows, near misses and values of
# every JSON type, so the compiled check and jsonschema are compared on both answers.
FIELDS = [*PACKAGE_SCHEMA.schema["properties"], "servers", "server_id", "tools", "prompts"]
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 3),
    st.sampled_from([1.0, 1.5, float("inf")]),
    st.sampled_from(["", "x", "echo"]),
)
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.sampled_from(FIELDS), children, max_size=4),
    ),
    max_leaves=20,
)
REFERENCE = Draft202012Validator(PACKAGE_SCHEMA.schema)


@settings(max_examples=500, deadline=None)
@given(st.dictionaries(st.sampled_from(FIELDS), json_values, max_size=8))
def test_compiled_check_agrees_with_jsonschema(data: dict[str, Any]) -> None:
    assert PACKAGE_SCHEMA.conforms(data) == REFERENCE.is_valid(data)


@settings(max_examples=300, deadline=None)
@given(
    st.fixed_dictionaries(
        {"name": st.sampled_from(["Bot", "", 3])},
        optional={
            "mcp": st.one_of(
                st.lists(st.sampled_from(["s", {"server_id": "t"}, {"tools": []}, 5]), max_size=3),
                st.fixed_dictionaries(
                    {}, optional={"servers": st.sampled_from([[], ["s"], [{"server_id": ""}], "s"])}
                ),
            ),
            "options": st.dictionaries(
                st.sampled_from(["temperature", "max_tokens", "seed"]),
                st.sampled_from([0.2, 512, 1.5, "x", None, True]),
            ),
            "tags": st.sampled_from(["solo", ["a"], [1], 5]),
            "sort": st.sampled_from([1, 1.0, 1.5, True]),
            "kb": st.sampled_from([["c"], {"collections": []}, [1], "c"]),
        },
    )
)
def test_compiled_check_agrees_on_package_shaped_objects(data: dict[str, Any]) -> None:
    assert PACKAGE_SCHEMA.conforms(data) == REFERENCE.is_valid(data)


# ---------------------------------------------------------------------------- $ENV


def test_env_substitution_everywhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("T_CONNECTOR", "echo")
    monkeypatch.setenv("T_TEAM", "core")
    data = {
        "name": "Bot for $ENV.T_TEAM team",
        "connector": "$ENV.T_CONNECTOR",
        "options": {"user": "$ENV.T_TEAM"},
        "tags": ["$ENV.T_TEAM", "fixed"],
    }
    package = load_package(make_package(tmp_path / "bot", data))
    assert package.name == "Bot for core team"
    assert package.connector == "echo"
    assert package.options == {"user": "core"}
    assert package.tags == ["core", "fixed"]
    assert package.raw["connector"] == "$ENV.T_CONNECTOR"
    assert package.warnings == []


def test_unset_env_in_connector_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("T_MISSING_CONNECTOR", raising=False)
    folder = make_package(tmp_path / "bot", {"name": "b", "connector": "$ENV.T_MISSING_CONNECTOR"})
    with pytest.raises(PackageError) as info:
        load_package(folder)
    message = str(info.value)
    assert "T_MISSING_CONNECTOR is not set" in message
    assert str(folder / "package.yao") in message
    assert "export T_MISSING_CONNECTOR" in message


def test_empty_env_in_connector_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("T_EMPTY_CONNECTOR", "")
    folder = make_package(tmp_path / "bot", {"name": "b", "connector": "$ENV.T_EMPTY_CONNECTOR"})
    with pytest.raises(PackageError, match="T_EMPTY_CONNECTOR is empty"):
        load_package(folder)


def test_unset_env_elsewhere_is_empty_with_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("T_MISSING", raising=False)
    folder = make_package(
        tmp_path / "bot",
        {"name": "b", "description": "[$ENV.T_MISSING]", "uses": {"x": "$ENV.T_MISSING"}},
    )
    package = load_package(folder)
    assert package.description == "[]"
    assert package.uses == {"x": ""}
    assert len(package.warnings) == 2
    assert "$ENV.T_MISSING is not set (field 'description')" in package.warnings[0]
    assert "(field 'uses.x')" in package.warnings[1]


def test_substitute_env_with_explicit_mapping() -> None:
    warnings: list[str] = []
    data = {"env": {"API_KEY": "$ENV.K"}, "args": ["--x=$ENV.K", "$ENV.NOPE"], "n": 1}
    out = substitute_env(data, path="tools.mcp.yao", env={"K": "v"}, warnings=warnings)
    assert out == {"env": {"API_KEY": "v"}, "args": ["--x=v", ""], "n": 1}
    assert data["env"]["API_KEY"] == "$ENV.K"
    assert warnings == [
        "tools.mcp.yao: $ENV.NOPE is not set (field 'args.1'); using an empty string"
    ]
    with pytest.raises(PackageError, match="NOPE is not set"):
        substitute_env(data, path="f", env={}, required=("args.1",))


# ---------------------------------------------------------------------------- ids


def test_assistant_id_from_path() -> None:
    assert assistant_id(Path("/app/assistants/workers/system/keyword")) == "workers.system.keyword"
    assert assistant_id(Path("/app/assistants/bot")) == "bot"
    assert assistant_id(Path("/app/assistants/a/assistants/b")) == "b"
    assert assistant_id(Path("/somewhere/else/my-bot")) == "my-bot"


def test_assistant_id_against_root() -> None:
    assert assistant_id(Path("/r/agents/x/y"), Path("/r/agents")) == "x.y"
    assert assistant_id(Path("/other/assistants/x"), Path("/r/agents")) == "x"


def test_relative_path_id(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert assistant_id(Path("assistants/tests/sim")) == "tests.sim"


# ---------------------------------------------------------------------------- roots


def test_root_explicit_relative_to_cwd(tmp_path: Path) -> None:
    (tmp_path / "agents").mkdir()
    assert find_assistants_root(cwd=tmp_path, explicit="agents") == tmp_path / "agents"


def test_root_explicit_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--root nope is not a directory"):
        find_assistants_root(cwd=tmp_path, explicit="nope")


def test_root_from_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "env-root").mkdir()
    (tmp_path / "assistants").mkdir()
    monkeypatch.setenv("AGENT_ROOT", str(tmp_path / "env-root"))
    assert find_assistants_root(cwd=tmp_path) == tmp_path / "env-root"
    (tmp_path / "cli-root").mkdir()
    assert find_assistants_root(cwd=tmp_path, explicit="cli-root") == tmp_path / "cli-root"
    monkeypatch.setenv("AGENT_ROOT", str(tmp_path / "missing"))
    with pytest.raises(ConfigError, match="AGENT_ROOT"):
        find_assistants_root(cwd=tmp_path)


def test_root_dot_assistants(tmp_path: Path) -> None:
    (tmp_path / "assistants").mkdir()
    assert find_assistants_root(cwd=tmp_path) == tmp_path / "assistants"


def test_root_walking_up(tmp_path: Path) -> None:
    (tmp_path / "assistants" / "workers" / "bot").mkdir(parents=True)
    deep = tmp_path / "src" / "deep"
    deep.mkdir(parents=True)
    assert find_assistants_root(cwd=deep) == tmp_path / "assistants"
    inside = tmp_path / "assistants" / "workers" / "bot"
    assert find_assistants_root(cwd=inside) == tmp_path / "assistants"


def test_no_root(tmp_path: Path) -> None:
    start = tmp_path / "nothing"
    start.mkdir()
    if any((p / "assistants").is_dir() for p in (start, *start.parents)):
        pytest.skip("an assistants/ folder exists above the temporary directory")
    assert find_assistants_root(cwd=start) is None


# ---------------------------------------------------------------------------- discovery


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """An assistants root with nested packages and package-internal folders."""
    root = tmp_path / "assistants"
    make_package(root / "bot", {"name": "Bot", "connector": "echo", "description": "A bot"})
    make_package(root / "bot" / "sub", {"name": "Nested"})
    make_package(root / "bot" / "src" / "fake", {"name": "inside src"})
    make_package(root / "bot" / "tests" / "fake", {"name": "inside tests"})
    make_package(root / "bot" / "assets" / "fake", {"name": "inside assets"})
    make_package(root / "tests" / "simulator", {"name": "Simulator"})
    make_package(root / "workers" / "system" / "keyword", {"name": "Keyword", "connector": "echo"})
    make_package(root / ".hidden" / "x", {"name": "hidden"})
    make_package(root / "v1.2", {"name": "Dotted"})
    (root / "empty").mkdir()
    return root


def test_iter_packages(tree: Path) -> None:
    found = [str(p.relative_to(tree)) for p in iter_packages(tree)]
    assert found == ["bot", "bot/sub", "tests/simulator", "v1.2", "workers/system/keyword"]


def test_find_package_dir(tree: Path) -> None:
    folder = tree / "workers" / "system" / "keyword"
    (folder / "tests").mkdir()
    inputs = folder / "tests" / "inputs.jsonl"
    inputs.write_text("{}\n", encoding="utf-8")
    assert find_package_dir(inputs) == folder
    assert find_package_dir(folder / "tests") == folder
    assert find_package_dir(folder) == folder
    assert find_package_dir(tree / "empty") is None


# ---------------------------------------------------------------------------- resolution


def test_resolve_by_id_loads_fully(tree: Path) -> None:
    package = resolve_assistant("workers.system.keyword", root=tree)
    assert package.id == "workers.system.keyword"
    assert package.path == tree / "workers" / "system" / "keyword"
    assert package.connector == "echo" and package.name == "Keyword"
    bot = resolve_assistant("bot", root=tree)
    assert (bot.description, bot.connector) == ("A bot", "echo")


def test_resolve_id_with_dotted_folder_name(tree: Path) -> None:
    assert resolve_assistant("v1.2", root=tree).name == "Dotted"


def test_resolve_by_id_discovering_root(tree: Path) -> None:
    cwd = tree.parent / "somewhere"
    cwd.mkdir()
    assert resolve_assistant("bot.sub", cwd=cwd).path == tree / "bot" / "sub"


def test_resolve_by_relative_and_absolute_path(tree: Path) -> None:
    cwd = tree.parent
    package = resolve_assistant("assistants/workers/system/keyword", cwd=cwd)
    assert package.id == "workers.system.keyword"
    assert resolve_assistant(str(tree / "bot"), cwd=Path("/")).id == "bot"
    assert resolve_assistant("./assistants/bot/package.yao", cwd=cwd).id == "bot"
    assert resolve_assistant(".", cwd=tree / "bot").id == "bot"


def test_resolve_path_relative_to_root(tree: Path) -> None:
    elsewhere = tree.parent / "elsewhere"
    elsewhere.mkdir()
    assert resolve_assistant("workers/system/keyword", root=tree, cwd=elsewhere).name == "Keyword"


def test_resolve_folder_name_in_cwd_without_root(tmp_path: Path) -> None:
    make_package(tmp_path / "proj" / "mybot", {"name": "Mine"})
    if find_assistants_root(cwd=tmp_path / "proj") is not None:
        pytest.skip("an assistants/ folder exists above the temporary directory")
    package = resolve_assistant("mybot", cwd=tmp_path / "proj")
    assert (package.id, package.name) == ("mybot", "Mine")


def test_unknown_id_suggests_close_ids(tree: Path) -> None:
    with pytest.raises(UnknownAssistantError) as info:
        resolve_assistant("workers.system.keywrd", root=tree)
    message = str(info.value)
    assert "unknown assistant 'workers.system.keywrd'" in message
    assert "did you mean workers.system.keyword?" in message
    assert str(tree) in message


def test_unknown_id_suggests_by_last_segment(tree: Path) -> None:
    with pytest.raises(UnknownAssistantError, match=r"did you mean workers\.system\.keyword"):
        resolve_assistant("keyword", root=tree)


def test_unknown_id_without_close_match(tree: Path) -> None:
    with pytest.raises(UnknownAssistantError, match="none is close to 'zzz'"):
        resolve_assistant("zzz", root=tree)


def test_unknown_id_without_root(tmp_path: Path) -> None:
    if find_assistants_root(cwd=tmp_path) is not None:
        pytest.skip("an assistants/ folder exists above the temporary directory")
    with pytest.raises(UnknownAssistantError) as info:
        resolve_assistant("bot", cwd=tmp_path)
    assert "no assistants root found" in str(info.value)
    assert "--root" in str(info.value) and "AGENT_ROOT" in str(info.value)


def test_unknown_path(tree: Path) -> None:
    with pytest.raises(UnknownAssistantError, match=r"no assistant at path \./nope"):
        resolve_assistant("./nope", root=tree, cwd=tree.parent)
    with pytest.raises(PackageError, match=r"no package\.yao in folder"):
        resolve_assistant("./empty", root=tree, cwd=tree)


def test_empty_reference(tree: Path) -> None:
    with pytest.raises(UnknownAssistantError, match="empty assistant reference"):
        resolve_assistant("  ", root=tree)


# ---------------------------------------------------------------------------- YAML cache


def test_read_yaml_is_cached_until_the_file_changes(tmp_path: Path) -> None:
    file = tmp_path / "x.yml"
    file.write_text("a: 1\n", encoding="utf-8")
    first = read_yaml(file)
    assert first == {"a": 1}
    assert read_yaml(file) is first
    file.write_text("a: 22\n", encoding="utf-8")
    stat = file.stat()
    os.utime(file, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert read_yaml(file) == {"a": 22}


def test_read_yaml_error_has_position(tmp_path: Path) -> None:
    file = tmp_path / "bad.yml"
    file.write_text("a: 1\nb: [1, 2\n", encoding="utf-8")
    with pytest.raises(PackageError) as info:
        read_yaml(file)
    assert info.value.path == str(file) and info.value.line == 3


# ---------------------------------------------------------------------------- the search section


def test_every_unknown_key_of_search_is_reported_in_file_order(tmp_path: Path) -> None:
    # agent list --check's mode: each problem, in the order of the file, each with its line
    text = (
        '{\n  "name": "b",\n  "search": {\n'
        '    "web": {"provider": "tavily", "max_result": 3},\n'
        '    "kb": {"treshold": 0.2},\n'
        '    "citaton": {}\n  }\n}'
    )
    folder = make_package(tmp_path / "bot", text)
    broken: list[PackageError] = []
    package = load_package(folder, problems_out=broken)
    file = folder / "package.yao"
    assert [error.message for error in broken] == [
        f"{file}:4: unknown field 'search.web.max_result' (did you mean 'max_results'?)",
        f"{file}:5: unknown field 'search.kb.treshold' (did you mean 'threshold'?)",
        f"{file}:6: unknown field 'search.citaton' (did you mean 'citation'?)",
    ]
    assert package.search_config is None  # the broken section is left out, the rest loads


def test_agent_list_check_reports_an_unknown_key_of_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from agentcli.cli.main import _register, app

    _register()
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    folder = make_package(
        tmp_path / "assistants" / "bot",
        '{"name": "b", "connector": "echo",\n "search": {"web": {"provider": "brave",\n'
        '  "base_ulr": "http://127.0.0.1:9"}}}',
    )
    result = CliRunner().invoke(
        app, ["list", "--check", "--root", str(tmp_path / "assistants")], catch_exceptions=False
    )
    assert result.exit_code == 1, result.output
    assert (
        f"    error: {folder / 'package.yao'}:3: unknown field 'search.web.base_ulr' "
        "(did you mean 'base_url'?)\n"
        "      hint: the fields of search.web: provider, max_results, base_url, api_key_env, "
        "timeout, engine\n"
    ) in result.output

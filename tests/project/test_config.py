"""The project config: discovery walking up, parsing with file:line, the environment over
the file, and the defaults inside and outside a project."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.errors import ConfigError
from agentcli.project import Setting, load_project, runs_folder
from agentcli.project.files import find_config_file

REPO_ROOT = Path(__file__).resolve().parents[2]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_found_walking_up_from_a_subfolder(tmp_path):
    config = write(tmp_path / "agentcli.yml", "parallel: 4\n")
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    project = load_project(deep, env={})
    assert project.path == config
    assert project.root == tmp_path
    assert project.parallel.value == 4
    assert project.parallel.source == f"{config}:1"


def test_outside_a_project_nothing_is_set_and_results_stay_beside_cases(tmp_path):
    project = load_project(tmp_path, env={})
    assert project.path is None and not project.found
    assert project.output.value == "beside-cases"
    assert project.runs_folder.value is None
    assert all(setting.source == "default" for _key, setting in project.settings())


def test_the_repository_itself_is_not_a_project():
    # pyproject.toml here has no [tool.agentcli]: docs and tests keep writing beside cases
    assert find_config_file(REPO_ROOT) is None


def test_every_key_parsed_and_paths_relative_to_the_file(tmp_path):
    (tmp_path / "agents").mkdir()
    write(tmp_path / "conf" / "connectors.yml", "fast: echo\n")
    config = write(
        tmp_path / "agentcli.yml",
        "assistants: agents\n"
        "connectors: conf/connectors.yml\n"
        "assistant: expense\n"
        "suites:\n"
        "  smoke: tests/smoke.jsonl\n"
        "  all: [tests/*.jsonl, more/**/*.yaml]\n"
        "parallel: 8\n"
        "timeout: 2m\n"
        "retries: 2\n"
        "runs_folder: out/runs\n"
        "output: beside-cases\n"
        "simulator: tests.user\n"
        "judge_connector: gpt-4o-mini\n"
        "exclude_tags: [slow, db]\n",
    )
    project = load_project(tmp_path, env={})
    assert project.assistants.value == tmp_path / "agents"
    assert project.connectors.value == tmp_path / "conf" / "connectors.yml"
    assert project.assistant.value == "expense"
    assert project.suites.value["smoke"].patterns == ("tests/smoke.jsonl",)
    assert project.suites.value["all"].patterns == ("tests/*.jsonl", "more/**/*.yaml")
    assert project.suites.value["all"].source == f"{config}:6"
    assert project.timeout.value == 120.0
    assert project.retries.value == 2
    assert project.runs_folder.value == tmp_path / "out" / "runs"
    assert project.output.value == "beside-cases"
    assert project.simulator.value == "tests.user"
    assert project.judge_connector.value == "gpt-4o-mini"
    assert project.exclude_tags.value == ("slow", "db")
    assert project.exclude_tags.source == f"{config}:14"


def test_in_a_project_the_runs_folder_defaults_under_its_root(tmp_path):
    write(tmp_path / "agentcli.yml", "")
    (tmp_path / "x").mkdir()
    project = load_project(tmp_path / "x", env={})
    assert project.output == Setting("runs", "default")
    assert runs_folder(project) == tmp_path / ".agentcli" / "runs"


def test_environment_wins_over_the_file(tmp_path):
    (tmp_path / "agents").mkdir()
    write(tmp_path / "agentcli.yml", "parallel: 4\ntimeout: 10s\nexclude_tags: slow\n")
    env = {"AGENT_PARALLEL": "6", "AGENT_EXCLUDE_TAGS": "db,net", "AGENT_ROOT": "agents"}
    project = load_project(tmp_path, env=env)
    assert (project.parallel.value, project.parallel.source) == (6, "env AGENT_PARALLEL")
    assert project.exclude_tags.value == ("db", "net")
    assert project.timeout.value == 10.0  # not in the environment: the file's
    assert project.assistants.value == tmp_path / "agents"
    assert project.assistants.source == "env AGENT_ROOT"


def test_a_bad_environment_value_names_the_variable(tmp_path):
    with pytest.raises(ConfigError, match=r"^env AGENT_PARALLEL: expected a whole number"):
        load_project(tmp_path, env={"AGENT_PARALLEL": "many"})


def test_unknown_keys_name_file_line_and_the_closest_key(tmp_path):
    config = write(tmp_path / "agentcli.yml", "parallel: 2\nsuits:\n  a: x.jsonl\nzzz: 1\n")
    with pytest.raises(ConfigError) as raised:
        load_project(tmp_path, env={})
    assert raised.value.message == (
        f"{config}:2: unknown key 'suits' (did you mean 'suites'?); {config}:4: unknown key 'zzz'"
    )
    assert raised.value.hint is not None and "assistants, connectors" in raised.value.hint


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("parallel: four\n", ":1: parallel: expected a whole number, got text"),
        ("parallel: 0\n", ":1: parallel: must be 1 or more, got 0"),
        ("retries: -1\n", ":1: retries: must be 0 or more, got -1"),
        ("\n\ntimeout: soon\n", ':3: timeout: invalid duration "soon"'),
        ("output: runz\n", ":1: output 'runz': use runs or beside-cases (did you mean 'runs'?)"),
        ("assistant: [a, b]\n", ":1: assistant: expected text, got a list"),
        ("exclude_tags: [two words]\n", ":1: exclude_tags: tag 'two words' is not one word"),
        ("suites: tests/*.jsonl\n", ":1: suites must map names to case-file globs, got text"),
        ("suites:\n  smoke: 3\n", ":2: suite 'smoke' must be a glob or a list of globs"),
        ("suites:\n  y: []\n", ":2: suite 'y' has no globs: give at least one"),
        ("suites:\n  y: [a, 3]\n", ":2: suite 'y': each glob must be text, got a number"),
        ('runs_folder: ""\n', ":1: runs_folder: must not be empty"),
        ("exclude_tags: [a, 3]\n", ":1: exclude_tags: a tag must be text, got a number"),
        ("{parallel: 2, retries: x}\n", ":1: retries: expected a whole number, got text"),
        ("assistants: nowhere\n", ":1: assistants: nowhere is not a folder"),
        ("connectors: none.yml\n", ":1: connectors: none.yml is not a file"),
    ],
)
def test_wrong_types_name_file_and_line(tmp_path, text, message):
    config = write(tmp_path / "agentcli.yml", text)
    with pytest.raises(ConfigError) as raised:
        load_project(tmp_path, env={})
    assert raised.value.message.startswith(f"{config}{message}")


def test_yaml_is_safe_loaded(tmp_path):
    write(tmp_path / "agentcli.yml", "assistant: !!python/object/apply:os.system ['echo hi']\n")
    with pytest.raises(ConfigError, match=r"agentcli\.yml:1"):
        load_project(tmp_path, env={})


def test_a_config_that_is_not_a_mapping(tmp_path):
    config = write(tmp_path / "agentcli.yml", "- a\n- b\n")
    with pytest.raises(ConfigError, match=f"^{config}:1: the project config must be a mapping"):
        load_project(tmp_path, env={})


def test_pyproject_tool_table_with_lines(tmp_path):
    pyproject = write(
        tmp_path / "pyproject.toml",
        '[project]\nname = "x"\n\n[tool.agentcli]\nparallel = 3\nexclude_tags = ["slow"]\n\n'
        '[tool.agentcli.suites]\nsmoke = "tests/*.jsonl"\n',
    )
    project = load_project(tmp_path, env={})
    assert project.path == pyproject
    assert project.parallel.source == f"{pyproject}:5"
    assert project.suites.value["smoke"].source == f"{pyproject}:9"


def test_pyproject_unknown_key_has_its_line(tmp_path):
    pyproject = write(tmp_path / "pyproject.toml", "[tool.agentcli]\nparalel = 3\n")
    with pytest.raises(ConfigError) as raised:
        load_project(tmp_path, env={})
    assert (
        raised.value.message == f"{pyproject}:2: unknown key 'paralel' (did you mean 'parallel'?)"
    )


def test_a_pyproject_without_the_table_is_walked_past(tmp_path):
    config = write(tmp_path / "agentcli.yml", "parallel: 2\n")
    write(tmp_path / "pkg" / "pyproject.toml", '[project]\nname = "pkg"\n')
    assert load_project(tmp_path / "pkg", env={}).path == config


def test_agentcli_yml_wins_over_pyproject_in_one_folder(tmp_path):
    config = write(tmp_path / "agentcli.yml", "parallel: 2\n")
    write(tmp_path / "pyproject.toml", "[tool.agentcli]\nparallel = 3\n")
    assert load_project(tmp_path, env={}).path == config


def test_unknown_suite_suggests_the_closest(tmp_path):
    write(tmp_path / "agentcli.yml", "suites:\n  smoke: a.jsonl\n  nightly: b.jsonl\n")
    project = load_project(tmp_path, env={})
    with pytest.raises(
        ConfigError, match=r"--suite smok: no such suite in .* \(did you mean 'smoke'\?\)"
    ):
        project.suite("smok")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            'parallel: "4"\n',
            ':1: parallel: expected a number, got text "4": write 4 without quotes',
        ),
        (
            "\nretries: '2'\n",
            ':2: retries: expected a number, got text "2": write 2 without quotes',
        ),
        (
            'timeout: "30"\n',
            ':1: timeout: expected a number, got text "30": write 30 without quotes, or a '
            "duration such as 30s",
        ),
        (
            'timeout: " 2.5 "\n',
            ':1: timeout: expected a number, got text " 2.5 ": write 2.5 without quotes, or a '
            "duration such as 2.5s",
        ),
        ('{retries: 1, parallel: "-1"}\n', ':1: parallel: expected a number, got text "-1"'),
    ],
)
def test_a_quoted_number_is_refused_like_the_rest_of_our_config(tmp_path, text, message):
    config = write(tmp_path / "agentcli.yml", text)
    with pytest.raises(ConfigError) as raised:
        load_project(tmp_path, env={})
    assert raised.value.message.startswith(f"{config}{message}"), raised.value.message


def test_a_quoted_number_is_refused_in_pyproject_too(tmp_path):
    pyproject = write(tmp_path / "pyproject.toml", '[tool.agentcli]\nretries = 1\nparallel = "4"\n')
    with pytest.raises(ConfigError) as raised:
        load_project(tmp_path, env={})
    assert raised.value.message == (
        f'{pyproject}:3: parallel: expected a number, got text "4": write 4 without quotes'
    )


def test_numbers_durations_and_the_environment_s_text_are_accepted(tmp_path):
    write(tmp_path / "agentcli.yml", "parallel: 4\ntimeout: 30s\nretries: 0\n")
    project = load_project(tmp_path, env={})
    assert (project.parallel.value, project.timeout.value, project.retries.value) == (4, 30.0, 0)
    write(tmp_path / "agentcli.yml", "timeout: 2.5\n")
    assert load_project(tmp_path, env={}).timeout.value == 2.5
    # a variable is text by nature: AGENT_PARALLEL=4 is the number 4
    env = {"AGENT_PARALLEL": "4", "AGENT_TIMEOUT": "30", "AGENT_RETRIES": "1"}
    project = load_project(tmp_path, env=env)
    assert (project.parallel.value, project.timeout.value, project.retries.value) == (4, 30.0, 1)


def test_cite_names_where_a_setting_was_given(tmp_path):
    config = write(tmp_path / "agentcli.yml", "parallel: 2\njudge_connector: fast\n")
    project = load_project(tmp_path, env={"AGENT_ASSISTANT": "expense"})
    assert project.cite("judge_connector") == f"{config}:2: judge_connector"
    assert project.cite("assistant") == "env AGENT_ASSISTANT"

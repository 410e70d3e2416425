"""Finding the project config file: a name that is not a file, and two config files in one
folder, are errors naming them (never a silent walk past, nor a silent pick)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.errors import ConfigError
from agentcli.project import load_project
from agentcli.project.files import find_config_file


def test_an_agentcli_yml_that_is_a_folder_is_an_error_naming_it(tmp_path: Path) -> None:
    # it used to be walked past: a parent's config (here, one saying parallel: 9) was read
    (tmp_path / "agentcli.yml").write_text("parallel: 9\n", encoding="utf-8")
    folder = tmp_path / "app" / "agentcli.yml"
    folder.mkdir(parents=True)
    with pytest.raises(ConfigError) as raised:
        load_project(tmp_path / "app", env={})
    assert raised.value.message == (f"{folder} is a folder; the project config must be a YAML file")
    assert raised.value.hint == (
        "remove or rename the folder, and put the project's settings in a file agentcli.yml "
        "(docs/eval.md#project-config)"
    )


def test_an_agentcli_yaml_folder_is_named_too(tmp_path: Path) -> None:
    (tmp_path / "agentcli.yaml").mkdir()
    with pytest.raises(ConfigError, match=r"agentcli\.yaml is a folder"):
        find_config_file(tmp_path)


def test_a_broken_link_is_an_error_naming_its_target(tmp_path: Path) -> None:
    (tmp_path / "agentcli.yml").symlink_to(tmp_path / "gone.yml")
    with pytest.raises(ConfigError) as raised:
        find_config_file(tmp_path)
    assert raised.value.message == (
        f"{tmp_path / 'agentcli.yml'} is a link to {tmp_path / 'gone.yml'}, which does not exist"
    )


def test_a_link_to_a_config_file_is_read(tmp_path: Path) -> None:
    (tmp_path / "shared.yml").write_text("parallel: 5\n", encoding="utf-8")
    (tmp_path / "agentcli.yml").symlink_to(tmp_path / "shared.yml")
    assert load_project(tmp_path, env={}).parallel.value == 5


def test_both_yml_and_yaml_in_one_folder_is_an_error_naming_both(tmp_path: Path) -> None:
    # it used to read agentcli.yml and silently ignore agentcli.yaml
    (tmp_path / "agentcli.yml").write_text("parallel: 2\n", encoding="utf-8")
    (tmp_path / "agentcli.yaml").write_text("parallel: 3\n", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    with pytest.raises(ConfigError) as raised:
        load_project(tmp_path / "sub", env={})
    assert raised.value.message == (
        f"{tmp_path / 'agentcli.yml'} and {tmp_path / 'agentcli.yaml'}: two project configs "
        "in one folder; which one is meant cannot be told"
    )
    assert raised.value.hint == (
        "keep one: move the settings of agentcli.yaml into agentcli.yml and delete agentcli.yaml"
    )


def test_the_nearest_config_wins_before_a_conflict_further_up_is_seen(tmp_path: Path) -> None:
    (tmp_path / "agentcli.yml").write_text("parallel: 2\n", encoding="utf-8")
    (tmp_path / "agentcli.yaml").write_text("parallel: 3\n", encoding="utf-8")
    inner = tmp_path / "inner" / "agentcli.yaml"
    inner.parent.mkdir()
    inner.write_text("parallel: 4\n", encoding="utf-8")
    assert find_config_file(inner.parent) == inner

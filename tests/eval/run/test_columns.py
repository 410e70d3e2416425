"""The columns of a connector matrix: -c given several times, --matrix names or a file, and
the clear errors (file:line) of a matrix given wrong."""

from __future__ import annotations

import pytest

from agentcli.errors import ConfigError
from agentcli.eval.run.columns import matrix_columns
from agentcli.eval.run.options import EvalOptions


def test_c_given_several_times_is_a_matrix_once_is_a_connector():
    several = EvalOptions.from_flags({"connector": ["a", "b", "c"]})
    assert (several.connector, several.connectors) == (None, ["a", "b", "c"])
    once = EvalOptions.from_flags({"connector": ["a"]})
    assert (once.connector, once.connectors) == ("a", [])
    assert EvalOptions.from_flags({"connector": None}).connector is None


def test_matrix_names_joined_by_commas(tmp_path):
    assert matrix_columns([], "gpt-4o, local,scripted:b.yml", cwd=tmp_path) == [
        "gpt-4o",
        "local",
        "scripted:b.yml",
    ]
    assert matrix_columns(["a", "b"], None, cwd=tmp_path) == ["a", "b"]
    assert matrix_columns([], None, cwd=tmp_path) == []


@pytest.mark.parametrize("text", ["connectors:\n  - a\n  - b\n", "- a\n- b\n", '["a", "b"]'])
def test_a_matrix_file_lists_the_connectors(tmp_path, text):
    (tmp_path / "matrix.yml").write_text(text)
    assert matrix_columns([], "matrix.yml", cwd=tmp_path) == ["a", "b"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("connectors:\n  - a\n  - 3\n", r"^matrix.yml:3: entry 2 is 3, not a connector name"),
        ("models: [a]\n", r"^matrix.yml:1: no `connectors` list"),
        ("connectors: a\n", r"^matrix.yml:1: expected a list of connector names"),
        ("connectors:\n  - a\n  - a\n", r"connector 'a' is given twice"),
        ("connectors: [a\n", r"matrix.yml"),
    ],
)
def test_a_bad_matrix_file_is_named_with_its_line(tmp_path, text, message):
    (tmp_path / "matrix.yml").write_text(text)
    with pytest.raises(ConfigError, match=message):
        matrix_columns([], "matrix.yml", cwd=tmp_path)


def test_a_missing_file_both_forms_and_empty_names_are_refused(tmp_path):
    with pytest.raises(ConfigError, match=r"--matrix nope.yml: no such file"):
        matrix_columns([], "nope.yml", cwd=tmp_path)
    with pytest.raises(ConfigError, match=r"-c several times or --matrix, not both"):
        matrix_columns(["a", "b"], "c,d", cwd=tmp_path)
    with pytest.raises(ConfigError, match=r"an empty connector name"):
        matrix_columns([], "a,,b", cwd=tmp_path)
    with pytest.raises(ConfigError, match=r"-c: connector 'a' is given twice"):
        matrix_columns(["a", "a"], None, cwd=tmp_path)

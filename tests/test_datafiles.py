"""The one YAML/JSON reader: its limits hold on libyaml and on the pure-Python loader."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agentcli import datafiles
from agentcli.datafiles import (
    MAX_DEPTH,
    DuplicateKeyError,
    YamlDocument,
    field_path,
    line_of,
    load_yaml,
    loads_json,
    read_text,
    read_yaml_lines,
)
from agentcli.errors import PackageError


@pytest.fixture(params=[True, False], ids=["libyaml", "python"])
def loader(request, monkeypatch) -> bool:
    """Each YAML test runs with libyaml and with the pure-Python loader."""
    monkeypatch.setattr(datafiles, "USE_LIBYAML", request.param)
    return request.param


def refused(text: str) -> PackageError:
    """The error ``load_yaml`` raises for ``text``."""
    with pytest.raises(PackageError) as caught:
        load_yaml(text, "f.yaml")
    return caught.value


def laughs(levels: int) -> str:
    """Nested aliases expanding to 9**levels scalars."""
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def test_an_alias_bomb_is_refused_at_its_line(loader):
    error = refused(laughs(9))
    assert error.path == "f.yaml" and error.line == 7, str(error)
    assert "aliases expand this to more than 1,000,000 nodes" in error.detail


def test_aliases_within_the_limit_are_shared_values(loader):
    value = load_yaml(laughs(5), "f.yaml")
    assert len(value["a4"]) == 9 and value["a4"][0] is value["a4"][1]
    merged = load_yaml("base: &b {x: 1, y: 2}\nthis:\n  <<: *b\n  y: 3\n", "f.yaml")
    assert merged["this"] == {"x": 1, "y": 3}  # a merge key is no duplicate


def test_a_recursive_alias_is_refused(loader):
    error = refused("a: &m\n  self: *m\n")
    assert error.line == 1 and "recursive alias" in error.detail  # at the anchor


@pytest.mark.parametrize(
    "text",
    [
        "x: " + "[" * 10_000 + "]" * 10_000,
        "".join(" " * i + "-\n" for i in range(MAX_DEPTH + 5)),
        "x: " + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1),
    ],
    ids=["flow-10k", "block", "just-over"],
)
def test_nesting_beyond_the_limit_is_refused(loader, text):
    error = refused(text)
    assert error.line is not None and f"nested more than {MAX_DEPTH} levels" in error.detail


def test_nesting_at_the_limit_loads(loader):
    value = load_yaml("[" * MAX_DEPTH + "]" * MAX_DEPTH, "f.yaml")
    for _ in range(MAX_DEPTH - 1):
        value = value[0]
    assert value == []


def test_duplicate_keys_name_both_lines(loader):
    document = YamlDocument("a: 1\nb:\n  c: 1\n  c: 2\na: 3\n", "f.yaml")
    try:
        found = [(e.line, e.detail) for e in document.duplicates]
    finally:
        document.close()
    assert found == [
        (4, 'duplicate key "c" (first at line 3); remove one of them'),
        (5, 'duplicate key "a" (first at line 1); remove one of them'),
    ]
    assert refused("a: 1\na: 2\n").line == 2
    assert load_yaml("1: a\n'1': b\n", "f.yaml") == {1: "a", "1": "b"}  # different keys


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("n: " + "9" * 5000, "a number with more than 4300 digits"),
        ("d: 2001-13-45", "month must be in 1..12"),
        ("x: !!python/name:os.system", "could not determine a constructor"),
        ("a: [unclosed\n", "expected ',' or ']', but got '<stream end>'"),
        ("a: b\x01c\n", "character #x0001 is not allowed"),
    ],
)
def test_values_python_cannot_build_are_errors_with_a_line(loader, text, message):
    error = refused(text)
    assert error.line is not None and message in error.detail, str(error)


def test_read_text_limits_and_encodings(tmp_path: Path):
    path = tmp_path / "f.yaml"
    path.write_bytes(b"\xef\xbb\xbfa: 1\n")
    assert read_text(path) == "a: 1\n"  # a UTF-8 BOM is dropped
    path.write_bytes(b"x" * 101)
    with pytest.raises(PackageError, match="larger than the 0 MB limit"):
        read_text(path, limit=100)
    path.write_bytes("a: 1\n".encode("utf-16"))
    with pytest.raises(PackageError, match=r"f\.yaml:1: the file is UTF-16 text"):
        read_text(path)
    path.write_bytes(b"a: 1\nb: caf\xe9\n")
    with pytest.raises(PackageError, match=r"f\.yaml:2:7: not UTF-8 text"):
        read_text(path)
    with pytest.raises(PackageError, match="is a directory"):
        read_text(tmp_path)
    with pytest.raises(PackageError, match="cannot read file: File name too long"):
        read_text(tmp_path / ("n" * 300))
    with pytest.raises(PackageError, match="cannot read file: embedded null byte"):
        read_text(tmp_path / "a\0b")


@pytest.mark.parametrize(
    ("text", "message", "line", "column"),
    [
        (
            '{"a":\n' + "[" * 100_000,
            f"lists and objects nested more than {MAX_DEPTH} levels deep",
            2,
            MAX_DEPTH,
        ),
        ("[" + '"[[[[", ' * 100 + '"x"]', None, None, None),  # brackets in strings are text
        ('{"n": ' + "9" * 5000 + "}", "a number with more than 4300 digits", 1, 7),
    ],
    ids=["deep", "strings", "digits"],
)
def test_loads_json_limits(text, message, line, column):
    if message is None:
        assert len(loads_json(text)) == 101
        return
    with pytest.raises(json.JSONDecodeError) as caught:
        loads_json(text)
    assert (caught.value.msg, caught.value.lineno, caught.value.colno) == (message, line, column)


def test_loads_json_duplicate_keys_only_when_asked():
    assert loads_json('{"a": 1, "a": 2}') == {"a": 2}
    with pytest.raises(DuplicateKeyError, match='duplicate key "a" in one object'):
        loads_json('{"b": {"a": 1, "a": 2}}', unique_keys=True)


# --- the shared YAML reader with lines ------------------------------------------------------


def test_read_yaml_lines_returns_data_and_lines(tmp_path: Path, loader):
    path = tmp_path / "x.yml"
    path.write_text("# comment\na:\n  b: 1\n  c:\n    - x\n    - y\n", encoding="utf-8")
    data, lines = read_yaml_lines(path)
    assert data == {"a": {"b": 1, "c": ["x", "y"]}}
    assert lines[("a",)] == 2 and lines[("a", "b")] == 3 and lines[("a", "c", 1)] == 6
    assert line_of(lines, ("a", "c", 1, "missing")) == 6


def test_read_yaml_lines_of_empty_file(tmp_path: Path):
    (tmp_path / "x.yml").write_text("", encoding="utf-8")
    assert read_yaml_lines(tmp_path / "x.yml") == (None, {})


def test_read_yaml_lines_rejects_bad_bytes_and_duplicates(tmp_path: Path):
    path = tmp_path / "x.yml"
    path.write_bytes(b"a: \xff\n")
    with pytest.raises(PackageError, match=r"x\.yml:1:4: not UTF-8 text"):
        read_yaml_lines(path)
    path.write_text("a: 1\na: 2\n", encoding="utf-8")
    with pytest.raises(
        PackageError, match=r"shown\.yml:2:1: duplicate key \"a\" \(first at line 1\)"
    ):
        read_yaml_lines(path, name="shown.yml")


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ("- a: 1\n- b: 2\n\n- c\n", [1, 2, 4]),
        ("id: one\ninput: x\n", [1]),
        ("", []),
        ("just text\n", None),
    ],
    ids=["list", "mapping", "empty", "scalar"],
)
def test_entries_are_a_lists_items_or_the_one_mapping(loader, text, lines):
    document = YamlDocument(text, "x.yml")
    try:
        entries = document.entries()
        found = None if entries is None else [datafiles.node_line(node) for node in entries]
        assert found == lines
    finally:
        document.close()


def test_field_path_reads_as_users_write_it():
    assert field_path(("rules", 2, "when", "user")) == "rules[2].when.user"
    assert field_path([0, "assert"]) == "[0].assert"
    assert field_path(()) == ""


def test_datafiles_is_the_only_yaml_reader():
    """Every YAML file is read by datafiles, with its limits and errors; no module parses
    YAML (or walks PyYAML nodes) on its own."""
    package = Path(datafiles.__file__).parent
    readers = [
        str(path.relative_to(package))
        for path in sorted(package.rglob("*.py"))
        if path.name != "datafiles.py"
        and re.search(r"^\s*(import yaml|from yaml\b)", path.read_text(encoding="utf-8"), re.M)
    ]
    assert readers == []


@pytest.mark.parametrize(
    ("text", "token"),
    [
        ("[NaN]", "NaN"),
        ('{"a": Infinity}', "Infinity"),
        ("-Infinity", "-Infinity"),
        ("1e999", "1e999"),
    ],
)
def test_loads_json_finite_refuses_what_json_does_not_allow(text, token):
    # json reads NaN and Infinity (and 1e999 as inf) though JSON has neither
    assert loads_json(text) is not None
    with pytest.raises(datafiles.NonFiniteNumber) as raised:
        loads_json(text, finite=True)
    assert raised.value.token == token


def test_loads_json_finite_reads_finite_numbers_as_before():
    assert loads_json('{"a": [1, 2.5, -1e308, 0.1]}', finite=True) == {"a": [1, 2.5, -1e308, 0.1]}

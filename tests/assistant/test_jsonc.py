"""JSON with comments: comments, trailing commas, strings that look like comments, error positions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentcli.assistant.jsonc import load_jsonc, parse_jsonc, strip_jsonc
from agentcli.errors import PackageError


def test_plain_json() -> None:
    assert parse_jsonc('{"a": [1, 2], "b": null}') == {"a": [1, 2], "b": None}


def test_line_and_block_comments() -> None:
    text = """
    // leading comment
    {
      "a": 1, // trailing comment
      /* block
         over lines */ "b": 2,
      "c": /* inline */ 3
    }
    """
    assert parse_jsonc(text) == {"a": 1, "b": 2, "c": 3}


def test_comment_markers_inside_strings_are_kept() -> None:
    text = '{"url": "https://example.com//x", "glob": "/* not a comment */", "q": "say \\"//hi\\""} // c'
    assert parse_jsonc(text) == {
        "url": "https://example.com//x",
        "glob": "/* not a comment */",
        "q": 'say "//hi"',
    }


def test_escaped_backslash_before_closing_quote() -> None:
    assert parse_jsonc('{"path": "C:\\\\", // c\n "n": 1}') == {"path": "C:\\", "n": 1}


def test_trailing_commas() -> None:
    assert parse_jsonc('{"a": [1, 2,], "b": {"c": 1,},}') == {"a": [1, 2], "b": {"c": 1}}


def test_trailing_comma_followed_by_comment() -> None:
    assert parse_jsonc('{"a": [1, // one\n /* x */ ],\n}') == {"a": [1]}


def test_comma_inside_string_before_bracket_is_kept() -> None:
    assert parse_jsonc('{"a": ",]", "b": ",}",}') == {"a": ",]", "b": ",}"}


def test_strip_keeps_offsets() -> None:
    text = '{\n  "a": 1, // c\n  /* b\n */ "b": [1,],\n}'
    stripped = strip_jsonc(text)
    assert len(stripped) == len(text)
    assert stripped.count("\n") == text.count("\n")


def test_error_reports_line_and_column_of_original_text() -> None:
    text = '{\n  // a comment\n  "a": 1 /* x */\n  "b": 2\n}'
    with pytest.raises(PackageError) as info:
        parse_jsonc(text, path="pkg/package.yao")
    error = info.value
    assert (error.path, error.line, error.column) == ("pkg/package.yao", 4, 3)
    assert str(error).startswith("pkg/package.yao:4:3: invalid JSON: Expecting ',' delimiter")


def test_error_position_after_multiline_block_comment() -> None:
    text = '{\n/* one\ntwo\nthree */ "a": tru\n}'
    with pytest.raises(PackageError) as info:
        parse_jsonc(text)
    assert (info.value.line, info.value.column) == (4, 15)


def test_unterminated_block_comment() -> None:
    with pytest.raises(PackageError) as info:
        parse_jsonc('{"a": 1,\n  /* never closed', path="f.yao")
    assert (info.value.line, info.value.column) == (2, 3)
    assert "unterminated /* comment" in str(info.value)


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ('{"name": "k", "connector": "scripted", "connector": "echo"}', (1, 40), "connector"),
        ('{\n  "a": {"x": 1, // c\n  "x": 2},\n}', (3, 3), "x"),
        ('[{"b": 1}, {"c": [1, {"d": 1,\n "d": 2}]}]', (2, 2), "d"),
    ],
)
def test_a_key_named_twice_in_one_object_is_refused_at_the_second(
    text: str, where: tuple[int, int], message: str
) -> None:
    # json would keep the last silently: a package's second "connector" won unnoticed
    with pytest.raises(PackageError) as info:
        parse_jsonc(text, path="f.yao")
    assert (info.value.line, info.value.column) == where
    assert info.value.detail.startswith(f'duplicate key "{message}" (first at line ')


def test_the_same_key_in_different_objects_is_fine() -> None:
    assert parse_jsonc('{"a": {"x": 1}, "b": {"x": 2}, "c": [{"x": 3}]}')["b"] == {"x": 2}


def test_empty_file() -> None:
    with pytest.raises(PackageError, match="file is empty"):
        parse_jsonc("  // only a comment\n", path="f.yao")


def test_bom_is_ignored() -> None:
    assert parse_jsonc('\ufeff{"a": 1}') == {"a": 1}


def test_load_jsonc_reads_file(tmp_path: Path) -> None:
    file = tmp_path / "x.jsonc"
    file.write_text('{"a": 1, // c\n}', encoding="utf-8")
    assert load_jsonc(file) == {"a": 1}


def test_load_jsonc_rejects_non_utf8(tmp_path: Path) -> None:
    file = tmp_path / "x.jsonc"
    file.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(PackageError, match="not UTF-8"):
        load_jsonc(file)


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='ab/*,]} "\\\n'),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.text(alphabet="ab/*", max_size=3), children, max_size=3)
    ),
    max_leaves=8,
)


@given(_json_values)
def test_any_json_document_round_trips(value: object) -> None:
    text = json.dumps(value, indent=1)
    assert parse_jsonc(text + "\n// trailing") == value

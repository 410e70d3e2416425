"""Hostile case files through the real CLI: every one is refused before anything runs, with
exit 2 and a ``file:line`` message — never a hang, a traceback or ``internal error:``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from .harness import agent

DEEP = 100_000  # far beyond any recursion limit


def case(**fields: object) -> str:
    """One JSON case line."""
    return json.dumps({"id": "a", "input": "hi"} | fields) + "\n"


def image(source: str, case_id: str = "a") -> str:
    """A case whose input is an image part with ``source``."""
    content = [{"type": "image", "source": source}]
    return case(id=case_id, input={"role": "user", "content": content})


def billion_laughs(levels: int = 9) -> str:
    """A YAML case whose metadata expands to 9**levels strings through aliases."""
    lines = ["- id: a", "  input: hi", "  metadata:", '    l0: &l0 ["lol","lol","lol","lol"]']
    for level in range(1, levels):
        lines.append(f"    l{level}: &l{level} [" + ", ".join([f"*l{level - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


# (file name, bytes, the line the message must name, a word it must hold)
HOSTILE: list[tuple[str, bytes, int, str]] = [
    ("bomb.yaml", billion_laughs().encode(), 10, "alias"),
    ("recursive.yaml", b"- id: a\n  input: hi\n  metadata: &m {self: *m}\n", 3, "recursive"),
    ("deep.json", b'[{"id": "a", "metadata": ' + b"[" * DEEP + b"]" * DEEP + b"}]", 1, "nested"),
    ("deep.jsonl", case().encode() + b'{"id": "b", "metadata": ' + b"[" * DEEP + b"}\n", 2, "nested"),
    ("deep.yaml", b"- id: a\n  metadata: " + b"[" * DEEP + b"]" * DEEP + b"\n", 2, "nested"),
    ("deep-block.yaml", b"- id: a\n  m:\n" + b"".join(b" " * i + b"- \n" for i in range(3, 300)), 65, "nested"),
    ("dup.yaml", b"- id: a\n  input: hi\n  input: ho\n", 3, "line 2"),
    ("dup-meta.yaml", b"- id: a\n  input: hi\n  metadata:\n    k: 1\n    k: 2\n", 5, "line 4"),
    ("dup.json", b'[{"id": "a", "input": "hi"},\n {"id": "b", "input": "x", "input": "y"}]', 2, "duplicate"),
    ("dup.jsonl", b'{"id": "a", "input": "hi", "metadata": {"k": 1, "k": 2}}\n', 1, "duplicate"),
    ("nul.jsonl", image("file://a\x00b.png").encode(), 1, "NUL"),
    ("long-name.jsonl", case().encode() + image("file://" + "a" * 300 + ".png", "b").encode(), 2, "too long"),
    ("dir-source.jsonl", image("file://.").encode(), 1, "directory"),
    ("latin1.jsonl", case().encode() + b'{"id": "b", "input": "caf\xe9"}\n', 2, "UTF-8"),
    ("latin1.yaml", b"- id: a\n  input: hi\n- id: b\n  input: caf\xe9\n", 4, "UTF-8"),
    ("utf16.jsonl", case().encode("utf-16"), 1, "UTF-16"),
    ("utf16.yaml", "- id: a\n  input: hi\n".encode("utf-16"), 1, "UTF-16"),
    ("control.yaml", b"- id: a\n  input: a\x01b\n", 2, "#x0001"),
    ("control.jsonl", b'{"id": "a", "input": "a\x01b"}\n', 1, "control character"),
    ("digits.jsonl", case(metadata={}).replace("{}", "9" * 5000).encode(), 1, "digits"),
    ("digits.yaml", b"- id: a\n  input: hi\n  metadata: {n: " + b"9" * 5000 + b"}\n", 3, "digits"),
    ("bad-date.yaml", b"- id: a\n  input: hi\n  metadata: {d: 2001-13-45}\n", 3, "month"),
    ("python-tag.yaml", b"- id: a\n  input: !!python/object/apply:os.system [id]\n", 2, "tag"),
    ("bom-then-junk.json", b"\xef\xbb\xbf[" + b"{" * 70, 1, "nested"),
]  # fmt: skip
LOCATED = re.compile(r"^error: [\w./-]+:\d+: ", re.MULTILINE)


def check_refused(result, name: str, line: int, word: str) -> None:
    """Exit 2, ``name:line:`` and ``word`` in the message, and no sign of a crash."""
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    assert "Traceback" not in output and "internal error" not in output, output
    assert f"{name}:{line}: " in output, output
    assert word in output, output
    assert len(output) < 2000, output  # one clear message, not a dump of the input


@pytest.mark.parametrize(("name", "data", "line", "word"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_case_file_is_refused_with_its_line(project: Path, name, data, line, word):
    path = project / name
    path.write_bytes(data)
    result = agent(project, "eval", "probe", f"@{name}", "-o", "out.jsonl", timeout=30)
    check_refused(result, name, line, word)
    assert LOCATED.search(result.stderr), result.stderr
    assert not (project / "out.jsonl").exists()  # refused before anything ran


def test_oversized_documents_are_refused_unread(project: Path):
    """A YAML/JSON file over 50 MB, and a .jsonl line over 50 MB, are refused (the other
    lines of the .jsonl are still checked)."""
    blob = "x" * (50 * 1024 * 1024 + 1)
    (project / "big.yaml").write_text(f"- id: a\n  input: {blob}\n", encoding="utf-8")
    result = agent(project, "eval", "probe", "@big.yaml", timeout=30)
    assert (
        result.returncode == 2 and "big.yaml: file is larger than the 50 MB limit" in result.stderr
    )
    line = json.dumps({"id": "b", "input": blob})
    (project / "big.jsonl").write_text(case() + line + "\n" + case(id="a"), encoding="utf-8")
    result = agent(project, "eval", "probe", "@big.jsonl", timeout=30)
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    assert "big.jsonl:2: line is longer than the 50 MB limit for one case" in output
    assert 'big.jsonl:3: duplicate id "a" (first defined at line 1)' in output
    assert "Traceback" not in output and "internal error" not in output


def test_a_directory_or_an_unusable_name_as_the_case_file(project: Path):
    (project / "cases.jsonl").mkdir()
    result = agent(project, "eval", "probe", "@cases.jsonl")
    assert result.returncode == 2 and "is a directory, not a case file" in result.stderr
    result = agent(project, "eval", "probe", "@" + "c" * 300 + ".jsonl")
    assert result.returncode == 2 and "File name too long" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr


def test_a_deep_or_unreadable_ctx_file(project: Path):
    (project / "ctx.json").write_text('{"metadata": ' + "[" * DEEP + "]" * DEEP + "}")
    (project / "cases.jsonl").write_text(case(), encoding="utf-8")
    result = agent(project, "eval", "probe", "@cases.jsonl", "--ctx", "ctx.json")
    assert result.returncode == 2 and "ctx.json:1:" in result.stderr, result.stderr
    assert "nested more than 64 levels deep" in result.stderr
    result = agent(project, "eval", "probe", "@cases.jsonl", "--ctx", ".")
    assert result.returncode == 2 and "is a directory" in result.stderr, result.stderr


def test_a_deep_package_yao(project: Path):
    package = project / "assistants" / "deep"
    package.mkdir()
    (package / "package.yao").write_text(
        '{"name": "deep",\n "options": ' + "[" * DEEP + "]" * DEEP + "}"
    )
    result = agent(project, "eval", "deep", "hello")
    assert result.returncode == 2, result.stderr
    assert "package.yao:2:" in result.stderr and "nested more than 64 levels" in result.stderr


def test_a_deep_results_file(project: Path):
    (project / "results.jsonl").write_text(
        '{"type": "header"}\n{"type": "result", "x": ' + "[" * DEEP + "]" * DEEP + "}\n{}\n"
    )
    result = agent(project, "report", "results.jsonl", "-o", "report.md")
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    assert "results.jsonl:2: corrupt results line" in output and "nested" in output
    assert "Traceback" not in output and "internal error" not in output

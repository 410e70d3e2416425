"""The ``file`` assertion: a file of the case's sandbox after the case ran.

``{"type": "file", "path": "out.txt"}`` passes when the file exists; ``exists: false``
when it does not. ``contains`` (text), ``regex`` (a pattern searched in the text) and
``json_path`` (the value at that path of the file's JSON equals ``value``; without a
``value``, that the path is there) each narrow it. The path is confined to the sandbox as
every sandbox path is (``..``, absolute paths and symlinks out are errors).
``FILE_CHECKERS`` and ``FILE_RULES`` join the registries in ``assertions.py`` and ``rules.py``.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from agentcli.assistant.sandbox import paths
from agentcli.eval.checks.matching import (
    compile_path,
    deep_equal,
    lookup_path,
    normalize_path,
    regex_problems,
    show,
)
from agentcli.eval.checks.outcome import Check, Checker
from agentcli.patterns import compile_pattern

if TYPE_CHECKING:
    from agentcli.eval.cases.model import Assertion
    from agentcli.eval.checks.assertions import AssertionEnv, Subject

__all__ = ["FILE_CHECKERS", "FILE_FIELDS", "FILE_RULES"]

FILE_FIELDS = ("contains", "exists", "json_path", "regex")


def _file(a: Assertion, s: Subject, env: AssertionEnv) -> Check:
    """The file at ``path`` of the sandbox exists (or not) and holds what is asked."""
    path = a.path or ""
    if s.sandbox is None:
        return Check(
            False, 'the case has no sandbox to look in (give it or its package a "sandbox")'
        )
    present = paths.is_file(s.sandbox, path)
    if a.exists is False:
        word = "exists" if present else "does not exist"
        return Check(not present, f"file {show(path)} {word} in the sandbox", expected=False)
    if not present:
        return Check(False, f"file {show(path)} does not exist in the sandbox", expected=True)
    text = paths.read_file(s.sandbox, path).decode("utf-8", "replace")
    for check in (_contains, _regex, _json):
        failed = check(a, path, text)
        if failed is not None:
            return failed
    return Check(True, f"file {show(path)} {_what(a)}")


def _contains(a: Assertion, path: str, text: str) -> Check | None:
    if a.contains is None or a.contains in text:
        return None
    return Check(False, f"file {show(path)} does not contain {show(a.contains)}", a.contains)


def _regex(a: Assertion, path: str, text: str) -> Check | None:
    if a.regex is None or compile_pattern(a.regex).search(text):
        return None
    return Check(False, f"file {show(path)} does not match /{a.regex}/", a.regex)


def _json(a: Assertion, path: str, text: str) -> Check | None:
    if a.json_path is None:
        return None
    where = normalize_path(a.json_path)
    found, actual = lookup_path(text, a.json_path)
    if not found:
        return Check(False, f"file {show(path)} at {where}: {actual}", a.value)
    if a.value is not None and not deep_equal(actual, a.value):
        return Check(
            False,
            f"file {show(path)} at {where}: expected {show(a.value)}, got {show(actual)}",
            a.value,
            actual,
        )
    return None


def _what(a: Assertion) -> str:
    """What a passing file assertion found, in words."""
    found = [f"contains {show(a.contains)}"] if a.contains is not None else []
    if a.regex is not None:
        found.append(f"matches /{a.regex}/")
    if a.json_path is not None:
        where = normalize_path(a.json_path)
        found.append(f"has {where}" if a.value is None else f"has {where} = {show(a.value)}")
    return " and ".join(found) if found else "exists in the sandbox"


def _file_rule(a: Assertion) -> str | None:
    """Rule: a ``path``; ``exists: false`` alone; a valid ``regex`` and ``json_path``;
    ``value`` only with ``json_path``."""
    if not isinstance(a.path, str) or not a.path.strip():
        return 'file needs a "path" in the sandbox, e.g. "out.txt"'
    pure = PurePosixPath(a.path)
    if pure.is_absolute() or ".." in pure.parts:
        return (
            f'file "path" must be relative to the sandbox\'s workdir, without "..": {show(a.path)}'
        )
    asks = [key for key in ("contains", "regex", "json_path") if getattr(a, key) is not None]
    if a.exists is False and asks:
        return f'file: "exists": false cannot be combined with "{asks[0]}"'
    if a.regex is not None:
        problem = next(iter(regex_problems(a.regex, prefixed=False)), None)
        if problem:
            return f"file: {problem}"
    if a.json_path is not None:
        try:
            compile_path(a.json_path)
        except Exception as exc:  # jsonpath-ng raises its own lexer/parser error types
            return f"file: invalid json_path {show(a.json_path)}: {exc}"
    elif a.value is not None:
        return 'file: "value" is what "json_path" must equal; give a json_path'
    return None


FILE_CHECKERS: dict[str, Checker] = {"file": _file}
FILE_RULES = {"file": _file_rule}

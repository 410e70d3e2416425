"""The ``sandbox`` object's check: seeded files' paths are held to the workspace's path
rules when the package or case is loaded, not first when a sandbox is made."""

from __future__ import annotations

import pytest

from agentcli.assistant.sandbox.spec import spec_problems


@pytest.mark.parametrize(
    ("path", "problem"),
    [
        ("../escape.txt", "sandbox path '../escape.txt' has a '..' part"),
        ("a/../../b", "sandbox path 'a/../../b' has a '..' part"),
        ("/tmp/abs.txt", "sandbox path '/tmp/abs.txt' is outside the workspace"),
        ("", "empty sandbox path"),
        ("a\0b", "sandbox path 'a\\x00b' holds a NUL character"),
        ("./", "sandbox path './' is the workdir itself, not a file"),
    ],
)
def test_a_seeded_path_the_workspace_refuses_is_a_problem_of_the_spec(path, problem):
    [found] = spec_problems({"files": {path: "x", "ok/fine.txt": "y"}})
    assert found.startswith(f"sandbox.files: {problem}")
    assert found.endswith("give the file's path relative to the workdir")


def test_relative_seeded_paths_are_fine():
    assert spec_problems({"files": {"a.txt": "x", "src/./b.py": "y", "c/d/e.md": ""}}) == []

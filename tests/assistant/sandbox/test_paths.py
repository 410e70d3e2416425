"""The path-escape corpus against the local backend's confinement: no path a hook or the
model gives reads, writes or lists anything outside the workdir (0 escapes)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from agentcli.assistant.sandbox import SandboxSpec, paths
from agentcli.assistant.sandbox.local import LocalSandbox
from agentcli.errors import SandboxError, SandboxPathError

SECRET = "top secret outside the sandbox"


@pytest.fixture
def box(tmp_path: Path):
    """A workspace beside an ``outside/`` folder holding a secret, with traps set inside."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET)
    sandbox = LocalSandbox.create(SandboxSpec(), parent=tmp_path)
    work = sandbox.workdir
    (work / "inside.txt").write_text("fine")
    (work / "sub").mkdir()
    os.symlink("/etc", work / "etc")  # a directory link to the system
    os.symlink("/etc/hostname", work / "hostname")  # a file link out
    os.symlink(outside, work / "out")  # a link to a sibling folder, absolute
    os.symlink(os.path.relpath(outside, work / "sub"), work / "sub" / "up")  # relative, out
    os.symlink("hop2", work / "hop1")  # a chain that ends outside
    os.symlink("sub/hop3", work / "hop2")
    os.symlink(str(outside / "secret.txt"), work / "sub" / "hop3")
    os.symlink("inside.txt", work / "alias.txt")  # a link that stays inside: allowed
    yield sandbox, outside
    sandbox.remove()


ESCAPES = [
    "../outside/secret.txt",
    "../../etc/passwd",
    "sub/../../outside/secret.txt",
    "./../outside/secret.txt",
    "/etc/passwd",
    "/etc/hostname",
    "etc/passwd",
    "etc/hostname",
    "hostname",
    "out/secret.txt",
    "sub/up/secret.txt",
    "hop1",
    "hop2",
    "sub/hop3",
    "out",
    "etc",
    "",
    "   ",
    "a\0b",
]


@pytest.mark.parametrize("path", ESCAPES)
def test_no_read_escapes(box, path: str) -> None:
    sandbox, _ = box
    with pytest.raises(SandboxError) as caught:
        paths.read_file(sandbox.workdir, path)
    assert SECRET not in str(caught.value)


@pytest.mark.parametrize("path", [*ESCAPES, "out/new.txt", "sub/up/new.txt", "etc/new.conf"])
def test_no_write_escapes(box, path: str) -> None:
    sandbox, outside = box
    before = sorted(p.name for p in outside.iterdir())
    with pytest.raises(SandboxError):
        paths.write_file(sandbox.workdir, path, "pwned")
    assert sorted(p.name for p in outside.iterdir()) == before
    assert (outside / "secret.txt").read_text() == SECRET


@pytest.mark.parametrize("path", ["..", "/", "/etc", "etc", "out", "sub/up", "hop1"])
def test_no_listing_escapes(box, path: str) -> None:
    sandbox, _ = box
    with pytest.raises(SandboxPathError):
        paths.list_dir(sandbox.workdir, path)


def test_paths_inside_work_links_included(box) -> None:
    sandbox, _ = box
    work = sandbox.workdir
    assert paths.read_file(work, "alias.txt") == b"fine"
    assert paths.read_file(work, str(work / "inside.txt")) == b"fine"  # absolute, inside
    assert paths.write_file(work, "deep/er/new.txt", "x") == 1
    assert (work / "deep" / "er" / "new.txt").read_text() == "x"
    names = {entry["name"]: entry for entry in paths.list_dir(work)}
    assert names["sub"]["is_dir"] is True and names["etc"]["is_dir"] is False  # not followed
    assert names["inside.txt"]["size"] == 4


def test_a_fifo_is_refused_without_blocking(box) -> None:
    sandbox, _ = box
    os.mkfifo(sandbox.workdir / "pipe")
    with pytest.raises(SandboxPathError, match="not a regular file"):
        paths.read_file(sandbox.workdir, "pipe")
    with pytest.raises(SandboxPathError, match="not a regular file"):
        paths.write_file(sandbox.workdir, "pipe", "x")


def test_a_directory_swapped_for_a_link_after_the_check_is_not_followed(box, monkeypatch) -> None:
    """The race a check-then-open would lose: the folder turns into a link to the outside
    between resolving the path and opening it; the open, link by link with O_NOFOLLOW,
    refuses it."""
    sandbox, outside = box
    work = sandbox.workdir
    (work / "dir").mkdir()
    checked = paths.resolve_inside

    def check_then_swap(workdir: Path, path: str) -> list[str]:
        parts = checked(workdir, path)
        (work / "dir").rmdir()
        os.symlink(outside, work / "dir")
        return parts

    monkeypatch.setattr(paths, "resolve_inside", check_then_swap)
    with pytest.raises(SandboxPathError):
        paths.write_file(work, "dir/new.txt", "pwned")
    assert not (outside / "new.txt").exists()


def test_a_folder_flipping_to_a_link_under_concurrent_writes_never_lets_one_out(box) -> None:
    """The same race for real: a thread flips ``flip`` between a folder and a link out while
    writes go on; not one write lands outside."""
    sandbox, outside = box
    work = sandbox.workdir
    stop = threading.Event()

    def flipper() -> None:
        while not stop.is_set():
            for make in (
                lambda: (work / "flip").mkdir(),
                lambda: os.symlink(outside, work / "flip"),
            ):
                try:
                    make()
                except OSError:
                    pass
                try:
                    if (work / "flip").is_symlink():
                        os.unlink(work / "flip")
                    else:
                        (work / "flip").rmdir()
                except OSError:
                    pass

    thread = threading.Thread(target=flipper, daemon=True)
    thread.start()
    try:
        for index in range(400):
            try:
                paths.write_file(work, f"flip/f{index}.txt", "pwned")
            except (SandboxError, OSError):
                pass
    finally:
        stop.set()
        thread.join(timeout=10)
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


def test_files_larger_than_the_limit_are_refused(box) -> None:
    sandbox, _ = box
    (sandbox.workdir / "big.bin").write_bytes(b"x" * 2048)
    with pytest.raises(SandboxError, match="larger than 1024 bytes"):
        paths.read_file(sandbox.workdir, "big.bin", limit=1024)

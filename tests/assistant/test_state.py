"""The state folder: fresh (temp, removed after, SIGTERM included), persistent (the user's),
a kept folder (created, reused, refused when unusable), and the registry's memory in it."""

from __future__ import annotations

import os
import signal
import tempfile
from pathlib import Path

import pytest

from agentcli import interrupts
from agentcli.assistant.memory import MemoryStore, Namespace, default_memory_path
from agentcli.assistant.session import AssistantRegistry
from agentcli.assistant.state import StateDir, data_home, open_state
from agentcli.errors import ConfigError


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's store and the temp dir inside tmp_path; no interrupt noted for later tests."""
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    monkeypatch.setattr(interrupts, "_received", [])
    return temp


def test_fresh_is_a_new_empty_folder_in_the_temp_dir_removed_after(tmp_path: Path) -> None:
    with open_state("fresh", cwd=tmp_path) as state:
        assert state.kind == "fresh" and state.label == "fresh"
        assert state.path.parent == tmp_path / "tmp" and list(state.path.iterdir()) == []
        assert state.memory_path == state.path / "memory.sqlite3"
        _write(state, 1)
        assert state.memory_path.is_file()
    assert not state.path.exists()
    assert list((tmp_path / "tmp").iterdir()) == []


def test_each_fresh_state_is_its_own(tmp_path: Path) -> None:
    with open_state("fresh", cwd=tmp_path) as first, open_state("fresh", cwd=tmp_path) as second:
        assert first.path != second.path


def test_fresh_is_removed_when_the_block_fails(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), open_state("fresh", cwd=tmp_path) as state:
        raise RuntimeError("a failed run")
    assert not state.path.exists()


def test_sigterm_inside_a_fresh_state_unwinds_like_ctrl_c_and_removes_it(tmp_path: Path) -> None:
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt), open_state("fresh", cwd=tmp_path) as state:
        signal.raise_signal(signal.SIGTERM)  # its handler runs before the next line
        pytest.fail("SIGTERM did not interrupt the block")
    assert not state.path.exists()
    assert interrupts._received == [signal.SIGTERM]  # so the process leaves with 130
    assert signal.getsignal(signal.SIGTERM) == before


def test_persistent_is_the_users_store(tmp_path: Path) -> None:
    with open_state("persistent", cwd=tmp_path) as state:
        assert (state.kind, state.path, state.label) == ("persistent", data_home(), "persistent")
        assert state.memory_path == default_memory_path() == tmp_path / "home" / "memory.sqlite3"
    assert data_home() == tmp_path / "home"  # kept, never removed


def test_a_folder_is_created_relative_to_cwd_and_kept_across_runs(tmp_path: Path) -> None:
    with open_state("debug/state", cwd=tmp_path) as state:
        assert (state.kind, state.path) == ("dir", tmp_path / "debug" / "state")
        assert state.label == str(tmp_path / "debug" / "state")
        _write(state, "kept")
    with open_state(str(tmp_path / "debug" / "state"), cwd=Path("/")) as again:
        assert _read(again) == "kept"
    assert again.memory_path.is_file()


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("", "--state: empty value"),
        ("notes.txt", "notes.txt: not a folder"),
        ("notes.txt/sub", "notes.txt/sub: cannot write there"),
    ],
)
def test_an_unusable_state_value_is_a_config_error(
    tmp_path: Path, value: str, message: str
) -> None:
    (tmp_path / "notes.txt").write_text("not a folder")
    with pytest.raises(ConfigError, match=message) as caught:
        StateDir.parse(value, cwd=tmp_path)
    assert caught.value.hint


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_folder_is_refused(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    with pytest.raises(ConfigError, match="cannot write there"):
        StateDir.parse(str(locked), cwd=tmp_path)


def test_the_registry_keeps_memory_in_its_state_folder(tmp_path: Path) -> None:
    state = StateDir(tmp_path / "run-state", "dir")
    assert AssistantRegistry(None, cwd=tmp_path, state=state).memory_store.path == (
        tmp_path / "run-state" / "memory.sqlite3"
    )
    default = AssistantRegistry(None, cwd=tmp_path)
    assert default.state.kind == "persistent"
    assert default.memory_store.path == tmp_path / "home" / "memory.sqlite3"


def _write(state: StateDir, value: object) -> None:
    """Set user memory ``k`` in the state folder's store."""
    store = MemoryStore(state.memory_path)
    try:
        Namespace(store, "user", "u").set("k", value)
    finally:
        store.close()


def _read(state: StateDir) -> object:
    """User memory ``k`` of the state folder's store."""
    store = MemoryStore(state.memory_path)
    try:
        return Namespace(store, "user", "u").get("k")
    finally:
        store.close()

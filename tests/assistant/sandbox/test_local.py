"""The local backend: commands in the workspace with a scrubbed environment, errors with
their status and stderr, timeouts that kill the whole process tree, bounded output."""

from __future__ import annotations

import asyncio
import os
import stat
import time
from pathlib import Path

import pytest

from agentcli.assistant.sandbox import SandboxSpec, create_sandbox
from agentcli.assistant.sandbox.protocol import MAX_OUTPUT_BYTES
from agentcli.errors import SandboxError, SandboxExecError, SandboxTimeout

from .procs import TREE, alive, gone_within


@pytest.fixture
def box(tmp_path: Path):
    sandbox = create_sandbox(SandboxSpec(timeout=20, files={"hello.txt": "hi"}), parent=tmp_path)
    yield sandbox
    sandbox.remove()


async def test_exec_runs_in_the_workdir_and_returns_stdout(box) -> None:
    assert await box.exec(["cat", "hello.txt"]) == "hi"
    assert (await box.exec(["pwd"])).strip() == str(box.workdir)
    await box.write_file("run.py", "import sys; print(sys.argv[1])")
    assert await box.exec(["python3", "run.py", "ok"]) == "ok\n"


async def test_a_failing_command_raises_with_its_status_and_stderr(box) -> None:
    with pytest.raises(SandboxExecError) as caught:
        await box.exec(["sh", "-c", "echo partial; echo broken >&2; exit 3"])
    error = caught.value
    assert (error.returncode, error.stdout, error.stderr) == (3, "partial\n", "broken\n")
    assert "exited with status 3: broken" in str(error)
    result = await box.run(["sh", "-c", "exit 4"])  # run() reports instead of raising
    assert result.returncode == 4


async def test_the_environment_is_scrubbed_and_env_adds_to_it(box, monkeypatch) -> None:
    monkeypatch.setenv("AGENTCLI_TEST_SECRET", "s3cret")
    printed = await box.exec(["env"], env={"GREETING": "hello"})
    variables = dict(line.split("=", 1) for line in printed.splitlines())
    assert "AGENTCLI_TEST_SECRET" not in variables
    assert variables["GREETING"] == "hello"
    assert variables["HOME"] == str(box.workdir)
    assert variables["TMPDIR"] == str(box.tmp)
    assert set(variables) <= {"PATH", "HOME", "TMPDIR", "PWD", "LANG", "GREETING", "SHLVL", "_"}


async def test_a_timeout_kills_the_process_tree(box) -> None:
    """Child and grandchild of the command are gone once its timeout fires."""
    await box.write_file("tree.py", TREE)
    started = time.monotonic()
    with pytest.raises(SandboxTimeout, match=r"timed out after 1\.5s") as caught:
        await box.exec(["python3", "tree.py"], timeout=1.5)
    assert time.monotonic() - started < 10
    assert caught.value.stdout == "started\n"
    pids = [int((box.workdir / name).read_text()) for name in ("child.pid", "grandchild.pid")]
    assert gone_within(pids), [pid for pid in pids if alive(pid)]


async def test_a_cancelled_exec_kills_its_command(box) -> None:
    await box.write_file("tree.py", TREE)
    task = asyncio.create_task(box.exec(["python3", "tree.py"]))
    for _ in range(200):
        if (box.workdir / "grandchild.pid").exists():
            break
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    pids = [int((box.workdir / name).read_text()) for name in ("child.pid", "grandchild.pid")]
    assert gone_within(pids)


async def test_processes_left_running_do_not_outlive_the_command(box) -> None:
    started = time.monotonic()
    printed = await box.exec(["sh", "-c", "sleep 300 & echo $!"])
    assert time.monotonic() - started < 5  # not held open by the background sleep
    assert gone_within([int(printed)])


async def test_output_is_cut_at_the_limit_without_blocking_the_command(box) -> None:
    result = await box.run(["python3", "-c", f"print('x' * {3 * MAX_OUTPUT_BYTES})"])
    assert result.returncode == 0 and result.truncated
    assert result.stdout.startswith("x" * MAX_OUTPUT_BYTES)
    assert result.stdout.endswith(f"[output cut at {MAX_OUTPUT_BYTES} bytes]")
    assert result.to_dict()["truncated"] is True


async def test_bad_commands_are_clear(box) -> None:
    result = await box.run(["no-such-program-here"])
    assert (result.returncode, result.stderr) == (127, "no-such-program-here: command not found\n")
    with pytest.raises(SandboxError, match="list of words") as caught:
        await box.exec("ls -l")  # type: ignore[arg-type]
    assert caught.value.hint and '["sh", "-c"' in caught.value.hint
    for bad in ([], [""], ["ls", 3]):
        with pytest.raises(SandboxError):
            await box.exec(bad)  # type: ignore[arg-type]
    with pytest.raises(SandboxError, match="exec timeout"):
        await box.exec(["true"], timeout="soon")  # type: ignore[arg-type]
    with pytest.raises(SandboxError, match="exec env"):
        await box.exec(["true"], env={"A": 1})  # type: ignore[dict-item]


async def test_files_and_listing(box) -> None:
    assert await box.write_file("a/b/c.txt", "ünïcode") == len("ünïcode".encode())
    assert await box.read_file("a/b/c.txt") == "ünïcode"
    assert await box.list_dir("a") == [
        {"name": "b", "size": os.stat(box.workdir / "a/b").st_size, "is_dir": True}
    ]
    with pytest.raises(SandboxError, match=r"no file 'missing\.txt'"):
        await box.read_file("missing.txt")
    with pytest.raises(SandboxError, match="no folder 'nope'"):
        await box.list_dir("nope")
    with pytest.raises(SandboxError, match="content must be text"):
        await box.write_file("x.txt", 42)  # type: ignore[arg-type]


async def test_remove_deletes_even_what_a_command_made_read_only(tmp_path: Path) -> None:
    sandbox = create_sandbox(SandboxSpec(), parent=tmp_path)
    await sandbox.exec(
        ["sh", "-c", "mkdir -p locked/in && touch locked/in/f && chmod 0500 locked/in locked"]
    )
    sandbox.remove()
    assert not sandbox.root.exists()
    sandbox.remove()  # idempotent


def test_seeded_files_outside_the_workdir_are_refused(tmp_path: Path) -> None:
    with pytest.raises(SandboxError):
        create_sandbox(SandboxSpec(files={"../escape.txt": "x"}), parent=tmp_path)
    assert not (tmp_path / "escape.txt").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("agentcli-sandbox-")]
    assert stat.S_ISDIR(os.stat(tmp_path).st_mode)

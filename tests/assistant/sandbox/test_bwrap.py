"""The bwrap backend isolates: no network unless asked, nothing writable but the
workdir, the system read-only, and a timeout ends every process of the command."""

from __future__ import annotations

import socket
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcli.assistant.sandbox import SandboxSpec, create_sandbox, open_sandbox
from agentcli.assistant.sandbox import bwrap as bwrap_module
from agentcli.errors import SandboxError, SandboxExecError, SandboxTimeout

from .procs import TREE, gone_within, marked

pytestmark = pytest.mark.usefixtures("bwrap_works")

CONNECT = (
    "import socket, sys\n"
    "s = socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=5)\n"
    "print(s.recv(64).decode())\n"
)


@pytest.fixture
def server() -> Iterator[int]:
    """A TCP server on this machine's loopback that greets whoever connects."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                peer, _ = listener.accept()
            except OSError:
                continue
            with peer:
                peer.sendall(b"hello from outside")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    stop.set()
    thread.join(timeout=5)
    listener.close()


@pytest.fixture
async def box(tmp_path: Path):
    sandbox = await open_sandbox(SandboxSpec(backend="bwrap", timeout=20), parent=tmp_path)
    yield sandbox
    sandbox.remove()


async def test_commands_run_in_the_workdir_and_see_its_files(box) -> None:
    await box.write_file("main.py", "print(open('data.txt').read().upper())")
    await box.write_file("data.txt", "inside")
    assert await box.exec(["python3", "main.py"]) == "INSIDE\n"
    assert (await box.exec(["pwd"])).strip() == str(box.workdir)
    await box.exec(["sh", "-c", "echo made-inside > made.txt"])
    assert (box.workdir / "made.txt").read_text() == "made-inside\n"  # seen from outside


async def test_the_network_is_denied(box, server: int) -> None:
    await box.write_file("connect.py", CONNECT)
    with pytest.raises(SandboxExecError) as caught:
        await box.exec(["python3", "connect.py", str(server)])
    assert "ConnectionRefusedError" in caught.value.stderr or "unreachable" in caught.value.stderr


async def test_network_true_lets_commands_reach_it(tmp_path: Path, server: int) -> None:
    sandbox = await open_sandbox(SandboxSpec(backend="bwrap", network=True), parent=tmp_path)
    try:
        await sandbox.write_file("connect.py", CONNECT)
        assert await sandbox.exec(["python3", "connect.py", str(server)]) == "hello from outside\n"
    finally:
        sandbox.remove()


@pytest.mark.parametrize(
    "target", ["/usr/pwned", "/etc/pwned", "/pwned", "{parent}/pwned", "{home}/pwned"]
)
async def test_writes_outside_the_workdir_are_denied(box, tmp_path: Path, target: str) -> None:
    place = target.format(parent=tmp_path, home=Path.home())
    result = await box.run(["sh", "-c", f"echo x > {place}"])
    assert result.returncode != 0
    assert not Path(place).exists()


async def test_only_the_workspace_is_writable(box) -> None:
    name = f"agentcli-bwrap-{uuid.uuid4().hex}"
    result = await box.run(["sh", "-c", f"echo x > /tmp/{name}"])
    assert result.returncode != 0 and not (Path("/tmp") / name).exists()
    await box.exec(["sh", "-c", 'echo x > "$TMPDIR/t" && echo y > w'])
    assert (box.tmp / "t").exists() and (box.workdir / "w").exists()


async def test_the_system_is_read_only_and_the_machine_hidden(box) -> None:
    listing = (await box.exec(["ls", "/"])).split()
    assert "home" not in listing and "root" not in listing
    result = await box.run(["sh", "-c", "cat /etc/shadow"])
    assert result.returncode != 0
    result = await box.run(["touch", "/usr/bin/pwned"])
    assert result.returncode != 0 and "Read-only" in result.stderr


async def test_a_timeout_kills_every_process_of_the_command(box) -> None:
    marker = f"agentcli-bwrap-tree-{uuid.uuid4().hex}"
    await box.write_file("tree.py", TREE)
    with pytest.raises(SandboxTimeout) as caught:
        await box.exec(["python3", "tree.py", marker], timeout=2)
    assert caught.value.stdout == "started\n"  # the child and grandchild were running
    assert (box.workdir / "grandchild.pid").exists()
    leftovers = marked(marker)
    assert not leftovers or gone_within(leftovers), leftovers


async def test_a_refused_bwrap_is_a_clear_error_before_anything_runs(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(bwrap_module, "_probed", {"": "bwrap is not installed"})
    monkeypatch.setattr(bwrap_module.shutil, "which", lambda name, path=None: None)
    with pytest.raises(
        SandboxError, match="bwrap cannot run here: bwrap is not installed"
    ) as caught:
        await open_sandbox(SandboxSpec(backend="bwrap"), parent=tmp_path)
    assert "apt-get install bubblewrap" in (caught.value.hint or "")
    assert not list(tmp_path.iterdir())  # the workspace made for it is gone
    sandbox = create_sandbox(SandboxSpec(backend="bwrap"), parent=tmp_path)
    with pytest.raises(SandboxError, match="bwrap cannot run here"):
        await sandbox.exec(["true"])
    sandbox.remove()

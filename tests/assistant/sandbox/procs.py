"""Helpers for the sandbox tests: whether a process is still alive (a zombie is not)."""

from __future__ import annotations

import time
from pathlib import Path

# A Python program that starts a child, which starts a grandchild; each writes its pid into
# a file of the working folder, then all of them sleep.
TREE = """
import os, sys, time
def spawn(name):
    pid = os.fork()
    if pid == 0:
        open(name, "w").write(str(os.getpid()))
        time.sleep(300)
        os._exit(0)
    return pid
if os.fork() == 0:
    open("child.pid", "w").write(str(os.getpid()))
    spawn("grandchild.pid")
    time.sleep(300)
    os._exit(0)
while not (os.path.exists("child.pid") and os.path.exists("grandchild.pid")):
    time.sleep(0.01)
print("started", flush=True)
time.sleep(300)
"""


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie waiting to be reaped counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


def gone_within(pids: list[int], seconds: float = 5.0) -> bool:
    """Whether every pid has ended within ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not any(alive(pid) for pid in pids):
            return True
        time.sleep(0.05)
    return False


def marked(marker: str) -> list[int]:
    """The pids whose command line holds ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes() and alive(int(entry.name)):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found

"""Running the real ``agent`` command for the hostile corpus, fast and bounded.

Each command is its own process in its own process group, with its own stdout and stderr
files, a hard time bound (the whole group is killed with SIGKILL when it overruns) and an
address-space limit (so a memory bomb ends as a failure instead of taking the machine).

Starting ``python -m agentcli`` costs ~0.4 s of imports per command, and the corpus runs
well over a thousand commands; so by default each process is forked from a fork server
that imported agentcli once, and runs ``agentcli.cli.main.main()`` with the
command's argv, cwd, environment and fresh stdio, exactly as the console script does. Set
``HOSTILE_SPAWN=1`` to run every command as a fresh ``python -m agentcli`` instead.
"""

from __future__ import annotations

import atexit
import gc
import importlib
import json
import os
import resource
import selectors
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Run", "run_agent"]

MEMORY_LIMIT = 3 * 1024**3
"""Address space of one command: far above an honest run, far below the machine."""

# What a run imports, so that forked commands start with it in memory.
PRELOAD = [
    "agentcli.cli.main",
    *(f"agentcli.cli.{name}" for name in ("eval_cmd", "extract_cmd", "list_cmd", "merge_cmd")),
    "agentcli.cli.report_cmd",
    "agentcli.eval.run.session",
    "agentcli.cli.views.console",
    "agentcli.cli.views.json_events",
    "agentcli.eval.reports",
    "agentcli.eval.results.extract",
    "agentcli.eval.results.merge",
    "agentcli.assistant.catalog",
    "agentcli.models.scripted",
    "jsonpath_ng.ext",
    "jinja2.sandbox",
    "jsonschema",
    "yaml",
]
ROOT = Path(__file__).resolve().parents[2]
_lock = threading.Lock()
_server: list[_ForkServer] = []


@dataclass(slots=True)
class Run:
    """What one command did: its exit code (None when killed at the bound), output, time
    (wall clock, and the CPU time of the command's process)."""

    argv: tuple[str, ...]
    code: int | None
    stdout: str
    stderr: str
    seconds: float
    cpu: float

    @property
    def hung(self) -> bool:
        """Killed at the time bound."""
        return self.code is None

    def show(self) -> str:
        """``agent eval ...`` as typed (for messages)."""
        return "agent " + " ".join(self.argv)


def run_agent(
    argv: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    bound: float,
    interrupt_after: float | None = None,
) -> Run:
    """Run ``agent <argv>`` in ``cwd``; SIGINT its process group after ``interrupt_after``
    seconds (as Ctrl-C in a terminal would), SIGKILL it after ``bound`` seconds."""
    out, err = cwd / f".stdout-{os.getpid()}-{threading.get_ident()}", cwd / ".stderr"
    err = err.with_name(out.name.replace("stdout", "stderr"))
    started = time.monotonic()
    backend = _spawned if os.environ.get("HOSTILE_SPAWN") == "1" else _forked
    code, cpu = backend(argv, cwd, env, out, err, bound, interrupt_after)
    seconds = time.monotonic() - started
    stdout, stderr = (_read(p) for p in (out, err))
    return Run(tuple(argv), code, stdout, stderr, seconds, cpu)


def _read(path: Path) -> str:
    """A captured stream as text (undecodable bytes shown, never raised), then removed."""
    text = path.read_bytes().decode("utf-8", "backslashreplace")
    path.unlink()
    return text


def _wait(
    alive: Callable[[], bool], pid: int, started: float, bound: float, interrupt_after: float | None
) -> bool:
    """Poll until the process ends; signal its group on schedule. False when killed."""
    interrupted = interrupt_after is None
    while alive():
        elapsed = time.monotonic() - started
        if not interrupted and elapsed >= interrupt_after:
            _signal_group(pid, signal.SIGINT)
            interrupted = True
        if elapsed >= bound:
            _signal_group(pid, signal.SIGKILL)
            return False
        time.sleep(0.01)
    _signal_group(pid, signal.SIGKILL)  # whatever the command left running in its group
    return True


def _signal_group(pid: int, signum: int) -> None:
    """Signal the process group of ``pid`` (the process alone if it has none of its own)."""
    for send in (os.killpg, os.kill):
        try:
            send(pid, signum)
            return
        except (ProcessLookupError, PermissionError):
            continue


def _exit_code(code: int) -> int:
    """A death by SIGINT is how an interrupted run ends (the shell shows 130)."""
    return 130 if code == -signal.SIGINT else code


def _spawned(argv, cwd, env, out, err, bound, interrupt_after) -> tuple[int | None, float]:
    """``python -m agentcli`` as a fresh process."""
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "agentcli", *argv],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
            preexec_fn=_limit_memory,
        )
        ended: list[tuple[int, Any]] = []

        def alive() -> bool:
            if not ended:  # wait4 here, not Popen.poll: it also tells the CPU time used
                pid, status, usage = os.wait4(process.pid, os.WNOHANG)
                if pid:
                    ended.append((status, usage))
            return not ended

        finished = _wait(alive, process.pid, time.monotonic(), bound, interrupt_after)
        if not ended:
            _, status, usage = os.wait4(process.pid, 0)
            ended.append((status, usage))
        status, usage = ended[0]
        process.returncode = os.waitstatus_to_exitcode(status)
    cpu = usage.ru_utime + usage.ru_stime
    return (_exit_code(process.returncode) if finished else None), cpu


class _ForkServer:
    """A process that imported agentcli once and forks one child per command on request
    (JSON lines on its stdin), reporting ``{"id", "pid"}`` when a child started and
    ``{"pid", "code", "cpu"}`` when it ended. Single-threaded, so forking it is safe."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", f"from {__name__} import serve; serve()"],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self.changed = threading.Condition()
        self.started: dict[int, int] = {}
        self.exits: dict[int, tuple[int, float]] = {}
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()
        atexit.register(self.process.kill)

    def _read(self) -> None:
        for line in self.process.stdout:
            message = json.loads(line)
            with self.changed:
                if "id" in message:
                    self.started[message["id"]] = message["pid"]
                else:
                    self.exits[message["pid"]] = message["code"], message["cpu"]
                self.changed.notify_all()

    def start(self, **request: Any) -> int:
        """Fork a child running ``_command(**request)``; its pid."""
        with self.changed:
            self.next_id += 1
            number = self.next_id
            line = json.dumps({"id": number, **request}) + "\n"
            self.process.stdin.write(line.encode())
            self.process.stdin.flush()
            if not self.changed.wait_for(lambda: number in self.started, timeout=30):
                raise RuntimeError("the fork server did not answer")
            return self.started.pop(number)

    def ended(self, pid: int) -> bool:
        """Whether child ``pid`` ended."""
        with self.changed:
            return pid in self.exits


def serve() -> None:
    """The fork server's loop (see ``_ForkServer``)."""
    for name in PRELOAD:
        importlib.import_module(name)
    gc.freeze()  # the children never collect what they inherit: no copy-on-write storms
    pending, children = b"", 0
    selector = selectors.DefaultSelector()
    selector.register(0, selectors.EVENT_READ)
    while True:
        if selector.select(timeout=0.005):
            chunk = os.read(0, 1 << 16)
            if not chunk:
                return
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                request = json.loads(line)
                number = request.pop("id")
                pid = os.fork()
                if pid == 0:
                    selector.close()
                    _command(**request)
                try:  # here too, so the group exists before the child gets to it
                    os.setpgid(pid, pid)
                except OSError:
                    pass
                _reply({"id": number, "pid": pid})
                children += 1
        while children:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
            if pid == 0:
                break
            children -= 1
            cpu = usage.ru_utime + usage.ru_stime
            _reply({"pid": pid, "code": os.waitstatus_to_exitcode(status), "cpu": cpu})


def _reply(message: dict[str, float]) -> None:
    os.write(1, (json.dumps(message) + "\n").encode())


def _forked(argv, cwd, env, out, err, bound, interrupt_after) -> tuple[int | None, float]:
    """``main()`` in a process forked from the fork server."""
    with _lock:
        if not _server:
            _server.append(_ForkServer())
    server = _server[0]
    pid = server.start(argv=argv, cwd=str(cwd), env=env, out=str(out), err=str(err))
    started = time.monotonic()
    finished = _wait(lambda: not server.ended(pid), pid, started, bound, interrupt_after)
    with server.changed:
        if not server.changed.wait_for(lambda: pid in server.exits, timeout=30):
            raise RuntimeError(f"the fork server did not report the end of process {pid}")
        code, cpu = server.exits.pop(pid)
    return (_exit_code(code) if finished else None), cpu


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _command(argv: list[str], cwd: str, env: dict[str, str], out: str, err: str) -> None:
    """In the forked process: become the command, then leave as the interpreter would."""
    os.setpgid(0, 0)
    _limit_memory()
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    for fd, path, flags in ((0, os.devnull, os.O_RDONLY), (1, out, 0), (2, err, 0)):
        opened = os.open(path, flags | (os.O_WRONLY | os.O_CREAT | os.O_TRUNC if fd else 0))
        os.dup2(opened, fd)
        os.close(opened)
    # Fresh stdio, built as Python builds it for a process whose output is a file.
    sys.stdin = open(0, encoding=sys.__stdin__.encoding, closefd=False)  # noqa: SIM115
    sys.stdout = sys.__stdout__ = open(  # noqa: SIM115
        1, "w", encoding=sys.__stdout__.encoding, errors=sys.__stdout__.errors, closefd=False
    )
    sys.stderr = sys.__stderr__ = open(  # noqa: SIM115
        2, "w", 1, sys.__stderr__.encoding, "backslashreplace", closefd=False
    )
    sys.argv = ["agent", *argv]
    code = _main()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def _main() -> int:
    """``agentcli.cli.main.main()``; its exit code as the interpreter would compute it."""
    from agentcli.cli.main import main

    try:
        main()
    except SystemExit as leaving:
        if leaving.code is None or isinstance(leaving.code, int):
            return leaving.code or 0
        print(leaving.code, file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # the interpreter would die of SIGINT: the shell's 130
        return 130
    except BaseException:  # what escapes main() prints a traceback, as Python would
        traceback.print_exc()
        return 1
    return 0

"""Helpers of the fault-injection suite: a project folder pointed at the loopback server,
``agent eval`` run as a real process, and checks that a run left a complete results file
and no process behind."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentcli.eval.reports import LoadedReport, read_results

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures" / "assistants"
STATUSES = {"passed", "failed", "error", "timeout", "skipped"}
# "[kind] provider model 'm': what happened: detail" — one line, the error kind first.
REASON = re.compile(r"^\[(rate_limit|provider_error|timeout|auth|bad_request)\] \S.*: \S.*$")
SUMMARY_KEYS = {"passed": "passed", "failed": "failed", "error": "errors", "timeout": "timeouts"}


def write_connectors(
    folder: Path,
    base_url: str,
    mode: str,
    *,
    timeout: float = 5.0,
    attempts: int = 4,
    api_key: str = "none",
) -> Path:
    """A ``connectors.yml`` whose ``loop`` connector is the loopback server in ``mode``
    (``timeout`` is the model call's; fast retries: 0.01 s doubling, capped at 0.05 s)."""
    path = folder / "connectors.yml"
    path.write_text(
        f"loop: {{model: 'openai/{mode}', api_base: '{base_url}', api_key: '{api_key}', "
        f"timeout: {timeout}, retry: {{max_attempts: {attempts}, base_delay: 0.01, "
        "max_delay: 0.05}}\n",
        encoding="utf-8",
    )
    return path


def with_tools(package: Path, name: str, module: str, tools: dict[str, str], rules: str) -> None:
    """Give the fixture ``package`` the process tools ``tools`` (name -> function of
    ``src/<name>.py``, whose source is ``module``) and put scripted ``rules`` (YAML list
    items) before its own, so they are tried first."""
    (package / "src" / f"{name}.py").write_text(module)
    (package / "mcps" / f"{name}.mcp.yao").write_text(
        json.dumps({"transport": "process", "tools": tools})
    )
    scripted = package / "scripted.yml"
    scripted.write_text(scripted.read_text().replace("rules:\n", "rules:\n" + rules, 1))


def write_cases(path: Path, count: int, *, prefix: str = "c", **extra: Any) -> Path:
    """``count`` cases whose answer must contain their own input (what the echo mode says)."""
    lines = []
    for i in range(count):
        text = f"hello {prefix}{i:04d}"
        case = {"id": f"{prefix}{i:04d}", "input": text, **extra}
        case.setdefault("assert", {"type": "contains", "value": text})
        lines.append(json.dumps(case))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def agent_env(project: Path, **extra: str) -> dict[str, str]:
    """The environment of an ``agent`` process run inside ``project``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTEST_", "COV_")) and k not in ("AGENT_ROOT", "AGENT_CONNECTOR")
    }
    env.update(
        AGENTCLI_HOME=str(project / "home"),
        PROBE_LOG=str(project / "hooks.log"),
        NO_COLOR="1",
        **extra,
    )
    return env


def agent(
    project: Path, *args: str, timeout: float = 60, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m agentcli <args>`` in ``project`` and wait for it."""
    return subprocess.run(
        [sys.executable, "-m", "agentcli", *args],
        cwd=project,
        env=env or agent_env(project),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def start_agent(project: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    """Start ``python -m agentcli <args>`` in ``project`` without waiting."""
    return subprocess.Popen(
        [sys.executable, "-m", "agentcli", *args],
        cwd=project,
        env=env or agent_env(project),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_results(path: Path, count: int, *, within: float = 30) -> int:
    """Wait until the JSON Lines file holds ``count`` result lines; the number seen."""
    deadline = time.monotonic() + within
    seen = 0
    while time.monotonic() < deadline:
        if path.exists():
            seen = path.read_text(encoding="utf-8").count('"type":"result"')
            if seen >= count:
                return seen
        time.sleep(0.02)
    raise AssertionError(f"only {seen} results in {path} after {within}s (wanted {count})")


@dataclass(slots=True)
class Outcome:
    """What a finished run left: its report, statuses and the run's exit code."""

    report: LoadedReport
    statuses: Counter[str]


def check_complete(path: Path, total: int) -> Outcome:
    """The results file is whole: header, ``total`` results with defined statuses, a
    summary agreeing with them, and nothing the reader had to warn about."""
    report = read_results(path)
    assert not report.warnings, report.warnings
    assert report.header.metadata.get("started_at"), "no header line"
    ids = [r.id for r in report.results]
    assert len(ids) == total, f"{len(ids)} results, wanted {total}"
    assert len(set(ids)) == len(ids), "duplicate results"
    statuses = Counter(r.status for r in report.results)
    assert set(statuses) <= STATUSES, statuses
    assert report.summary is not None, "no summary line"
    assert report.summary.total == total
    for status, key in SUMMARY_KEYS.items():
        assert getattr(report.summary, key) == statuses.get(status, 0), (key, report.summary)
    return Outcome(report, statuses)


def expected_exit(statuses: Counter[str]) -> int:
    """The exit code the statuses call for: 0 only when nothing failed, errored or timed out."""
    return 1 if statuses["failed"] or statuses["error"] or statuses["timeout"] else 0


def processes_in(folder: Path) -> list[str]:
    """Live processes (other than zombies and this one) whose working directory or command
    line is inside ``folder``: anything a run started there (an ``agent`` process, an MCP
    server) and left behind."""
    found = []
    marker = str(folder.resolve())
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue  # gone meanwhile, or not ours
        if state != "Z" and (cwd.startswith(marker) or marker in command):
            found.append(f"{entry.name}: {command.strip()} (cwd {cwd})")
    return found


def children_of(pid: int) -> set[int]:
    """Live child processes of ``pid``."""
    children = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[1]) == pid:
            children.add(int(entry.name))
    return children


def assert_no_leftovers(project: Path, children_before: set[int], *, within: float = 5) -> None:
    """No process started in ``project`` and no new child of this test process remains
    (a short grace period lets exiting processes finish)."""
    deadline = time.monotonic() + within
    while True:
        left = processes_in(project)
        new_children = children_of(os.getpid()) - children_before
        if not left and not new_children:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"leaked processes: {left} children: {sorted(new_children)}")
        time.sleep(0.05)

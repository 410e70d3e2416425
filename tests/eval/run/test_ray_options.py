"""``--executor`` and ``--ray-address`` as bad input: clear errors (exit 2) before any case
runs, and a local run never imports Ray."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.fixture
def project(tmp_path: Path) -> Path:
    package = tmp_path / "assistants" / "bench"
    package.mkdir(parents=True)
    (package / "package.yao").write_text(json.dumps({"name": "Bench", "connector": "echo"}))
    case = {"id": "a", "input": "hello", "assert": {"type": "contains", "value": "hello"}}
    (tmp_path / "cases.jsonl").write_text(json.dumps(case) + "\n")
    return tmp_path


def _eval(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "agentcli", "eval", "bench", "@cases.jsonl", *args]
    env = {"AGENTCLI_HOME": str(project / "home"), "PATH": "/usr/bin:/bin"}
    return subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, timeout=120)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_an_unreachable_cluster_is_bad_input(project: Path):
    port = _closed_port()
    ran = _eval(project, "--executor", "ray", "--ray-address", f"127.0.0.1:{port}")
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert f"cannot reach the Ray cluster at 127.0.0.1:{port}" in ran.stderr
    assert "Traceback" not in ran.stderr
    assert not (project / "out.jsonl").exists()


def test_cassettes_are_refused_on_ray(project: Path):
    ran = _eval(project, "--executor", "ray", "--record", "-o", "out.jsonl")
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert "--record/--replay cannot be used with --executor ray" in ran.stderr


def test_ray_flags_without_the_ray_executor_are_refused(project: Path):
    ran = _eval(project, "--ray-address", "127.0.0.1:6379", "--ray-cpus", "0.5")
    assert ran.returncode == 2
    assert "--ray-address, --ray-cpus go with --executor ray" in ran.stderr


def test_an_unknown_executor_names_the_choices(project: Path):
    ran = _eval(project, "--executor", "dask")
    assert ran.returncode == 2
    assert "use one of local, ray" in ran.stderr


def test_one_message_takes_no_executor(project: Path):
    argv = [sys.executable, "-m", "agentcli", "eval", "bench", "hello", "--executor", "ray"]
    ran = subprocess.run(argv, cwd=project, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 2
    assert "--executor" in ran.stderr


def test_a_local_run_never_imports_ray(project: Path):
    probe = (
        "import sys, runpy; sys.argv = ['agent', 'eval', 'bench', '@cases.jsonl', '-o', 'o.jsonl']\n"
        "try:\n    runpy.run_module('agentcli', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "print('RAY' if 'ray' in sys.modules or 'agentcli.eval.run.cluster' in sys.modules else 'NO')\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        env={"AGENTCLI_HOME": str(project / "home"), "PATH": "/usr/bin:/bin"},
    )
    assert ran.stdout.strip().endswith("NO"), ran.stdout + ran.stderr

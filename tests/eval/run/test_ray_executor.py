"""``agent eval --executor ray`` against a real local Ray cluster (a head and one worker
node on 127.0.0.1, one CPU each): the same results file as the local executor, a shared
limit of model calls across workers, Ctrl-C, and a worker node killed mid-run.

The driver is always a subprocess (``agent eval``), as a user runs it. Marked ``ray``
(``-m ray`` selects them); they run in the default suite and skip, saying why, only where
a Ray node cannot start.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fixtures.openai_server import OpenAIServer
from fixtures.ray_cluster import RayCluster, RayUnavailable

pytestmark = pytest.mark.ray

RUN_TIMEOUT = 180  # seconds one driver may take on a loaded 2-core machine

FAKE_MODEL = '''
import time
import uuid
from pathlib import Path


def barrier(folder, count):
    """Wait (bounded) until ``count`` calls, in any worker processes, have reached here."""
    Path(folder, uuid.uuid4().hex).touch()
    deadline = time.monotonic() + 60
    while len(list(Path(folder).iterdir())) < count and time.monotonic() < deadline:
        time.sleep(0.02)


def reply(messages, tools, settings):
    text = messages[-1]["content"]
    if text.startswith("barrier "):
        _, folder, count = text.split()
        barrier(folder, int(count))
        return "ready"
    if "print" in text:
        print(f"model saw: {text}")
    if "slow" in text:
        time.sleep(0.3)
    return text.replace("hello", "bye") if "fail" in text else text
'''


@pytest.fixture(scope="module")
def cluster() -> Any:
    """One cluster for the module (starting one takes ~20 s); stopped by its process groups."""
    try:
        with RayCluster(workers=1, cpus=1) as started:
            yield started
    except RayUnavailable as error:
        print(f"\nskipping the Ray tests: {error}", file=sys.stderr)
        pytest.skip(f"a Ray cluster cannot start here: {error}")


def _project(folder: Path, cases: list[dict[str, Any]], connector: str) -> Path:
    """An assistants project with the ``bench`` package and ``cases.jsonl``."""
    package = folder / "assistants" / "bench"
    (package / "src" / "models").mkdir(parents=True)
    (package / "package.yao").write_text(json.dumps({"name": "Bench", "connector": connector}))
    (package / "src" / "models" / "fake.py").write_text(FAKE_MODEL)
    with (folder / "cases.jsonl").open("w") as handle:
        for case in cases:
            handle.write(json.dumps(case) + "\n")
    return folder


def _cases(count: int, *, slow: bool = False) -> list[dict[str, Any]]:
    """Cases that pass, fail (every 7th), print (every 5th) and skip (every 50th)."""
    cases = []
    for index in range(count):
        words = ["case", str(index), "say", "hello"]
        if index % 7 == 3:
            words.append("fail")
        if index % 5 == 0:
            words.append("print")
        if slow:
            words.append("slow")
        case: dict[str, Any] = {
            "id": f"c{index:03d}",
            "input": " ".join(words),
            "assert": {"type": "contains", "value": "hello"},
        }
        if index % 50 == 49:
            case["skip"] = True
        cases.append(case)
    return cases


def _command(project: Path, out: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "agentcli",
        "eval",
        "bench",
        "@cases.jsonl",
        "-o",
        str(out),
        *extra,
    ]


def _env(project: Path) -> dict[str, str]:
    return {
        **os.environ,
        "AGENTCLI_HOME": str(project / "home"),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "RAY_USAGE_STATS_ENABLED": "0",
    }


def _eval(project: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        _command(project, out, *extra),
        cwd=project,
        env=_env(project),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )


def _ray(cluster: RayCluster, *extra: str) -> list[str]:
    return ["--executor", "ray", "--ray-address", cluster.address, *extra]


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _results(path: Path) -> list[dict[str, Any]]:
    return [line for line in _lines(path) if line.get("type") == "result"]


def _wait_for_results(path: Path, count: int, process: subprocess.Popen[str]) -> None:
    """Until ``path`` holds ``count`` results (bounded; the driver must still be running)."""
    deadline = time.monotonic() + RUN_TIMEOUT
    while time.monotonic() < deadline:
        if path.is_file() and sum('"type":"result"' in line for line in path.open()) >= count:
            return
        if process.poll() is not None:
            raise AssertionError(f"the driver exited {process.returncode} early")
        time.sleep(0.1)
    raise AssertionError(f"no {count} results in {path} within {RUN_TIMEOUT}s")


def _interrupted_run(
    project: Path,
    out: Path,
    ray: list[str],
    *,
    after: int,
    then: Callable[[subprocess.Popen[str]], object],
) -> tuple[subprocess.Popen[str], str, str]:
    """A driver at --parallel 2 that ``then`` disturbs once ``after`` results are written;
    the process and its output once it ended (bounded)."""
    process = subprocess.Popen(
        _command(project, out, "--parallel", "2", *ray),
        cwd=project,
        env=_env(project),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_for_results(out, after, process)
        then(process)
        stdout, stderr = process.communicate(timeout=RUN_TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    return process, stdout, stderr


def test_same_results_file_as_the_local_executor(cluster: RayCluster, tmp_path: Path) -> None:
    """200 offline cases: the Ray run's results are the local run's — ids, statuses,
    outputs, assertions, what the model printed — in the same order."""
    project = _project(tmp_path, _cases(200), "python:models.fake:reply")
    local, remote = tmp_path / "local.jsonl", tmp_path / "ray.jsonl"
    ran_local = _eval(project, local, "--parallel", "2")
    ran_ray = _eval(project, remote, "--parallel", "4", *_ray(cluster, "--ray-cpus", "0.5"))
    assert ran_local.returncode == 1, ran_local.stderr  # the failing cases fail both runs
    assert ran_ray.returncode == 1, ran_ray.stdout[-2000:] + ran_ray.stderr[-2000:]
    assert "Executor: ray (2 nodes, 2 CPUs: room for 4 cases at once)" in ran_ray.stdout

    def essentials(result: dict[str, Any]) -> tuple[Any, ...]:
        assertions = [(a["type"], a["passed"]) for a in result.get("assertions") or []]
        logs = [line["text"] for line in result.get("logs") or []]
        return result["id"], result["status"], result.get("output"), assertions, logs

    expected = [essentials(r) for r in _results(local)]
    got = [essentials(r) for r in _results(remote)]
    assert len(got) == 200
    assert got == expected
    statuses = {status for _, status, *_ in got}
    assert statuses == {"passed", "failed", "skipped"}
    assert any(logs for *_, logs in got)  # what the model printed on a worker came back
    summary = _lines(remote)[-1]
    assert summary["type"] == "summary"
    assert (summary["total"], summary["skipped"]) == (200, 4)
    header = _lines(remote)[0]
    assert header["metadata"]["options"]["executor"] == "ray"


def test_a_connector_matrix_runs_each_column_on_the_cluster(
    cluster: RayCluster, tmp_path: Path
) -> None:
    """Two columns (the fake model and an alias of it): each cell runs on a worker with its
    column's connector, and the results are the local matrix's."""
    project = _project(tmp_path, _cases(12), "python:models.fake:reply")
    (project / "connectors.yml").write_text("again: python:models.fake:reply\n")
    matrix = ("-c", "python:models.fake:reply", "-c", "again")
    local, remote = tmp_path / "local.jsonl", tmp_path / "ray.jsonl"
    ran_local = _eval(project, local, *matrix)
    ran_ray = _eval(project, remote, "--parallel", "2", *matrix, *_ray(cluster))
    assert ran_local.returncode == ran_ray.returncode == 1, ran_ray.stderr[-2000:]

    def cells(path: Path) -> list[tuple[Any, ...]]:
        return [(r["id"], r.get("connector"), r["status"], r.get("output")) for r in _results(path)]

    assert cells(remote) == cells(local)
    assert {connector for _, connector, *_ in cells(remote)} == {
        "python:models.fake:reply",
        "again",
    }


def test_rate_limit_is_shared_across_workers(cluster: RayCluster, tmp_path: Path) -> None:
    """A 429 halves the connector's limit for every worker of the cluster: six cases in six
    worker processes are rate limited at once, and their retries run at most three at a
    time (each worker process's own limit would let all six run)."""
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    # Six cases that meet at a barrier first, so six worker processes are up and the six
    # cases after them start together...
    warm = [
        {
            "id": f"w{i}",
            "input": f"barrier {barrier} 6",
            "options": {"connector": "python:models.fake:reply"},
        }
        for i in range(6)
    ]
    # ...and each of those is rate limited on its first call (429, Retry-After: 0) after a
    # second, then answered in a second.
    limited = [{"id": f"r{i}", "input": f"case {i} say hello"} for i in range(6)]
    with OpenAIServer() as server:
        project = _project(tmp_path, warm + limited, "local")
        model = "openai/first-1-429+slow-1000"
        connectors = {"local": {"model": model, "api_base": server.base_url, "api_key": "none"}}
        (project / "connectors.yml").write_text(json.dumps(connectors))
        out = tmp_path / "out.jsonl"
        ran = _eval(project, out, "--parallel", "6", *_ray(cluster, "--ray-cpus", "0.25"))
        spans = sorted(server.spans)
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
    assert [r["status"] for r in _results(out)] == ["passed"] * 12
    assert [status for *_, status in spans].count(429) == 6
    answered = [span for span in spans if span[2] == 200]
    assert len(answered) == 6
    peak = max(sum(1 for s in answered if s[0] <= start < s[1]) for start, _, _ in answered)
    assert peak <= 3, spans


def test_ctrl_c_writes_the_summary_and_resume_finishes(cluster: RayCluster, tmp_path: Path) -> None:
    """SIGINT to the driver: the tasks in flight are cancelled, the finished results and the
    summary are on disk, and the process ends by SIGINT (a shell's 130); ``--resume`` on
    the cluster then runs the rest, each case once."""
    project = _project(tmp_path, _cases(60, slow=True), "python:models.fake:reply")
    out = tmp_path / "out.jsonl"
    process, stdout, stderr = _interrupted_run(
        project, out, _ray(cluster), after=4, then=lambda p: p.send_signal(signal.SIGINT)
    )
    assert process.returncode == -signal.SIGINT, stdout[-2000:] + stderr[-2000:]
    lines = _lines(out)
    assert lines[-1]["type"] == "summary"
    results = _results(out)
    assert 4 <= len(results) < 60
    assert len({r["id"] for r in results}) == len(results)
    assert "Interrupted:" in stdout + stderr
    resumed = _eval(project, out, "--parallel", "2", "--resume", str(out), *_ray(cluster))
    assert resumed.returncode == 1, resumed.stdout[-2000:] + resumed.stderr[-2000:]
    ids = sorted(r["id"] for r in _results(out))
    assert ids == [f"c{i:03d}" for i in range(60)]


def test_a_killed_worker_node_loses_no_case(cluster: RayCluster, tmp_path: Path) -> None:
    """The worker node is killed mid-run: Ray runs its cases again on the head, and every
    case is recorded exactly once, none lost, none an error. (Last: the node stays dead.)"""
    project = _project(tmp_path, _cases(40, slow=True), "python:models.fake:reply")
    out = tmp_path / "out.jsonl"
    process, stdout, stderr = _interrupted_run(
        project, out, _ray(cluster), after=6, then=lambda p: cluster.kill_worker(0)
    )
    assert process.returncode == 1, stdout[-2000:] + stderr[-2000:]  # the failing cases
    results = _results(out)
    ids = [r["id"] for r in results]
    assert ids == [f"c{i:03d}" for i in range(40)]  # all, once each, in case order
    assert {r["status"] for r in results} == {"passed", "failed"}, [
        (r["id"], r["status"], r.get("error"))
        for r in results
        if r["status"] not in ("passed", "failed")
    ]
    assert _lines(out)[-1]["total"] == 40

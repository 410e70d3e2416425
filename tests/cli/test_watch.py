"""`agent eval --watch` in a real process on a real project: a change to a package re-runs
only its suites, a case file change re-runs its suite, a config change re-runs all, the
runs' own results start nothing, and Ctrl-C ends it promptly with 130; with an input, a
change to its case file or the --ctx file runs it again."""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROBE = ROOT / "fixtures" / "assistants" / "probe"
WAIT = 60.0  # seconds any one step may take on a loaded machine


def write_cases(path: Path, cases: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")


class Lines:
    """The lines of a stream, read on a thread, awaited with a deadline."""

    def __init__(self, stream) -> None:
        self.queue: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream) -> None:
        for line in stream:
            self.queue.put(line.rstrip("\n"))

    def wait_for(self, text: str, timeout: float = WAIT) -> list[str]:
        """The lines up to the first holding ``text`` (a failure naming what came instead)."""
        deadline = time.monotonic() + timeout
        taken: list[str] = []
        while time.monotonic() < deadline:
            try:
                line = self.queue.get(timeout=0.1)
            except queue.Empty:
                continue
            taken.append(line)
            self.seen.append(line)
            if text in line:
                return taken
        raise AssertionError(f"no {text!r} within {timeout}s; got: {taken}")

    def quiet_for(self, seconds: float) -> list[str]:
        """The lines that come within ``seconds``."""
        deadline = time.monotonic() + seconds
        taken = []
        while time.monotonic() < deadline:
            try:
                taken.append(self.queue.get(timeout=0.05))
            except queue.Empty:
                pass
        self.seen.extend(taken)
        return taken


@pytest.fixture
def project(tmp_path):
    for name in ("alpha", "beta"):
        shutil.copytree(PROBE, tmp_path / "assistants" / name)
        write_cases(
            tmp_path / "assistants" / name / "tests" / "inputs.jsonl",
            [{"id": "hello", "input": "hello", "assert": {"type": "contains", "value": "Hello"}}],
        )
    (tmp_path / "agentcli.yml").write_text(
        "suites:\n  a: assistants/alpha/tests/*.jsonl\n  b: assistants/beta/tests/*.jsonl\n",
        encoding="utf-8",
    )
    return tmp_path


def start_watch(folder: Path, *args: str) -> subprocess.Popen[str]:
    """``agent eval ARGS`` in ``folder`` (its memory in folder/home), its stderr to read."""
    env = {**os.environ, "AGENTCLI_HOME": str(folder / "home"), "PROBE_LOG": os.devnull}
    env.pop("AGENT_ROOT", None)
    return subprocess.Popen(
        [sys.executable, "-m", "agentcli", "eval", *args],
        cwd=folder,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def test_watch_reruns_only_what_a_change_touches_and_stops_on_ctrl_c(project):
    process = start_watch(project, "--watch")
    try:
        lines = Lines(process.stderr)
        lines.wait_for("watch: watching for changes (Ctrl-C stops)")
        # the runs wrote their results: that is no change to run again for
        assert lines.quiet_for(1.5) == []

        scripted = project / "assistants" / "beta" / "scripted.yml"
        scripted.write_text(scripted.read_text() + "\n# edited\n", encoding="utf-8")
        taken = lines.wait_for("re-running")
        assert taken[-1] == "watch: assistants/beta/scripted.yml changed: re-running suite b"
        lines.wait_for("watch: watching for changes")

        cases = project / "assistants" / "alpha" / "tests" / "inputs.jsonl"
        cases.write_text(
            cases.read_text()
            + json.dumps(
                {
                    "id": "added",
                    "input": "add 1 2",
                    "assert": {"type": "contains", "value": "sum=3"},
                }
            )
            + "\n",
            encoding="utf-8",
        )
        taken = lines.wait_for("re-running")
        assert taken[-1] == (
            "watch: assistants/alpha/tests/inputs.jsonl changed: re-running suite a"
        )
        lines.wait_for("watch: watching for changes")
        runs = project / ".agentcli" / "runs" / "assistants-alpha-tests-inputs"
        newest = sorted(runs.glob("output-*.jsonl"))[-1]
        ids = [json.loads(line).get("id") for line in newest.read_text().splitlines()]
        assert "added" in ids

        config = project / "agentcli.yml"
        config.write_text(config.read_text() + "parallel: 2\n", encoding="utf-8")
        taken = lines.wait_for("re-running")
        assert taken[-1] == "watch: agentcli.yml changed: re-running all"
        lines.wait_for("watch: watching for changes")
        assert len(list((project / ".agentcli" / "runs").glob("*/output-*.jsonl"))) == 6

        started = time.monotonic()
        process.send_signal(signal.SIGINT)
        code = process.wait(timeout=15)
        assert time.monotonic() - started < 10
        assert code in (130, -signal.SIGINT)  # ends by SIGINT, as agent eval does
        lines.wait_for("watch: stopped watching", timeout=5)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)


def test_sigterm_while_the_watch_waits_stops_it_with_130(tmp_path):
    shutil.copytree(PROBE, tmp_path / "assistants" / "alpha")
    write_cases(tmp_path / "c.jsonl", [{"id": "hello", "input": "hello"}])
    process = start_watch(tmp_path, "alpha", "@c.jsonl", "--watch")
    try:
        lines = Lines(process.stderr)
        lines.wait_for("watch: watching for changes (Ctrl-C stops)")
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=15) == 130  # as Ctrl-C, not killed by the signal
        assert time.monotonic() - started < 5
        lines.wait_for("watch: stopped watching", timeout=5)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)


def test_watch_of_an_input_reruns_when_its_case_file_or_ctx_file_changes(tmp_path):
    # no project: a case file given on the command line, outside the package
    shutil.copytree(PROBE, tmp_path / "assistants" / "alpha")
    cases = tmp_path / "loose" / "c.jsonl"
    write_cases(cases, [{"id": "hello", "input": "hello"}])
    ctx = tmp_path / "ctx.json"
    ctx_args = ["--ctx", "ctx.json"]
    ctx.write_text('{"locale": "en-us"}', encoding="utf-8")
    process = start_watch(tmp_path, "alpha", "@loose/c.jsonl", *ctx_args, "--watch")
    try:
        lines = Lines(process.stderr)
        lines.wait_for("watch: watching for changes (Ctrl-C stops)")
        assert lines.quiet_for(1.5) == []  # its output-*.jsonl beside the cases is no change

        write_cases(cases, [{"id": "hello", "input": "hello"}, {"id": "added", "input": "hi"}])
        taken = lines.wait_for("re-running")
        assert taken[-1] == "watch: loose/c.jsonl changed: re-running the input"
        lines.wait_for("watch: watching for changes")
        newest = sorted(cases.parent.glob("output-*.jsonl"))[-1]
        ids = [json.loads(line).get("id") for line in newest.read_text().splitlines()]
        assert "added" in ids

        ctx.write_text('{"locale": "fr-fr"}', encoding="utf-8")
        taken = lines.wait_for("re-running")
        assert taken[-1] == "watch: ctx.json changed: re-running the input"
        lines.wait_for("watch: watching for changes")

        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=15) in (130, -signal.SIGINT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)


def test_a_change_reruns_every_target_of_the_suites_it_touches(tmp_path):
    from agentcli.cli.suite_runs import Target
    from agentcli.cli.watch import Watched, _affected

    alpha, beta = tmp_path / "alpha", tmp_path / "beta"
    one = Target("a", alpha / "tests" / "one.jsonl")
    two = Target("a", tmp_path / "loose" / "two.jsonl")
    other = Target("b", beta / "tests" / "x.jsonl")
    watched = [Watched(one, alpha), Watched(two, None), Watched(other, beta)]
    assert _affected(watched, {alpha / "prompts.yml"}) == [one, two]
    assert _affected(watched, {tmp_path / "loose" / "two.jsonl"}) == [one, two]
    assert _affected(watched, {beta / "src" / "hooks.py"}) == [other]
    assert _affected(watched, {tmp_path / "loose" / "notes.txt"}) == []


def test_the_runs_own_files_are_no_change(tmp_path):
    from agentcli.cli.watch import _is_produced

    produced = [tmp_path / ".agentcli" / "runs", tmp_path / "report.html"]
    assert _is_produced(tmp_path / "a" / "tests" / "output-20260101000000.jsonl", produced)
    assert _is_produced(tmp_path / ".agentcli" / "runs" / "latest", produced)
    assert _is_produced(tmp_path / "report.html", produced)
    # their hidden temporary names too (written there, then renamed over the file)
    tests = tmp_path / "a" / "tests"
    assert _is_produced(tests / ".output-20260101000000.jsonl.6444.bcbd8336.tmp", produced)
    assert _is_produced(tmp_path / ".report.html.6444.bcbd8336.tmp", produced)
    assert not _is_produced(tests / ".inputs.jsonl.swp", produced)
    assert _is_produced(tmp_path / "a" / "tests" / "cassettes" / "c1.jsonl", produced)
    assert not _is_produced(tmp_path / "a" / "tests" / "inputs.jsonl", produced)
    assert not _is_produced(tmp_path / "a" / "prompts.yml", produced)

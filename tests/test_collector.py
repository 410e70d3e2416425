"""agentcli.collector: the garbage collector off while `agent eval` starts, set aside for
what was loaded and collecting less often while the cases run; a host's own settings
kept."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcli import collector


@pytest.fixture(autouse=True)
def _collector_as_it_was() -> Iterator[None]:
    enabled, threshold = gc.isenabled(), gc.get_threshold()
    yield
    collector._paused = False
    gc.set_threshold(*threshold)
    (gc.enable if enabled else gc.disable)()


def test_pause_and_resume_turn_it_off_and_on() -> None:
    collector.pause()
    assert not gc.isenabled()
    collector.resume()
    assert gc.isenabled()


def test_resume_leaves_a_collector_the_host_turned_off_alone() -> None:
    gc.disable()
    collector.pause()  # already off: not ours to turn on again
    collector.resume()
    assert not gc.isenabled()


def test_a_run_freezes_the_loaded_objects_and_collects_less_often_then_undoes_both() -> None:
    assert gc.get_freeze_count() == 0
    before = gc.get_threshold()
    collector.pause()
    with collector.while_running():
        assert gc.isenabled()  # the start-up is over
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold() == (collector.RUN_THRESHOLD, *before[1:])
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == before


def test_a_host_that_froze_objects_keeps_its_freeze_and_thresholds() -> None:
    before = gc.get_threshold()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with collector.while_running():
            assert gc.get_threshold() == before
        assert gc.get_freeze_count() >= frozen
    finally:
        gc.unfreeze()


def test_a_threshold_above_the_run_s_is_kept() -> None:
    gc.set_threshold(collector.RUN_THRESHOLD * 5, 10, 10)
    with collector.while_running():
        assert gc.get_threshold()[0] == collector.RUN_THRESHOLD * 5
    assert gc.get_threshold()[0] == collector.RUN_THRESHOLD * 5


PROBE = """
import gc, json, sys
import agentcli.eval.run.session as session

seen = {}
load = session.open_cases

def open_cases(*args, **kwargs):  # called while the command starts
    seen["starting"] = gc.isenabled()
    return load(*args, **kwargs)

session.open_cases = open_cases
sys.argv = ["agent", *sys.argv[1:]]
from agentcli.cli.main import main
try:
    main()
finally:
    seen["after"] = gc.isenabled()
    with open("seen.json", "w") as handle:
        json.dump(seen, handle)
"""


def test_agent_eval_starts_with_the_collector_off_and_runs_its_cases_with_it_on(
    tmp_path: Path,
) -> None:
    package = tmp_path / "assistants" / "probe"
    (package / "src").mkdir(parents=True)
    (package / "package.yao").write_text(json.dumps({"name": "Probe", "connector": "echo"}))
    (package / "src" / "gc_probe.py").write_text(
        textwrap.dedent(
            """
            import gc, json

            def Before(ctx, case):
                with open("during.json", "w") as handle:
                    json.dump([gc.isenabled(), gc.get_threshold()[0]], handle)
            """
        )
    )
    (tmp_path / "cases.jsonl").write_text(
        json.dumps({"id": "a", "input": "hello", "before": "gc_probe.Before"}) + "\n"
    )
    env = {**os.environ, "AGENTCLI_HOME": str(tmp_path / "home")}
    argv = [sys.executable, "-c", PROBE, "eval", "probe", "@cases.jsonl", "-o", "out.jsonl"]
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    seen = json.loads((tmp_path / "seen.json").read_text())
    assert seen == {"starting": False, "after": True}
    assert json.loads((tmp_path / "during.json").read_text()) == [True, collector.RUN_THRESHOLD]
    # any other command leaves the collector alone
    other = [sys.executable, "-c", PROBE.replace("session.open_cases = open_cases", ""), "list"]
    listed = subprocess.run(
        other, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert listed.returncode == 0, listed.stderr
    assert json.loads((tmp_path / "seen.json").read_text()) == {"after": True}

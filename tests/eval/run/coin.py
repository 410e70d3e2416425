"""A project with ``coin``: an assistant whose model passes a case with the probability its
input names ("pass 60%"), drawn afresh for every run from ``--seed``, the case and the run
(the Create hook puts the run's seeded chat id into the message the model sees). So a run
under ``--seed`` gives the same statuses every time, whichever process makes which run: a
run resumed in a second process draws what an uninterrupted one would have. Each model call
is logged (``COIN_LOG``) and takes ``COIN_DELAY`` seconds, so a test can interrupt it at a
known call."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

HOOK = """
def Create(ctx, messages, options):
    last = dict(messages[-1])
    last["content"] = f"{last['content']} @{ctx.chat_id}"
    return {"messages": [*messages[:-1], last]}
"""

MODEL = """
import os, random, re, time


def reply(messages, tools, settings):
    text = messages[-1]["content"]
    with open(os.environ["COIN_LOG"], "a", encoding="utf-8") as log:
        log.write(text + "\\n")
    time.sleep(float(os.environ.get("COIN_DELAY", "0")))
    rate = int(re.search(r"pass (\\d+)%", text).group(1))
    draw = random.Random(f"{settings.get('seed')}:{text}").random()
    return "pass" if draw * 100 < rate else "fail"
"""


def coin_project(root: Path, cases: list[tuple[str, int]]) -> Path:
    """``root`` with ``assistants/coin`` and ``cases.jsonl`` (``(id, pass rate)`` each)."""
    package = root / "assistants" / "coin"
    (package / "src").mkdir(parents=True)
    (package / "package.yao").write_text(
        '{"name": "Coin", "connector": "python:model:reply"}', encoding="utf-8"
    )
    (package / "src" / "index.py").write_text(HOOK, encoding="utf-8")
    (package / "src" / "model.py").write_text(MODEL, encoding="utf-8")
    lines = [
        json.dumps(
            {"id": case_id, "input": f"pass {rate}%", "assert": {"type": "equals", "value": "pass"}}
        )
        for case_id, rate in cases
    ]
    (root / "cases.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def coin_env(root: Path, delay: float = 0.0) -> dict[str, str]:
    """The environment of an ``agent`` process in the coin project."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTEST_", "COV_")) and k not in ("AGENT_ROOT", "AGENT_CONNECTOR")
    }
    env.update(
        AGENTCLI_HOME=str(root / "home"),
        COIN_LOG=str(root / "calls.log"),
        COIN_DELAY=str(delay),
        NO_COLOR="1",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
    )
    return env


def agent(root: Path, *args: str, delay: float = 0.0) -> subprocess.CompletedProcess[str]:
    """``python -m agentcli ARGS`` in ``root``, waited for."""
    return subprocess.run(
        [sys.executable, "-m", "agentcli", *args],
        cwd=root,
        env=coin_env(root, delay),
        capture_output=True,
        text=True,
        timeout=120,
    )


def start_agent(root: Path, *args: str, delay: float) -> subprocess.Popen[str]:
    """``python -m agentcli ARGS`` in ``root``, not waited for."""
    return subprocess.Popen(
        [sys.executable, "-m", "agentcli", *args],
        cwd=root,
        env=coin_env(root, delay),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def calls(root: Path) -> list[str]:
    """The messages the model was called with so far, in order."""
    log = root / "calls.log"
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def wait_for_calls(root: Path, count: int, *, within: float = 60) -> None:
    """Wait until the model has been called ``count`` times."""
    deadline = time.monotonic() + within
    while len(calls(root)) < count:
        if time.monotonic() > deadline:
            raise AssertionError(f"only {len(calls(root))} model calls after {within}s")
        time.sleep(0.01)

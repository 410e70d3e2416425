"""The real ``agent view`` command running in a process of its own, for the tests that
talk to it over HTTP (and the browser test)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def serving(*args: str, cwd: Path | None = None) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``agent view ARGS --port 0 --no-open`` running, and the line it printed."""
    server = subprocess.Popen(
        [sys.executable, "-m", "agentcli", "view", *args, "--port", "0", "--no-open"],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )
    try:
        assert server.stdout is not None
        yield server, server.stdout.readline()
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGINT)
        server.wait(timeout=20)

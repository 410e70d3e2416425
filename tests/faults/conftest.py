"""Fixtures of the fault-injection suite: a project folder with the probe and loopy
assistants, and a fresh loopback server per test."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from fixtures.openai_server import OpenAIServer

from .harness import FIXTURES


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``tmp/project`` holding ``assistants/probe`` and ``assistants/loopy``; it is the cwd."""
    root = tmp_path / "project"
    for name in ("probe", "loopy"):
        shutil.copytree(FIXTURES / name, root / "assistants" / name)
    monkeypatch.chdir(root)
    monkeypatch.setenv("AGENTCLI_HOME", str(root / "home"))
    monkeypatch.setenv("PROBE_LOG", str(root / "hooks.log"))
    monkeypatch.delenv("AGENT_ROOT", raising=False)
    monkeypatch.delenv("AGENT_CONNECTOR", raising=False)
    return root


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    """A loopback OpenAI-compatible server that keeps no request log (runs are large)."""
    with OpenAIServer(record=False) as running:
        yield running

"""The bwrap probe, asked once per test session: its tests skip, saying why, only where
this machine refuses bubblewrap."""

from __future__ import annotations

import asyncio

import pytest

from agentcli.assistant.sandbox.bwrap import bwrap_refusal


@pytest.fixture(scope="session")
def bwrap_works() -> None:
    """Skip (with bwrap's own reason) where bwrap cannot run sandboxes."""
    reason = asyncio.run(bwrap_refusal())
    if reason is not None:
        print(f"\nbwrap tests skipped: {reason}")
        pytest.skip(f"bwrap cannot run here: {reason}")

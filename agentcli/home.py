"""The user's agentcli folder, where state, caches and sessions persist across runs."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["data_home"]


def data_home() -> Path:
    """``$AGENTCLI_HOME``, or ``~/.local/share/agentcli``."""
    home = os.environ.get("AGENTCLI_HOME")
    return Path(home).expanduser() if home else Path.home() / ".local" / "share" / "agentcli"

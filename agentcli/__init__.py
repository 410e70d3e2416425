"""agentcli: run and evaluate LLM agents from the command line."""

from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["__version__"]

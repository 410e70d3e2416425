"""Helper assistants shipped inside agentcli: ``builtin.simulator`` (the user of dynamic
cases), ``builtin.validator`` (the judge of ``agent`` assertions) and ``builtin.generator``
(``-i agents:builtin.generator``). Each is a package folder like any other: a real-model
prompt in ``prompts.yml`` and an offline ``python:`` model in ``src/`` as its connector.

They are found by id from any project (``agentcli.assistant.package.resolve_assistant``
falls back to them), so a project outside this repository has a judge and a simulator
without copying one; a project's own package with the same id wins.
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "BUILTIN_NAMES",
    "BUILTIN_PREFIX",
    "DEFAULT_JUDGE",
    "DEFAULT_SIMULATOR",
    "PACKAGES_ROOT",
    "builtin_dir",
]

BUILTIN_PREFIX = "builtin."
# What eval falls back to when neither the case nor a flag names a helper.
DEFAULT_JUDGE = "agents:builtin.validator"
DEFAULT_SIMULATOR = "builtin.simulator"
BUILTIN_NAMES = ("generator", "simulator", "validator")
# Ids are computed below this folder, so the package in builtin/simulator is
# "builtin.simulator" whichever project loads it.
PACKAGES_ROOT = Path(__file__).resolve().parent.parent


def builtin_dir(ref: str) -> Path | None:
    """The folder of the shipped helper ``ref`` names (``builtin.simulator``), or None."""
    name = ref.removeprefix("agents:")
    if not name.startswith(BUILTIN_PREFIX):
        return None
    name = name.removeprefix(BUILTIN_PREFIX)
    return PACKAGES_ROOT / "builtin" / name if name in BUILTIN_NAMES else None

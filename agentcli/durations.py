"""Durations as users write them: seconds, or a number with a unit (``30s``, ``2m``, ``1h``,
``1500ms``, ``1m30s``), for case-file timeouts and the CLI's ``--timeout``."""

from __future__ import annotations

import json
import math
import re
from typing import Any

from agentcli.errors import ConfigError

__all__ = ["parse_duration"]

_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")
_SECONDS = re.compile(r"\d+(?:\.\d+)?")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(value: Any) -> float:
    """Seconds from a number or ``"30s"``, ``"2m"``, ``"1h"``, ``"1500ms"``, ``"1m30s"``."""
    seconds: float | None = None
    if isinstance(value, int | float) and not isinstance(value, bool):
        seconds = float(value)
    elif isinstance(value, str):
        text = value.strip().lower()
        if _SECONDS.fullmatch(text):
            seconds = float(text)
        elif text and _DURATION_PART.sub("", text) == "":
            seconds = sum(float(n) * _UNIT_SECONDS[u] for n, u in _DURATION_PART.findall(text))
    if seconds is not None and math.isfinite(seconds) and seconds <= 0:
        raise ConfigError(
            f"invalid duration {json.dumps(value, default=str)}: a duration must be more "
            "than 0, e.g. 30s, 2m, 1h, 1500ms"
        )
    if seconds is None or not math.isfinite(seconds):
        raise ConfigError(
            f"invalid duration {json.dumps(value, default=str)}: "
            "use seconds or a number with a unit, e.g. 30s, 2m, 1h, 1500ms"
        )
    return seconds

"""Durations as users write them (case timeouts, --timeout)."""

from __future__ import annotations

import pytest

from agentcli.durations import parse_duration
from agentcli.errors import ConfigError


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        (30, 30.0),
        (2.5, 2.5),
        ("30s", 30.0),
        ("2m", 120.0),
        ("1h", 3600.0),
        ("1500ms", 1.5),
        ("1m30s", 90.0),
        ("45", 45.0),
        (" 10S ", 10.0),
    ],
)
def test_parse_duration(value, seconds):
    assert parse_duration(value) == seconds


@pytest.mark.parametrize("value", ["", "abc", "5 minutes", "10d", "-5s", True, None, "1m x"])
def test_parse_duration_rejects(value):
    with pytest.raises(
        ConfigError, match=r"invalid duration .*: use seconds or a number with a unit"
    ):
        parse_duration(value)


@pytest.mark.parametrize("value", [0, "0", "0s", -1, 0.0])
def test_a_duration_of_zero_or_less_is_told_so(value):
    # `--timeout 0` said only "invalid duration", as if 0 were not a number of seconds
    with pytest.raises(ConfigError, match=r"invalid duration .*: a duration must be more than 0"):
        parse_duration(value)

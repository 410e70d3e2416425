"""Delays and timeouts read from outside are finite and capped: a provider's hostile
``Retry-After`` (NaN, infinities, huge numbers, far dates) under ``--parallel`` retries
after at most the connector's ``max_delay``, and a config's NaN or infinite timeout is a
clear error before anything runs."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from fixtures.openai_server import OpenAIServer, Reply

from .harness import agent, check_complete, write_cases, write_connectors

HOSTILE = [
    {"Retry-After": "nan"},
    {"Retry-After": "NaN"},
    {"retry-after-ms": "nan"},
    {"Retry-After": "1e999"},
    {"Retry-After": "inf"},
    {"Retry-After": "-inf"},
    {"Retry-After": "99999999999999999999"},
    {"Retry-After": "Fri, 31 Dec 9999 23:59:59 GMT"},
]
MAX_DELAY = 0.05  # write_connectors' cap


def test_hostile_retry_after_under_parallel_retries_within_max_delay(
    project: Path, server: OpenAIServer
) -> None:
    write_connectors(project, server.base_url, "echo")
    cases = write_cases(project / "cases.jsonl", len(HOSTILE))
    server.enqueue(*(Reply.failure(429, "slow down", headers=h) for h in HOSTILE))
    output = project / "out.jsonl"
    started = time.monotonic()
    run = agent(
        project,
        *("eval", "probe", f"@{cases}", "-c", "loop", "--parallel", "4"),
        *("--timeout", "8s", "-o", str(output)),
        timeout=30,
    )
    elapsed = time.monotonic() - started
    outcome = check_complete(output, len(HOSTILE))
    assert outcome.statuses == {"passed": len(HOSTILE)}, (run.stdout, run.stderr)
    assert run.returncode == 0
    delays = [
        retry["delay_s"]
        for result in outcome.report.results
        for retry in (result.trace.retries if result.trace else None) or []
    ]
    assert len(delays) == len(HOSTILE), outcome.report.results
    assert all(0 <= delay <= MAX_DELAY for delay in delays), delays
    assert elapsed < 8, elapsed  # a NaN sleep waited out the case timeout


TIMEOUT_ERROR = "timeout must be a number of seconds > 0"
DELAY_ERROR = "retry delays must be finite"


@pytest.mark.parametrize(
    ("field", "message"),
    [(f"timeout: {value}", TIMEOUT_ERROR) for value in (".inf", ".nan", "-.inf", "1e999")]
    + [
        (f"retry: {{{field}}}", DELAY_ERROR)
        for field in ("base_delay: .nan", "max_delay: .inf", "jitter: .nan")
    ],
)
def test_a_non_finite_connector_timeout_or_retry_delay_is_a_config_error(
    project: Path, server: OpenAIServer, field: str, message: str
) -> None:
    (project / "connectors.yml").write_text(
        f"loop: {{model: 'openai/echo', api_base: '{server.base_url}', api_key: none, {field}}}\n",
        encoding="utf-8",
    )
    cases = write_cases(project / "cases.jsonl", 1)
    run = agent(project, "eval", "probe", f"@{cases}", "-c", "loop", timeout=30)
    assert run.returncode == 2, (run.stdout, run.stderr)
    assert message in run.stderr
    assert "connectors.yml" in run.stderr and "Traceback" not in run.stderr

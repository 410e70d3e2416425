"""A large streamed answer costs time in proportion to its size (each delta used to copy
the whole text so far: 5 MB took minutes), and ``max_response_bytes`` ends a response that
passes it as a clear, non-retried error on every OpenAI-compatible transport and litellm.

Throughput itself is measured by ``bench/big_stream.py``; here a lax timeout only proves
that a 20 MB answer is not quadratic."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from agentcli.errors import ResponseTooLarge
from agentcli.models.base import ModelSettings, TextDelta, collect
from agentcli.models.litellm_model import LiteLLMModel
from agentcli.models.openai_model import OpenAICompatModel
from agentcli.models.retry import RetryPolicy
from fixtures.openai_server import OpenAIServer
from tests.models.rawserver import RawServer

from .harness import agent

USER = [{"role": "user", "content": "go"}]
WORDS = "lorem ipsum dolor sit amet "  # spaces let the redactor release text at once


def big_text(megabytes: float) -> str:
    """About ``megabytes`` MB of words."""
    return WORDS * int(megabytes * 1_000_000 // len(WORDS))


def connector(project: Path, server: OpenAIServer, **fields: object) -> None:
    """A ``loop`` connector on the loopback server with extra ``fields``."""
    extra = "".join(f", {key}: {json.dumps(value)}" for key, value in fields.items())
    (project / "connectors.yml").write_text(
        f"loop: {{model: openai/m, api_base: '{server.base_url}', api_key: none, timeout: 30, "
        f"retry: {{max_attempts: 3, base_delay: 0.01, max_delay: 0.05}}{extra}}}\n",
        encoding="utf-8",
    )


@pytest.mark.parametrize("mode", ["text", "json"])
def test_a_20_mb_answer_streams_in_bounded_time(
    project: Path, server: OpenAIServer, mode: str
) -> None:
    text = big_text(20 if mode == "text" else 5)
    server.enqueue(text=text, chunk_size=2048)
    connector(project, server)
    json_flag = ["--json"] if mode == "json" else []
    run = agent(project, "run", "-c", "loop", "hello", *json_flag, timeout=60)
    assert run.returncode == 0, run.stderr[-2000:]
    if mode == "text":
        assert run.stdout.rstrip("\n") == text
        return
    events = [json.loads(line) for line in run.stdout.splitlines()]
    deltas = [e["delta"]["text"] for e in events if e["type"] == "message_update"]
    assert "".join(deltas) == text
    end = [e for e in events if e["type"] == "message_end"][-1]
    assert end["message"]["content"] == text
    # A delta's line carries the delta, not the whole answer so far.
    assert max(len(line) for line in run.stdout.splitlines() if "message_update" in line) < 10_000


def test_max_response_bytes_cuts_a_run_with_a_clear_error(
    project: Path, server: OpenAIServer
) -> None:
    server.enqueue(text=big_text(2), chunk_size=1024)
    connector(project, server, max_response_bytes=100_000)
    run = agent(project, "run", "-c", "loop", "hello", timeout=30)
    assert run.returncode == 1, (run.stdout[-500:], run.stderr)
    assert "max_response_bytes (100,000 bytes)" in run.stderr
    assert "connectors.yml" in run.stderr and "Traceback" not in run.stderr
    assert server.pending == 0  # cut, and not retried (the queue held one reply)


@pytest.mark.parametrize("value", [0, -1, 1.5, "64MB", True])
def test_max_response_bytes_must_be_a_positive_whole_number(
    project: Path, server: OpenAIServer, value: object
) -> None:
    connector(project, server, max_response_bytes=value)
    run = agent(project, "run", "-c", "loop", "hello", timeout=30)
    assert run.returncode == 2, run.stderr
    assert "max_response_bytes must be a whole number of bytes > 0" in run.stderr


def _model(kind: str, server_url: str, limit: int) -> OpenAICompatModel | LiteLLMModel:
    """The model under test: one OpenAI-compatible transport, or litellm."""
    retry = RetryPolicy(max_attempts=2, base_delay=0.001, max_delay=0.01)
    if kind == "litellm":
        return LiteLLMModel(
            "openai/m", api_base=server_url, api_key="k", retry=retry, max_response_bytes=limit
        )
    return OpenAICompatModel(
        "m", api_base=server_url, api_key="k", transport=kind, retry=retry, max_response_bytes=limit
    )


@pytest.mark.parametrize("kind", ["aiohttp", "sdk", "litellm"])
async def test_max_response_bytes_on_every_transport(openai_server: OpenAIServer, kind: str):
    openai_server.enqueue(text="x" * 50_000, chunk_size=1000)
    openai_server.enqueue(text="never asked for")
    model = _model(kind, openai_server.base_url, 20_000)
    seen = 0
    with pytest.raises(ResponseTooLarge) as caught:
        async with asyncio.timeout(30):
            async for part in model.stream(USER, [], ModelSettings()):
                seen += len(part.text) if isinstance(part, TextDelta) else 0
    assert 0 < seen <= 20_000
    error = caught.value
    assert "max_response_bytes (20,000 bytes)" in str(error) and "connectors.yml" in error.hint
    assert (error.retryable, error.attempts, openai_server.pending) == (False, 1, 1)
    if kind != "litellm":
        await model.aclose()


@pytest.mark.parametrize("kind", ["aiohttp", "sdk"])
async def test_a_whole_body_or_one_line_past_the_limit_is_cut(kind: str):
    huge_line = b"data: " + b"x" * 300_000  # never ends: would be held whole
    sse = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: %d\r\n\r\n"
    big_json = json.dumps({"choices": [{"message": {"content": "y" * 300_000}}]}).encode()
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
    answers = [sse % len(huge_line) + huge_line, head % len(big_json) + big_json]
    async with RawServer(*answers) as server:
        for _ in answers:
            model = _model(kind, server.url, 100_000)
            with pytest.raises(ResponseTooLarge):
                async with asyncio.timeout(10):
                    await collect(model, USER)
            await model.aclose()


async def test_a_line_split_over_many_pieces_is_read_whole():
    """The line reader joins a line spread over many reads once (and keeps \\r\\n apart)."""
    from agentcli.models.streaming import lines

    async def pieces():
        for _ in range(1000):
            yield b"a" * 1000
        yield b"\r"
        yield b"\nnext\rlast"

    assert [len(x) for x in [line async for line in lines(pieces())]] == [1_000_000, 4, 4]

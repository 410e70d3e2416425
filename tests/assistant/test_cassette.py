"""Cassettes: the file format, request matching and the words of a miss."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from agentcli.assistant.cassette import (
    Cassette,
    call_server,
    decode_parts,
    encode_parts,
    first_difference,
    read_interactions,
    use,
)
from agentcli.errors import ConfigError, ToolError
from agentcli.models.base import (
    ModelResponse,
    ResponseDone,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallRequest,
    Usage,
)


@pytest.mark.parametrize(
    ("recorded", "asked", "words"),
    [
        (
            {"a": [1, {"b": "Paris"}]},
            {"a": [1, {"b": "paris"}]},
            "a[1].b differs: 'Paris' vs 'paris'",
        ),
        ({"a": 1}, {"a": 1, "b": 2}, "b is asked for but was not recorded"),
        ({"a": 1, "b": 2}, {"a": 1}, "b was recorded but is not asked for"),
        ({"m": [1, 2]}, {"m": [1, 2, 3]}, "m has 3 items, 2 recorded"),
        ({"m": "x"}, {"m": 1}, "m differs: 'x' vs 1"),
        ({"same": True}, {"same": True}, ""),
    ],
)
def test_first_difference_names_the_path(recorded, asked, words):
    assert first_difference(recorded, asked) == words


def test_parts_round_trip_through_json():
    parts = [
        ThinkingDelta("hmm"),
        TextDelta("hi"),
        ToolCallDelta(0, "c1", "search", '{"q": 1}'),
        ResponseDone(
            ModelResponse(
                content="hi",
                tool_calls=[ToolCallRequest("c1", "search", {"q": 1})],
                thinking="hmm",
                finish_reason="tool_calls",
                usage=Usage(3, 4, provider="openai", model="m"),
                provider="openai",
                model="m",
            )
        ),
    ]
    assert decode_parts(json.loads(json.dumps(encode_parts(parts)))) == parts


def test_the_same_request_twice_takes_two_recordings_in_order(tmp_path: Path):
    cassette = Cassette(tmp_path / "c.jsonl", "record", "c")
    cassette.add("model", {"q": 1}, ["first"])
    cassette.add("model", {"q": 1}, ["second"])
    cassette.save()
    replay = Cassette.open(tmp_path / "c.jsonl", "replay", "c", None)
    assert [replay.take("model", {"q": 1}).reply for _ in range(2)] == [["first"], ["second"]]
    assert replay.take("model", {"q": 1}) is None
    miss = replay.miss("model", {"q": 1}, "the call")
    assert "it was recorded fewer times" in miss.message


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"type": "cassette", "version": 1, "case": "c"}\nnot json\n', "c.jsonl:2: not JSON"),
        ('{"type": "cassette", "version": 99}\n', "c.jsonl:1: not a cassette of format version 1"),
        (
            '{"type": "cassette", "version": 1}\n{"type": "tape"}\n',
            "c.jsonl:2: not a cassette entry",
        ),
    ],
)
def test_a_bad_cassette_line_is_named_by_file_and_line(tmp_path: Path, text, problem):
    path = tmp_path / "c.jsonl"
    path.write_text(text)
    with pytest.raises(ConfigError, match=problem):
        read_interactions(path)


def test_a_long_text_is_shown_around_where_it_first_differs():
    recorded = '{"id": "EXP-0001", "amount": 480.0, "note": "' + "x" * 80 + '", "at": "15:55:12"}'
    asked = recorded.replace("15:55:12", "15:56:40")
    words = first_difference({"content": recorded}, {"content": asked})
    assert words.startswith("content differs: ...'")
    assert "15:55:12" in words and "15:56:40" in words


READ = {"server": "library", "uri": "library://books/2"}


def exchange(cassette: Cassette, live: Any) -> Any:
    """A resource read through ``cassette`` (``live`` the server's answer)."""

    async def read() -> Any:
        if isinstance(live, Exception):
            raise live
        return live

    async def run() -> Any:
        with use(cassette):
            return await call_server("resource", READ, "the read of library://books/2", read)

    return asyncio.run(run())


def test_a_resource_read_is_recorded_and_replayed_in_each_mode(tmp_path: Path):
    path = tmp_path / "c.jsonl"
    recording = Cassette.open(path, "record", "c", None)
    assert exchange(recording, [{"text": "Emma"}]) == [{"text": "Emma"}]
    with pytest.raises(ToolError, match="no such book"):
        exchange(recording, ToolError("no such book"))
    recording.save()
    assert [item.kind for item in read_interactions(path)] == ["resource", "resource"]
    for mode in ("replay", "replay-live-model"):  # the tool servers' side replayed
        replay = Cassette.open(path, mode, "c", None)
        assert exchange(replay, RuntimeError("the server must not be asked")) == [{"text": "Emma"}]
        with pytest.raises(ToolError, match=r"^no such book$"):
            exchange(replay, RuntimeError("the server must not be asked"))
    live_tools = Cassette.open(path, "replay-live-tools", "c", None)  # the server asked
    assert exchange(live_tools, [{"text": "live"}]) == [{"text": "live"}]


def test_a_resource_read_missing_from_the_cassette_names_the_difference(tmp_path: Path):
    cassette = Cassette(tmp_path / "c.jsonl", "replay", "c")
    cassette.add("resource", {"server": "library", "uri": "library://books/1"}, {"result": []})
    with pytest.raises(ToolError) as caught:
        exchange(cassette, [])
    assert str(caught.value) == (
        f"the read of library://books/2 is not in {tmp_path / 'c.jsonl'}:"
        " uri differs: 'library://books/1' vs 'library://books/2'"
    )
    grown = Cassette(tmp_path / "g.jsonl", "record-missing", "c")  # recorded, not a miss
    assert exchange(grown, [{"text": "Emma"}]) == [{"text": "Emma"}]
    assert [(i.kind, i.request) for i in grown.interactions] == [("resource", READ)]

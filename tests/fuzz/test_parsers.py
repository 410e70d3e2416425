"""Every parser of text that users or models write, fed random and damaged input: only the
documented outcomes come out (agentcli's errors, or ``ValueError`` where the parser's
contract says so), never a crash."""

from __future__ import annotations

import asyncio
import functools
import json
from pathlib import Path
from typing import Any

import yaml
from hypothesis import given
from hypothesis import strategies as st

from agentcli.durations import parse_duration
from agentcli.errors import AgentCliError, ConfigError
from agentcli.eval.checks.matching import extract_json
from agentcli.eval.run.dynamic import SimulatorReply, parse_simulator_reply
from agentcli.eval.run.services import parse_verdict
from agentcli.eval.run.sharding import parse_shard
from agentcli.models.base import ModelSettings, ResponseDone
from agentcli.models.scripted import ScriptedModel

from .mutate import ANY_VALUE, FUZZ, as_yaml, mutated, mutated_bytes, mutated_data, only_own_errors

ROOT = Path(__file__).resolve().parents[2]

# --- durations and shard specs --------------------------------------------------------------

DURATIONS = ["30s", "2m", "1h", "1500ms", "1m30s", "0.5", "5m", "10"]


@FUZZ
@given(value=st.one_of(mutated(DURATIONS), st.text(max_size=8), ANY_VALUE))
def test_parse_duration(value: Any) -> None:
    seconds = only_own_errors(lambda: parse_duration(value))
    assert seconds is None or (isinstance(seconds, float) and 0 < seconds < float("inf"))


@FUZZ
@given(text=st.one_of(mutated(["1/4", "3/3", " 2 / 8 "]), st.text(max_size=8)))
def test_parse_shard(text: str) -> None:
    shard = only_own_errors(lambda: parse_shard(text))
    if shard is not None:
        index, count = shard
        assert 1 <= index <= count


def test_parse_shard_rejects_the_documented_mistakes() -> None:
    for text in ("3/2", "0/2", "1/0", "a/b", "", "1", "-1/2"):
        try:
            parse_shard(text)
        except ConfigError as error:
            assert text.strip() in str(error)
        else:
            raise AssertionError(f"{text!r} was accepted")


# --- what models answer: JSON, simulator moves, verdicts ------------------------------------

ANSWERS = [
    '{"message": "Hi, I need help", "goal_achieved": false, "reasoning": "start"}',
    'Sure!\n```json\n{"passed": true, "reason": "polite"}\n```\nDone.',
    'The result is {"passed": "false", "reason": "rude", "score": [1, 2]} as requested',
    "```python\nprint({'a': 1})\n```\n[1, 2, 3]",
    "plain prose without any json",
    '{"message": "", "goal_achieved": "true"}',
]
MODEL_TEXT = st.one_of(mutated(ANSWERS), st.text(max_size=40))


@FUZZ
@given(text=MODEL_TEXT)
def test_extract_json(text: str) -> None:
    try:
        value = extract_json(text)
    except ValueError:
        return
    json.dumps(value)  # whatever it found is plain JSON data


@FUZZ
@given(answer=st.one_of(MODEL_TEXT, mutated_data([json.loads(ANSWERS[0])]), ANY_VALUE))
def test_parse_simulator_reply(answer: Any) -> None:
    try:
        reply = parse_simulator_reply(answer)
    except ValueError:
        return
    assert isinstance(reply, SimulatorReply) and isinstance(reply.message, str)
    assert isinstance(reply.goal_achieved, bool)


@FUZZ
@given(answer=st.one_of(MODEL_TEXT, mutated_data([{"passed": True, "reason": "ok"}]), ANY_VALUE))
def test_parse_verdict(answer: Any) -> None:
    try:
        verdict = parse_verdict(answer)
    except ValueError:
        return
    assert isinstance(verdict["passed"], bool) and isinstance(verdict["reason"], str)


# --- scripted rules: loading, and answering any conversation --------------------------------

RULE_FILES = [*ROOT.glob("assistants/**/scripted.yml"), *ROOT.glob("fixtures/**/scripted.yml")]
RULE_TEXTS = [
    *sorted({p.read_text(encoding="utf-8") for p in RULE_FILES}),
    (ROOT / "tests/models/data/scripted.yml").read_text(encoding="utf-8"),
]
ROLES = ["user", "assistant", "tool", "system"]
TOOLS = [
    {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
    for name in ("add", "probe__slow", "get_forecast", "weather__list_cities")
]


@st.composite
def messages(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A conversation in the OpenAI shape with random contents (what a runtime may send)."""
    text = st.one_of(st.text(max_size=30), mutated(["hello", "add 2 3", "sleep 0", "json"]))
    content = st.one_of(
        text,
        st.none(),
        st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": text}), max_size=2),
    )
    conversation = []
    for _ in range(draw(st.integers(0, 5))):
        role = draw(st.sampled_from(ROLES))
        message: dict[str, Any] = {"role": role, "content": draw(content)}
        if role == "tool":
            message["tool_call_id"] = draw(st.sampled_from(["c1", "c2", "nope"]))
            message["name"] = draw(st.sampled_from(["add", "slow", "boom", ""]))
            message["content"] = draw(st.one_of(text, st.just('{"id": 1}'), st.just("[1, {")))
        elif role == "assistant" and draw(st.booleans()):
            name = draw(st.sampled_from(["add", "slow", "x"]))
            call = {"id": "c1", "type": "function", "function": {"name": name, "arguments": "{}"}}
            message["tool_calls"] = [call]
        conversation.append(message)
    return conversation


async def answer(model: ScriptedModel, conversation: list[dict[str, Any]], tools: list) -> Any:
    """Stream one reply to the end; the assembled response."""
    done = None
    async for part in model.stream(conversation, tools, ModelSettings()):
        if isinstance(part, ResponseDone):
            done = part.response
    assert done is not None
    return done


@FUZZ
@given(data=st.data())
def test_scripted_rules_damaged_then_run(tmp_path: Path, data: st.DataObject) -> None:
    path = tmp_path / "scripted.yml"
    if data.draw(st.booleans()):
        path.write_bytes(data.draw(mutated_bytes(RULE_TEXTS)))
    else:
        seeds = [yaml.safe_load(t) for t in RULE_TEXTS]
        path.write_text(as_yaml(data.draw(mutated_data(seeds))), encoding="utf-8")
    model = only_own_errors(lambda: ScriptedModel.from_file(path))
    if model is None:
        return
    model.delay = model.chunk_delay = 0.0
    for rule in model._rules:  # a fuzzed rule may ask for long pauses
        rule.delay = rule.chunk_delay = 0.0
    for _ in range(2):
        conversation = data.draw(messages())
        tools = data.draw(st.lists(st.sampled_from(TOOLS), max_size=3, unique_by=id))
        only_own_errors(lambda c=conversation, t=tools: asyncio.run(answer(model, c, t)))


@functools.cache
def bundled_models() -> list[ScriptedModel]:
    """The repository's rule files as models (compiled once), answering without pauses."""
    models = []
    for text in RULE_TEXTS:
        model = ScriptedModel(yaml.safe_load(text)["rules"], source="scripted.yml")
        for rule in model._rules:
            rule.delay = rule.chunk_delay = 0.0
        models.append(model)
    return models


@FUZZ
@given(conversation=messages())
def test_the_bundled_rules_answer_any_conversation(conversation: list[dict[str, Any]]) -> None:
    async def every_model() -> None:
        for model in bundled_models():
            try:
                response = await answer(model, conversation, TOOLS)
            except AgentCliError:
                continue
            assert isinstance(response.content, str)

    asyncio.run(every_model())

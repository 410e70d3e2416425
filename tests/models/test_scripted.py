"""The scripted rule model: every condition and action, streaming, sandboxing, bad files."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from agentcli.errors import PackageError, ProviderError
from agentcli.models.base import (
    ModelSettings,
    ResponseDone,
    TextDelta,
    ToolCallDelta,
    collect,
)
from agentcli.models.offline import ScriptedModel as ReExported
from agentcli.models.scripted import ScriptedModel

DATA = Path(__file__).parent / "data" / "scripted.yml"
TOOLS = [
    {"type": "function", "function": {"name": "expenses__submit_expense", "parameters": {}}},
    {"type": "function", "function": {"name": "weather__get_weather", "parameters": {}}},
]


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant_calls(*calls: tuple[str, str]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": "{}"}}
            for cid, name in calls
        ],
    }


def tool(call_id: str, content: Any, name: str | None = None) -> dict[str, Any]:
    message = {"role": "tool", "tool_call_id": call_id, "content": content}
    if name:
        message["name"] = name
    return message


def rules_file(tmp_path: Path, text: str, name: str = "scripted.yml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def inline(*rules: dict[str, Any], **top: Any) -> ScriptedModel:
    return ScriptedModel(list(rules), source="rules.yml", **top)


async def parts_of(model: Any, messages: list[dict[str, Any]], tools: list[dict] | None = None):
    return [p async for p in model.stream(messages, tools or [], ModelSettings())]


@pytest.fixture
def model() -> ScriptedModel:
    return ScriptedModel.from_file(DATA)


def test_offline_module_re_exports_the_scripted_model():
    assert ReExported is ScriptedModel


async def test_user_regex_with_groups_named_groups_and_templating(model):
    reply = await collect(model, [user("Please submit lunch for $42 today")], TOOLS)
    assert reply.content == "Submitting lunch for $42."
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [
        ("expenses__submit_expense", {"amount": 42, "note": "submit lunch for $42"})
    ]
    assert reply.finish_reason == "tool_calls"
    assert model.name == "expenses" and reply.model == "expenses"
    assert reply.provider == "offline" and reply.usage.provider == "offline"


async def test_user_rule_does_not_fire_again_on_its_tool_result(model):
    messages = [
        user("submit taxi for $9"),
        assistant_calls(("call_1", "expenses__submit_expense")),
        tool("call_1", json.dumps({"id": "E-7", "status": "ok"})),
    ]
    reply = await collect(model, messages, TOOLS)
    assert reply.content == "Submitted: E-7 (ok)"
    assert reply.tool_calls == []


async def test_tool_result_matched_by_message_name_with_bare_or_full_name(model):
    by_name = [user("x"), tool("zzz", '{"id": 1, "status": "queued"}', name="submit_expense")]
    assert (await collect(model, by_name)).content == "Submitted: 1 (queued)"
    full = [user("x"), tool("zzz", '{"id": 2, "status": "done"}', name="srv__submit_expense")]
    assert (await collect(model, full)).content == "Submitted: 2 (done)"


async def test_tool_result_that_is_not_json_is_the_raw_text(model):
    messages = [
        user("weather in Paris"),
        assistant_calls(("call_1", "weather__get_weather")),
        tool("call_1", [{"type": "text", "text": "sunny"}]),
    ]
    assert (await collect(model, messages, TOOLS)).content == "It is sunny there."


async def test_tool_result_given_as_an_object(model):
    messages = [user("x"), tool("c", {"id": "E-9", "status": "new"}, name="submit_expense")]
    assert (await collect(model, messages)).content == "Submitted: E-9 (new)"


async def test_tool_result_rule_needs_the_last_message_to_be_that_result(model):
    messages = [
        user("submit taxi for $9"),
        assistant_calls(("call_1", "expenses__submit_expense")),
        tool("call_1", '{"id": "E-7"}'),
        {"role": "assistant", "content": "Submitted: E-7"},
        user("what now?"),
    ]
    assert (await collect(model, messages, TOOLS)).content == "Sorry, I can't help with that."


async def test_parallel_results_pick_the_result_of_the_named_tool():
    model = inline(
        {"when": {"tool_result": "b"}, "say": "b said {{ result.v }}"},
        {"say": "last result {{ result }}"},
    )
    messages = [
        user("go"),
        assistant_calls(("c1", "s__a"), ("c2", "s__b")),
        tool("c1", '{"v": 1}'),
        tool("c2", '{"v": 2}'),
    ]
    assert (await collect(model, messages)).content == "b said 2"
    messages[-1] = tool("c2", "plain")
    messages[-1]["name"] = "s__c"
    assert (await collect(model, messages)).content == "last result plain"


async def test_turn_counts_user_messages(model):
    history = [user("one"), {"role": "assistant", "content": "a"}, user("two")]
    history += [{"role": "assistant", "content": "b"}, user("three")]
    assert (await collect(model, history)).content == "Third turn."
    assert (await collect(model, history[:3])).content == "Sorry, I can't help with that."


async def test_combined_conditions_must_all_hold(model):
    first = [user("give me json")]
    second = [user("hi"), {"role": "assistant", "content": "Hello!"}, user("json please")]
    assert (await collect(model, first, TOOLS)).content == '{"verdict": "fail"}'
    reply = await collect(model, second, TOOLS)
    assert json.loads(reply.content) == {
        "verdict": "pass",
        "turn": 2,
        "asked": "json please",
        "tools": ["expenses__submit_expense", "weather__get_weather"],
    }


async def test_say_list_is_cycled_per_rule(model):
    replies = [(await collect(model, [user(f"nothing {i}")])).content for i in range(3)]
    assert replies == [
        "Sorry, I can't help with that.",
        "Still no idea, sorry.",
        "Sorry, I can't help with that.",
    ]
    # the json rule keeps its own counter: a dict reply, then a JSON array
    assert (await collect(model, [user("json")])).content == '{"verdict": "fail"}'
    assert json.loads((await collect(model, [user("json")])).content) == [1, 2]


async def test_counters_belong_to_the_model_instance():
    first, second = ScriptedModel.from_file(DATA), ScriptedModel.from_file(DATA)
    await collect(first, [user("zzz")])
    assert (await collect(first, [user("zzz")])).content == "Still no idea, sorry."
    assert (await collect(second, [user("zzz")])).content == "Sorry, I can't help with that."


async def test_multiple_calls_with_bare_names_resolved_and_unique_ids(model):
    reply = await collect(model, [user("weather in Paris and Rome")], TOOLS)
    assert reply.content == ""
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [
        ("call_1", "weather__get_weather", {"city": "Paris"}),
        ("call_2", "weather__get_weather", {"city": "Rome"}),
    ]
    later = [
        user("submit a for $1"),
        assistant_calls(("call_1", "expenses__submit_expense")),
        tool("call_1", "{}"),
        {"role": "assistant", "content": "ok"},
        user("weather in Oslo and Bergen"),
    ]
    ids = [c.id for c in (await collect(model, later, TOOLS)).tool_calls]
    assert ids == ["call_2", "call_3"]


async def test_call_name_without_matching_tool_is_kept(model):
    reply = await collect(model, [user("weather in A and B")], [])
    assert [c.name for c in reply.tool_calls] == ["get_weather", "get_weather"]
    exact = [{"type": "function", "function": {"name": "get_weather"}}, *TOOLS]
    reply = await collect(model, [user("weather in A and B")], exact)
    assert [c.name for c in reply.tool_calls] == ["get_weather", "get_weather"]


async def test_reply_streams_in_several_chunks_that_add_up(model):
    parts = await parts_of(model, [user("Please submit lunch for $42 today")], TOOLS)
    texts = [p.text for p in parts if isinstance(p, TextDelta)]
    calls = [p for p in parts if isinstance(p, ToolCallDelta)]
    assert len(texts) >= 2
    done = parts[-1]
    assert isinstance(done, ResponseDone)
    assert "".join(texts) == done.response.content == "Submitting lunch for $42."
    assert [(c.index, c.id, c.name) for c in calls] == [(0, "call_1", "expenses__submit_expense")]
    assert json.loads(calls[0].arguments) == {"amount": 42, "note": "submit lunch for $42"}
    assert sum(isinstance(p, ResponseDone) for p in parts) == 1


async def test_whitespace_is_preserved_across_chunks():
    text = "  one two\n\nthree   four five six\tseven  "
    parts = await parts_of(inline({"say": text}), [user("x")])
    texts = [p.text for p in parts if isinstance(p, TextDelta)]
    assert len(texts) == 3 and "".join(texts) == text


async def test_usage_counts_words():
    reply = await collect(inline({"say": "three words here"}), [user("a b"), user("c")])
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (3, 3)


async def test_no_rule_matched_reply_names_the_file():
    model = inline({"when": {"user": "^hello$"}, "say": "hi"})
    assert (
        await collect(model, [user("bye")])
    ).content == '[scripted] no rule in rules.yml matched "bye"'
    assert (await collect(model, [])).content == "[scripted] no rule in rules.yml matched"


async def test_user_text_is_data_not_a_template():
    model = inline({"say": "You said: {{ user }}"})
    reply = await collect(model, [user("{{ 7 * 7 }} {% for x in range(3) %}")])
    assert reply.content == "You said: {{ 7 * 7 }} {% for x in range(3) %}"


@pytest.mark.parametrize(
    "template",
    [
        "{{ ''.__class__.__mro__ }}",
        "{{ cycler.__init__.__globals__ }}",
        "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    ],
)
async def test_template_injection_raises_a_clear_error(template):
    model = inline({"say": f"x {template}"})
    with pytest.raises(ProviderError) as caught:
        await collect(model, [user("go")])
    assert str(caught.value).startswith(
        "rules.yml: rules[0].say: template error: access to attribute"
    )
    assert "is unsafe" in str(caught.value)
    assert caught.value.retryable is False


async def test_unsafe_attribute_alone_renders_inert():
    model = inline({"say": "[{{ ''.__class__ }}][{{ match._groups }}]"})
    assert (await collect(model, [user("go")])).content == "[][]"


async def test_unsafe_expression_in_call_arguments_raises():
    model = inline({"call": {"name": "t", "arguments": {"x": "{{ ''.__class__.__base__ }}"}}})
    with pytest.raises(ProviderError, match=r"rules\[0\]\.call: template error: .*unsafe"):
        await collect(model, [user("go")])


async def test_native_expressions_keep_their_type_and_text_templates_render_strings():
    model = inline(
        {
            "when": {"user": "(\\d+)"},
            "say": "{{ match[1] | int + 1 }}",
            "call": {
                "name": "t",
                "arguments": {
                    "n": "{{ match[1] | int }}",
                    "s": "{{ match[1] }}",
                    "mixed": "n={{ match[1] }}",
                    "missing": "{{ result.nothing }}",
                    "match": "{{ match }}",
                    "list": ["{{ turn }}", 7, True, None],
                },
            },
        }
    )
    reply = await collect(model, [user("take 41")])
    assert reply.content == "42"
    assert reply.tool_calls[0].arguments == {
        "n": 41,
        "s": "41",
        "mixed": "n=41",
        "missing": None,
        "match": "41",
        "list": [1, 7, True, None],
    }


async def test_missing_groups_render_empty():
    model = inline(
        {"when": {"user": "a(b)?(?P<c>c)?"}, "say": "[{{ match[1] }}|{{ match.c }}|{{ match[9] }}]"}
    )
    assert (await collect(model, [user("a")])).content == "[||]"


async def test_chunk_delay_and_delay_slow_the_stream():
    model = inline({"say": "a b c d e f g h i"}, chunk_delay=0.05)
    started = time.monotonic()
    await collect(model, [user("x")])
    assert time.monotonic() - started >= 0.1  # three chunks, two pauses
    fast = inline({"say": "a b c d e f g h i", "chunk_delay": 0}, chunk_delay=5)
    started = time.monotonic()
    await collect(fast, [user("x")])
    assert time.monotonic() - started < 1


async def test_delayed_stream_can_be_cancelled():
    model = inline({"say": "never", "delay": 30})
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(collect(model, [user("x")]), timeout=0.1)
    assert time.monotonic() - started < 5


async def test_top_level_delay_and_rule_without_when_from_file(tmp_path):
    path = rules_file(
        tmp_path,
        """\
        delay: 0.05
        rules:
          - say: done
        """,
    )
    started = time.monotonic()
    assert (await collect(ScriptedModel.from_file(path), [user("x")])).content == "done"
    assert time.monotonic() - started >= 0.05


def test_plain_rules_never_import_jinja(tmp_path):
    path = rules_file(tmp_path, "rules:\n  - when: {user: hi}\n    say: plain hello\n")
    code = textwrap.dedent(
        f"""
        import asyncio, sys
        from agentcli.models.base import collect
        from agentcli.models.scripted import ScriptedModel
        model = ScriptedModel.from_file({str(path)!r})
        reply = asyncio.run(collect(model, [{{"role": "user", "content": "hi"}}]))
        assert reply.content == "plain hello", reply
        print("jinja2" in sys.modules)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# -- malformed rule files ---------------------------------------------------------------


BAD_FILES = [
    (
        "rules:\n  - say: [unclosed\n",
        "{path}:3:1: invalid YAML: expected ',' or ']', but got '<stream end>'",
    ),
    ("- say: hi\n", "{path}:1: must be a mapping with a `rules` list"),
    ("rules: {say: hi}\n", "{path}:1: rules: `rules` must be a list of rules"),
    ("rule:\n  - say: hi\n", "{path}:1: rule: unknown key (did you mean 'rules'?)"),
    (
        "rules:\n  - say: ok\n  - when: {users: hi}\n    say: x\n",
        "{path}:3: rules[1].when.users: unknown condition (did you mean 'user'?); "
        "use one of user, tool_result, turn",
    ),
    (
        "rules:\n  - say: ok\n  - say: ok\n  - when:\n      user: '(unclosed'\n    say: x\n",
        "{path}:5: rules[2].when.user: invalid regex '(unclosed': "
        "missing ), unterminated subpattern at position 0",
    ),
    ("rules:\n  - when: {user: hi}\n", "{path}:2: rules[0]: a rule needs `say` or `call`"),
    (
        "rules:\n  - say: 'Hi {{ user'\n",
        "{path}:2: rules[0].say: template error: unexpected end of template, "
        "expected 'end of print statement'.",
    ),
    (
        "rules:\n  - call: {name: t, arguments: {a: '{% if %}'}}\n",
        "{path}:2: rules[0].call.arguments.a: template error: Expected an expression, got 'end of statement block'",
    ),
    (
        "rules:\n  - say: [a, {b: '{{ }}'}]\n",
        "{path}:2: rules[0].say[1].b: template error: unexpected 'end of template'",
    ),
    ("rules:\n  - says: hi\n", "{path}:2: rules[0].says: unknown key (did you mean 'say'?)"),
    (
        "rules:\n  - when: {turn: 0}\n    say: x\n",
        "{path}:2: rules[0].when.turn: must be a whole number >= 1",
    ),
    (
        "rules:\n  - when: {user: 5}\n    say: x\n",
        "{path}:2: rules[0].when.user: must be a regular expression string",
    ),
    (
        "rules:\n  - when: [user]\n    say: x\n",
        "{path}:2: rules[0].when: must be a mapping of conditions",
    ),
    (
        "rules:\n  - call: {arguments: {}}\n",
        "{path}:2: rules[0].call.name: a call needs a tool `name`",
    ),
    ("rules:\n  - call: []\n", "{path}:2: rules[0].call: must not be an empty list"),
    (
        "rules:\n  - call: [{name: a, argument: {}}]\n",
        "{path}:2: rules[0].call[0].argument: unknown key (did you mean 'arguments'?)",
    ),
    (
        "rules:\n  - call: {name: a, arguments: [1]}\n",
        "{path}:2: rules[0].call.arguments: must be a mapping",
    ),
    ("rules:\n  - say: []\n", "{path}:2: rules[0].say: must not be an empty list"),
    (
        "rules:\n  - say: [ok, null]\n",
        "{path}:2: rules[0].say[1]: must be text, a mapping (a JSON reply) or a list of those",
    ),
    (
        "rules:\n  - hello\n",
        "{path}:2: rules[0]: a rule must be a mapping with `say` and/or `call`",
    ),
    (
        "rules:\n  - say: x\n    delay: -1\n",
        "{path}:3: rules[0].delay: must be a number of seconds >= 0",
    ),
    ("chunk_delay: soon\nrules: []\n", "{path}:1: chunk_delay: must be a number of seconds >= 0"),
    ("name: ''\nrules: []\n", "{path}:1: name: must be a non-empty string"),
    (
        "rules: !!python/object/apply:os.system ['echo pwned']\n",
        "{path}:1:8: invalid YAML: could not determine a constructor for the tag "
        "'tag:yaml.org,2002:python/object/apply:os.system'",
    ),
    ("a: 1\n---\nb: 2\n", "{path}:2:1: invalid YAML: but found another document"),
]


@pytest.mark.parametrize(("text", "expected"), BAD_FILES)
def test_malformed_rule_files(tmp_path, text, expected):
    path = rules_file(tmp_path, text)
    with pytest.raises(PackageError) as caught:
        ScriptedModel.from_file(path)
    assert str(caught.value) == expected.format(path=path)
    assert caught.value.path == str(path)


def test_missing_rule_file(tmp_path):
    with pytest.raises(PackageError, match=r"scripted\.yml: file not found$"):
        ScriptedModel.from_file(tmp_path / "scripted.yml")


def test_empty_rules_are_allowed(tmp_path):
    assert ScriptedModel.from_file(rules_file(tmp_path, "rules: []\n")).name == "scripted"


def test_inline_rules_are_validated_without_lines():
    with pytest.raises(PackageError) as caught:
        ScriptedModel([{"say": "ok"}, {"when": {"user": "["}, "say": "x"}], source="inline")
    assert str(caught.value) == (
        "inline: rules[1].when.user: invalid regex '[': unterminated character set at position 0"
    )

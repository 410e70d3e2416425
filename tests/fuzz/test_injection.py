"""Injection stays inert: YAML's ``!!python/*`` tags are refused by every YAML loader, and
known Jinja2 server-side template injection payloads run no code through scripted rules,
locales or prompt variables, whether they sit in the template or in the data."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from agentcli.assistant.locales import load_locales
from agentcli.assistant.package import load_package
from agentcli.assistant.prompts import load_presets, load_prompts, render_variables
from agentcli.errors import AgentCliError
from agentcli.eval.cases.load import load_cases
from agentcli.models.base import ModelSettings, ResponseDone
from agentcli.models.connectors import load_connectors_file
from agentcli.models.scripted import ScriptedModel

# --- YAML ------------------------------------------------------------------------------------

YAML_TAGS = [
    '!!python/object/apply:os.system ["touch {marker}"]',
    '!!python/object/new:os.system ["touch {marker}"]',
    '!!python/object/apply:subprocess.check_output [["touch", "{marker}"]]',
    "!!python/name:os.system",
    "!!python/module:os",
    '!!python/object:builtins.open {{"file": "{marker}"}}',
]


def yaml_files(value: str) -> dict[str, tuple[str, Any]]:
    """For each YAML loader: the file it reads (with ``value`` planted) and how to load it."""
    return {
        "case file": ("tests/cases.yaml", f"- id: x\n  input: {value}\n"),
        "prompts": ("pkg/prompts.yml", f"- role: system\n  content: {value}\n"),
        "preset": ("pkg/prompts/chat/friendly.yml", f"- role: system\n  content: {value}\n"),
        "locale": ("pkg/locales/en-us.yml", f"name: {value}\n"),
        "scripted rules": ("pkg/scripted.yml", f"rules:\n  - say: {value}\n"),
        "connectors": ("connectors.yml", f"loop:\n  model: {value}\n"),
    }


def load(kind: str, root: Path) -> Any:
    """Run the loader of ``kind`` on the files under ``root``."""
    package = load_package(root / "pkg", root=root)
    loaders = {
        "case file": lambda: load_cases(root / "tests/cases.yaml", project_root=root),
        "prompts": lambda: load_prompts(package),
        "preset": lambda: load_presets(package),
        "locale": lambda: load_locales(package),
        "scripted rules": lambda: ScriptedModel.from_file(root / "pkg/scripted.yml"),
        "connectors": lambda: load_connectors_file(root / "connectors.yml"),
    }
    return loaders[kind]()


@pytest.mark.parametrize("kind", sorted(yaml_files("x")))
@pytest.mark.parametrize("tag", YAML_TAGS, ids=[t.split()[0] for t in YAML_TAGS])
def test_yaml_python_tags_are_refused(tmp_path: Path, kind: str, tag: str) -> None:
    marker = tmp_path / "pwned"
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/package.yao").write_text('{"name": "P", "connector": "echo"}')
    name, text = yaml_files(tag.format(marker=marker))[kind]
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    with pytest.raises(AgentCliError) as caught:
        load(kind, tmp_path)
    message = str(caught.value)
    assert path.name in message, message
    assert "python/" in message or "constructor" in message, message
    assert not marker.exists()


# --- Jinja2 --------------------------------------------------------------------------------

SSTI = [
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ ''.__class__.__base__.__subclasses__()[0].__init__.__globals__['os'].system('CMD') }}",
    "{{ self.__init__.__globals__.__builtins__.__import__('os').system('CMD') }}",
    "{{ self._TemplateReference__context.cycler.__init__.__globals__.os.system('CMD') }}",
    "{{ cycler.__init__.__globals__.os.popen('CMD').read() }}",
    "{{ joiner.__init__.__globals__.os.popen('CMD').read() }}",
    "{{ namespace.__init__.__globals__.os.popen('CMD').read() }}",
    "{{ lipsum.__globals__['os'].popen('CMD').read() }}",
    "{{ lipsum.__globals__.__builtins__.open('MARKER', 'w').write('x') }}",
    "{{ config.__class__.__init__.__globals__['os'].popen('CMD').read() }}",
    "{{ request.application.__globals__.__builtins__.__import__('os').popen('CMD').read() }}",
    "{{ url_for.__globals__.os.popen('CMD').read() }}",
    "{% for c in [].__class__.__base__.__subclasses__() %}{% if c.__name__ == 'catch_warnings' %}"
    "{{ c()._module.__builtins__['__import__']('os').system('CMD') }}{% endif %}{% endfor %}",
    "{{ ''|attr('__class__')|attr('__mro__') }}",
    "{{ ()|attr('\\x5f\\x5fclass\\x5f\\x5f')|attr('\\x5f\\x5fbase\\x5f\\x5f')"
    "|attr('\\x5f\\x5fsubclasses\\x5f\\x5f')() }}",
    "{{ ''.format.__globals__ }}",
    "{{ ('CMD').__class__.__mro__[-1].__subclasses__() }}",
    "{% set x = cycler.__init__.__globals__ %}{{ x.os.system('CMD') }}",
    "{{ match.__init__.__globals__['__builtins__']['open']('MARKER', 'w').write('x') }}",
    "{{ result.__class__.__mro__[-1].__subclasses__() }}",
    "{{ messages.__class__.__init__.__globals__ }}",
    "{{ tools.__class__.__base__.__subclasses__() }}",
]
# What a payload shows when it got through to Python objects (their reprs).
INTERNALS = ("<class", "<built-in", "<function", "<module", "<bound method", "<frozen")


def payloads(marker: Path) -> list[str]:
    """The corpus, each payload aimed at creating ``marker``."""
    return [p.replace("CMD", f"touch {marker}").replace("MARKER", str(marker)) for p in SSTI]


async def reply(model: ScriptedModel, conversation: list[dict[str, Any]]) -> Any:
    """One full reply of ``model``."""
    async for part in model.stream(conversation, [], ModelSettings()):
        if isinstance(part, ResponseDone):
            return part.response
    raise AssertionError("no response")


def inert(outcome: Any, marker: Path) -> None:
    """No file was created and nothing from Python's internals was rendered."""
    assert not marker.exists(), "the payload ran code"
    text = json.dumps(outcome, default=str) if not isinstance(outcome, str) else outcome
    assert not any(word in text for word in INTERNALS), text


@pytest.mark.parametrize("index", range(len(SSTI)))
def test_ssti_in_a_rule_template_is_refused_by_the_sandbox(tmp_path: Path, index: int) -> None:
    marker = tmp_path / "pwned"
    payload = payloads(marker)[index]
    rules = [
        {"when": {"user": "say"}, "say": payload},
        {"when": {"user": "call"}, "call": {"name": "add", "arguments": {"a": payload}}},
    ]
    model = ScriptedModel(rules, source="scripted.yml")  # a payload may be a syntax error too
    for text in ("say", "call"):
        try:
            response = asyncio.run(reply(model, [{"role": "user", "content": text}]))
        except AgentCliError as error:
            assert "template error" in str(error)
            inert(str(error), marker)
        else:
            inert([response.content, [c.arguments for c in response.tool_calls]], marker)


def test_ssti_as_user_input_or_tool_result_is_data_not_a_template(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    model = ScriptedModel(
        [
            {"when": {"tool_result": "add"}, "say": "result: {{ result }}"},
            {"when": {"user": "^call (.*)$"}, "call": {"name": "add", "arguments": {"a": "{{ match[1] }}"}}},
            {"when": {"user": "(?s)(.*)"}, "say": "you said {{ user }} / {{ match[1] }}"},
        ],
        source="scripted.yml",
    )  # fmt: skip
    for payload in payloads(marker):
        said = asyncio.run(reply(model, [{"role": "user", "content": payload}]))
        assert said.content == f"you said {payload} / {payload}"
        called = asyncio.run(reply(model, [{"role": "user", "content": f"call {payload}"}]))
        assert called.tool_calls[0].arguments == {"a": payload}
        conversation = [
            {"role": "user", "content": "call x"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{}"}}
            ]},
            {"role": "tool", "tool_call_id": "c1", "name": "add", "content": payload},
        ]  # fmt: skip
        answered = asyncio.run(reply(model, conversation))
        assert answered.content == f"result: {payload}"
    assert not marker.exists()


def test_ssti_through_locales_and_prompt_variables(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    corpus = payloads(marker)
    (tmp_path / "pkg/locales").mkdir(parents=True)
    (tmp_path / "pkg/package.yao").write_text('{"name": "{{ name }}", "connector": "echo"}')
    (tmp_path / "pkg/locales/en-us.yml").write_text(
        "".join(f"k{i}: {json.dumps(p)}\n" for i, p in enumerate(corpus))
    )
    locales = load_locales(load_package(tmp_path / "pkg", root=tmp_path))
    for i, payload in enumerate(corpus):
        # In a value: inserted as text, never rendered again.
        assert locales.render(f"{{{{ k{i} }}}}", "en-us") == payload
        # As the template itself: only {{ key }} placeholders are allowed.
        try:
            rendered = locales.render(payload, "en-us", key="name")
        except AgentCliError as error:
            inert(str(error), marker)
        else:
            inert(rendered, marker)
        # $CTX values in prompts are substituted once, as text.
        prompt = render_variables("Hi $CTX.name", ctx_vars={"name": payload}, env={})
        assert prompt == f"Hi {payload}"
    assert not marker.exists()

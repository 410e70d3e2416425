"""Locale files, lookup fallback, sandboxed {{ key }} templating and package localization."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.assistant.locales import (
    Locales,
    flatten,
    load_locales,
    localize_package,
    normalize_locale,
)
from agentcli.assistant.package import AssistantPackage, load_package
from agentcli.errors import PackageError

EN_US = """
name: My Assistant
description: Helps
chat:
  title: New Chat
  prompts:
    - What can you do?
    - Help me with a task
flags:
  enabled: true
  count: 3
  nothing:
"""
ZH_CN = """
name: 我的助手
chat:
  title: 新对话
"""


def make(tmp_path: Path, data: dict, locales: dict[str, str]) -> AssistantPackage:
    folder = tmp_path / "assistants" / "bot"
    (folder / "locales").mkdir(parents=True)
    (folder / "package.yao").write_text(json.dumps(data), encoding="utf-8")
    for name, text in locales.items():
        (folder / "locales" / name).write_text(text, encoding="utf-8")
    return load_package(folder)


@pytest.fixture
def package(tmp_path: Path) -> AssistantPackage:
    data = {
        "name": "{{ name }}",
        "description": "{{ description }}",
        "placeholder": {
            "title": "{{ chat.title }}",
            "description": "static",
            "prompts": ["{{ chat.prompts.0 }}", "{{ chat.prompts.1 }}"],
        },
    }
    return make(tmp_path, data, {"en-us.yml": EN_US, "zh-CN.yml": ZH_CN, "README.md": "x"})


def test_flatten() -> None:
    assert flatten({"a": {"b": [1, {"c": None}], "d": False}}) == {
        "a.b.0": "1",
        "a.b.1.c": "",
        "a.d": "false",
    }


@pytest.mark.parametrize(
    ("code", "expected"), [("zh_CN", "zh-cn"), (" EN-us ", "en-us"), ("ja", "ja")]
)
def test_normalize_locale(code: str, expected: str) -> None:
    assert normalize_locale(code) == expected


def test_load_locales(package: AssistantPackage) -> None:
    locales = load_locales(package)
    assert set(locales.messages) == {"en-us", "en", "zh-cn", "zh"}
    assert locales.messages["en-us"]["chat.prompts.1"] == "Help me with a task"
    assert locales.messages["en-us"]["flags.enabled"] == "true"
    assert locales.messages["en-us"]["flags.count"] == "3"
    assert locales.messages["zh"]["name"] == "我的助手"


def test_lookup_fallback_order() -> None:
    locales = Locales(
        messages={
            "zh-cn": {"k": "exact"},
            "zh": {"k": "language", "only_zh": "zh"},
            "en-us": {"k": "en-us", "only_en_us": "en-us"},
            "en": {"k": "en", "only_en": "en"},
        }
    )
    assert locales.lookup("k", "zh-CN") == "exact"
    assert locales.lookup("k", "zh-tw") == "language"
    assert locales.lookup("only_zh", "zh-cn") == "zh"
    assert locales.lookup("only_en_us", "zh-cn") == "en-us"
    assert locales.lookup("only_en", "zh-cn") == "en"
    assert locales.lookup("missing.key", "zh-cn") == "missing.key"
    assert locales.lookup("k", None) == "en-us"
    assert locales.chain("fr_FR") == ["en-us", "en"]


def test_regional_file_serves_its_language(package: AssistantPackage) -> None:
    locales = load_locales(package)
    assert locales.lookup("chat.title", "zh-tw") == "新对话"
    assert locales.lookup("chat.prompts.0", "zh-cn") == "What can you do?"


def test_render_placeholders(package: AssistantPackage) -> None:
    locales = load_locales(package)
    text = "{{ name }}: {{chat.title}} / {{ chat.prompts.1 }} / {{ chat['title'] }} / {{ no.such }}"
    assert (
        locales.render(text, "zh_CN") == "我的助手: 新对话 / Help me with a task / 新对话 / no.such"
    )
    assert locales.render("{{ chat.prompts[0] }}", "en") == "What can you do?"


def test_render_plain_text_untouched() -> None:
    locales = Locales()
    text = 'JSON {"a": 1} and {% not a tag and {# not a comment'
    assert locales.render(text, "en") is text


def test_render_keeps_surrounding_text_and_newlines() -> None:
    locales = Locales(messages={"en": {"a": "A"}})
    assert locales.render("x {{ a }}\ny {# note #}\n", "en") == "x A\ny \n"


@pytest.mark.parametrize(
    "template",
    [
        "{{ ''.__class__.__mro__[1].__subclasses__() }}",
        "{{ self.__init__.__globals__ }}",
        "{{ self }}",
        "{{ name.__class__ }}",
        "{{ name._private }}",
        "{{ cycler.__init__.__globals__.os.popen('id').read() }}",
        "{{ lipsum.__globals__['os'] }}",
        "{{ range(10**9)|list }}",
        "{{ name|upper }}",
        "{{ 'a' * 100000000 }}",
        "{{ name ~ name }}",
        "{{ config }}{{ name() }}",
        "{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}{{ name }}",
        "{% set x = 1 %}{{ name }}",
        "{% macro m() %}{% endmacro %}{{ name }}",
        "{{ name",
    ],
)
def test_injection_attempts_are_rejected(template: str) -> None:
    locales = Locales(messages={"en": {"name": "N"}}, source=Path("/pkg/package.yao"))
    with pytest.raises(PackageError) as info:
        locales.render(template, "en", key="description")
    assert info.value.path == "/pkg/package.yao"
    assert "invalid template in 'description'" in str(info.value)


def test_unknown_global_names_are_just_keys() -> None:
    # Names Jinja would resolve to its globals are treated as locale keys instead.
    assert Locales().render("{{ lipsum }} {{ range }} {{ cycler }}", "en") == "lipsum range cycler"


def test_block_tags_without_placeholder_stay_inert() -> None:
    text = "{% for i in range(10) %}x{% endfor %}"
    assert Locales().render(text, "en") == text


def test_localize_package(package: AssistantPackage) -> None:
    localized = localize_package(package, "zh-cn")
    assert localized.name == "我的助手"
    assert localized.description == "Helps"
    assert localized.placeholder == {
        "title": "新对话",
        "description": "static",
        "prompts": ["What can you do?", "Help me with a task"],
    }
    assert package.name == "{{ name }}"
    assert localize_package(package, "en-us").placeholder["title"] == "New Chat"


def test_localize_without_templates_returns_same_package(tmp_path: Path) -> None:
    package = make(tmp_path, {"name": "Plain"}, {})
    assert localize_package(package, "en") is package


def test_localize_without_locale_files_uses_keys(tmp_path: Path) -> None:
    package = make(tmp_path, {"name": "{{ name }}"}, {})
    assert localize_package(package, "en").name == "name"


def test_localize_error_names_file_and_field(tmp_path: Path) -> None:
    package = make(
        tmp_path, {"name": "ok", "placeholder": {"prompts": ["{{ a }}", "{{ a|e }}"]}}, {}
    )
    with pytest.raises(PackageError) as info:
        localize_package(package, "en")
    assert info.value.path == str(package.file)
    assert "'placeholder.prompts.1'" in str(info.value)


def test_locale_file_must_be_a_mapping(tmp_path: Path) -> None:
    package = make(tmp_path, {"name": "x"}, {"en.yml": "- a\n- b\n"})
    with pytest.raises(PackageError, match="must be a YAML mapping") as info:
        load_locales(package)
    assert info.value.path == str(package.path / "locales" / "en.yml")


def test_rendered_output_is_bounded_by_the_shared_sandbox() -> None:
    # Values are not templates, but a text may repeat a big one: the output stops at 16 MB.
    locales = Locales(messages={"en": {"big": "x" * 9_000_000}}, source=Path("/pkg/package.yao"))
    assert len(locales.render("{{ big }}", "en")) == 9_000_000
    with pytest.raises(PackageError) as info:
        locales.render("{{ big }} {{ big }}", "en", key="description")
    assert "in 'description'" in str(info.value)
    assert "over the template limit of 16,000,000" in str(info.value)

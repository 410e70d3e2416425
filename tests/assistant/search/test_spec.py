"""package.yao's kb, db, search and uses: read into one SearchConfig, and every mistake a
PackageError at file:line saying what to write."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.assistant.package import load_package
from agentcli.errors import PackageError
from tests.assistant.test_context import write


def _load(tmp_path: Path, text: str):
    return load_package(write(tmp_path / "bot", {"package.yao": text}))


def test_the_sections_are_read_into_one_config(tmp_path: Path) -> None:
    package = _load(
        tmp_path,
        '{"name": "B", "kb": ["faq"], "db": ["ticket"], "search": {"web": {"provider": '
        '"searxng", "base_url": "http://127.0.0.1:8888", "timeout": "3s"}, "kb": {"threshold":'
        ' 0.4, "max_results": 2}, "citation": {"format": "<{index}>"}}, "uses": {"fetch": '
        '"mcp:fetcher", "vision": "v"}}',
    )
    config = package.search_config
    assert config is not None and config.sources == ("web", "kb", "db")
    assert config.kb.collections == ("faq",) and config.kb.threshold == 0.4
    assert config.kb.max_results == 2 and config.db_models == ("ticket",)
    assert config.web is not None and config.web.timeout == 3.0
    assert config.citation.marker(3) == "<3>" and config.fetch_server == "fetcher"
    assert _load(tmp_path, '{"name": "B"}').search_config is None


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        (
            '{"name": "B",\n "search": {"web": {\n  "provider": "bing"}}}',
            3,
            "field 'search.web.provider' must be one of tavily, brave, searxng, got \"bing\"",
        ),
        (
            '{"name": "B",\n "search": {"kb": {"threshold": 2}}}',
            2,
            "field 'search.kb.threshold' must be at most 1, got 2",
        ),
        (
            '{"name": "B",\n "search": {"web": {"provider": "searxng"}}}',
            None,
            "field 'search.web.base_url' is needed for searxng",
        ),
        (
            '{"name": "B",\n "search": {"citation": {\n  "format": "[n]"}}}',
            3,
            "field 'search.citation.format' must hold {index}",
        ),
        (
            '{"name": "B",\n "uses": {\n  "search": "search-agent"}}',
            3,
            "field 'uses.search' must be \"builtin\" or \"disabled\", got 'search-agent'",
        ),
        (
            '{"name": "B",\n "uses": {"fetch": "mcp:"}}',
            2,
            "field 'uses.fetch' names no server",
        ),
        (
            '{"name": "B",\n "kb": {"collections": "faq"}}',
            2,
            "field 'kb.collections' must be an array of strings, got a string",
        ),
    ],
)
def test_mistakes_name_the_file_line_and_field(
    tmp_path: Path, text: str, line: int | None, message: str
) -> None:
    with pytest.raises(PackageError) as info:
        _load(tmp_path, text)
    error = info.value
    where = f"{tmp_path / 'bot' / 'package.yao'}" + (f":{line}" if line else "")
    assert error.message.startswith(f"{where}: {message}"), error.message

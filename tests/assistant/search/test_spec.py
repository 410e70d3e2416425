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
            2,  # the line of search.web, the object that lacks it
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


@pytest.mark.parametrize(
    ("text", "line", "message", "hint"),
    [
        (
            '{"name": "B",\n "search": {\n  "webb": {"provider": "tavily"}}}',
            3,
            "unknown field 'search.webb' (did you mean 'web'?)",
            "the fields of search: web, kb, db, citation, keyword, querydsl, rerank, weights, "
            "options",
        ),
        (
            '{"name": "B",\n "search": {"web": {"provider": "tavily",\n  "max_result": 3}}}',
            3,
            "unknown field 'search.web.max_result' (did you mean 'max_results'?)",
            "the fields of search.web: provider, max_results, base_url, api_key_env, timeout, "
            "engine",
        ),
        (
            '{"name": "B",\n "search": {\n  "kb": {"treshold": 0.2}}}',
            3,
            "unknown field 'search.kb.treshold' (did you mean 'threshold'?)",
            "the fields of search.kb: collections, threshold, max_results, graph",
        ),
        (
            '{"name": "B",\n "search": {"db": {\n  "limit": 5}}}',
            3,
            "unknown field 'search.db.limit'",
            "the fields of search.db: max_results",
        ),
        (
            '{"name": "B",\n "search": {"citation": {\n  "auto_inject": false}}}',
            3,
            "unknown field 'search.citation.auto_inject' (did you mean 'auto_inject_prompt'?)",
            "the fields of search.citation: format, auto_inject_prompt, custom_prompt",
        ),
        # the top-level kb and db objects: a misspelt "colections" made kb search nothing
        (
            '{"name": "B",\n "kb": {\n  "colections": ["faq"]}}',
            3,
            "unknown field 'kb.colections' (did you mean 'collections'?)",
            "the fields of kb: collections, embedding, options",
        ),
        (
            '{"name": "B",\n "db": {"models": ["ticket"],\n  "max_results": 5}}',
            3,
            "unknown field 'db.max_results'",
            "the fields of db: models, options",
        ),
    ],
)
def test_an_unknown_key_of_search_kb_or_db_is_an_error_with_its_line_and_a_did_you_mean(
    tmp_path: Path, text: str, line: int, message: str, hint: str
) -> None:
    with pytest.raises(PackageError) as info:
        _load(tmp_path, text)
    assert info.value.message == f"{tmp_path / 'bot' / 'package.yao'}:{line}: {message}"
    assert info.value.hint == hint


def test_yao_s_kb_and_db_options_are_accepted(tmp_path: Path) -> None:
    # Yao's KnowledgeBase and Database carry a free-form "options"; kept and not used
    package = _load(
        tmp_path,
        '{"name": "B", "kb": {"collections": ["faq"], "options": {"top_k": 3}}, '
        '"db": {"models": ["ticket"], "options": {"limit": 9}}}',
    )
    config = package.search_config
    assert config is not None and config.kb.collections == ("faq",)
    assert config.db_models == ("ticket",)


def test_the_line_is_the_misspelt_key_s_own_when_its_name_is_in_the_file_twice(
    tmp_path: Path,
) -> None:
    # "max_result" is in web and in kb; kb's is wrong: the line is the one under kb, and a
    # commented-out copy above it does not count
    text = (
        '{"name": "B",\n'
        ' // "search": {"kb": {"max_result": 1}},\n'
        ' "search": {\n'
        '  "web": {"provider": "tavily", "max_results": 3},\n'
        '  "kb": {\n'
        '   "max_result": 2}}}'
    )
    with pytest.raises(PackageError) as info:
        _load(tmp_path, text)
    assert info.value.message == (
        f"{tmp_path / 'bot' / 'package.yao'}:6: unknown field 'search.kb.max_result' "
        "(did you mean 'max_results'?)"
    )


def test_the_first_unknown_key_in_the_file_is_reported_first(tmp_path: Path) -> None:
    text = (
        '{"name": "B", "search": {\n "web": {"provider": "tavily", "engin": "g"},\n "citaton": {}}}'
    )
    with pytest.raises(PackageError, match=r":2: unknown field 'search.web.engin'"):
        _load(tmp_path, text)


def test_yao_s_other_search_settings_are_accepted(tmp_path: Path) -> None:
    # Yao's search config also has these; they are kept and not used (docs/assistants.md)
    package = _load(
        tmp_path,
        '{"name": "B", "search": {"web": {"provider": "tavily", "engine": "google"}, '
        '"kb": {"graph": true}, "keyword": {"max_keywords": 5}, "querydsl": {"strict": true}, '
        '"rerank": {"top_n": 3}, "weights": {"auto": 0.5}, "options": {"skip_threshold": 2}}}',
    )
    assert package.search_config is not None
    assert package.search_config.web is not None
    assert package.search_config.web.provider == "tavily"


def test_search_kb_collections_is_used_when_kb_names_none(tmp_path: Path) -> None:
    # Yao's other place for the default collections: read, not silently dropped
    package = _load(tmp_path, '{"name": "B", "search": {"kb": {"collections": ["faq"]}}}')
    assert package.search_config is not None
    assert package.search_config.kb.collections == ("faq",)
    assert package.search_config.sources == ("kb",)
    package = _load(
        tmp_path, '{"name": "B", "kb": ["own"], "search": {"kb": {"collections": ["faq"]}}}'
    )
    assert package.search_config is not None
    assert package.search_config.kb.collections == ("own",)

"""The knowledge-base index: BM25 ranking, threshold and max_results, re-indexing when the
files change (and only then), JSON documents, and hybrid ranking with embeddings served
by the loopback OpenAI server."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agentcli.assistant.search.kb import KbIndex, fts_query, fuse, split_document
from tests.assistant.search.conftest import FAQ, package
from tests.assistant.test_context import write

NEXT = """
import json

def Next(ctx, payload):
    text = payload["messages"][-1]["content"]
    options = json.loads(text) if text.startswith("{") else {}
    query = options.pop("q", text)
    return {"data": ctx.search.KB(query, options).to_dict()}
"""


def _index(tmp_path: Path, files: dict[str, str]) -> tuple[KbIndex, dict[str, Path]]:
    folder = write(tmp_path / "docs", files)
    return KbIndex(tmp_path / "index.sqlite3", vectors=False), {"docs": folder}


def test_bm25_ranks_the_document_about_the_words_first(tmp_path: Path) -> None:
    index, folders = _index(
        tmp_path,
        {
            "a.md": "# Cats\n\nCats sleep all day. A cat purrs when a cat is happy.",
            "b.md": "# Dogs\n\nDogs bark. Some dogs chase a cat now and then.",
            "c.txt": "Nothing about pets here at all.",
            "d.txt": "Trains run on time.",
            "e.txt": "Bread needs flour and water.",
        },
    )
    assert index.refresh(folders) == (5, 0)
    hits = index.keyword("cat purrs", ["docs"], 10)
    assert [hit.path for hit in hits] == ["a.md", "b.md"]
    assert 0 < hits[1].score < hits[0].score < 1
    assert hits[0].title == "Cats"
    assert index.keyword("", ["docs"], 10) == [] and index.keyword("cat", [], 10) == []


def test_refresh_follows_changes_and_hashes_before_reindexing(tmp_path: Path) -> None:
    index, folders = _index(
        tmp_path,
        {"a.md": "apples are red", "b.md": "bananas are yellow", "z.md": "zucchini", "y.md": "y"},
    )
    assert index.refresh(folders) == (4, 0)
    assert index.refresh(folders) == (0, 0)  # nothing moved: not even hashed again
    a = folders["docs"] / "a.md"
    stat = a.stat()
    os.utime(a, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    assert index.refresh(folders) == (0, 0)  # touched, same bytes: the hash says unchanged
    a.write_text("apricots are orange")
    (folders["docs"] / "b.md").unlink()
    (folders["docs"] / "sub").mkdir()
    (folders["docs"] / "sub" / "c.md").write_text("cherries are red")
    (folders["docs"] / ".hidden.md").write_text("red secrets")
    (tmp_path / "outside.md").write_text("red outside")
    (folders["docs"] / "link.md").symlink_to(tmp_path / "outside.md")
    assert index.refresh(folders) == (2, 1)
    assert [h.path for h in index.keyword("red", ["docs"], 10)] == ["sub/c.md"]
    assert [h.path for h in index.keyword("apricots", ["docs"], 10)] == ["a.md"]
    assert index.keyword("apples bananas", ["docs"], 10) == []
    assert index.count() == 4


def test_documents_are_cut_at_headings_and_json_by_record() -> None:
    text = "# Guide\n\nIntro.\n\n## Install\n\nRun pip.\n\n## Use\n\n" + "word " * 400
    chunks = split_document("docs", "guide.md", text)
    assert [c.title for c in chunks] == ["Guide", "Guide — Install", "Guide — Use"]
    assert chunks[1].content == "## Install\n\nRun pip."
    records = split_document("docs", "plans.json", FAQ["kb/faq/plans.json"])
    assert [(c.title, c.content) for c in records] == [
        ("Free plan", "One project, community support."),
        ("Team plan", "Unlimited projects, password policies, SSO."),
    ]
    assert split_document("docs", "bad.json", "{not json")[0].content == "{not json"


def test_query_words_are_quoted_so_fts_syntax_is_plain_text() -> None:
    assert fts_query('NEAR(cats b) OR "x" -y*') == '"near" OR "cats" OR "b" OR "x" OR "y"'
    assert fts_query("how do I") == '"how" OR "do" OR "i"'  # stopwords only: kept
    assert fts_query("?!") is None


def test_reciprocal_rank_fusion_prefers_chunks_both_lists_rank_high() -> None:
    from agentcli.assistant.search.kb import Hit

    a, b, c = (Hit(i, "docs", f"{n}.md", n, n, 0.5) for i, n in enumerate("abc"))
    fused = fuse([[a, b], [b, c]], 10)
    assert [h.path for h in fused] == ["b.md", "a.md", "c.md"]
    assert fused[0].score == pytest.approx((1 / 62 + 1 / 61) / (2 / 61))
    assert fuse([[a], [a]], 10)[0].score == pytest.approx(1.0)


async def test_ctx_search_kb_honours_threshold_max_results_and_collections(
    assistants: Path, make_registry
) -> None:
    package(
        assistants,
        "help",
        '{"name": "H", "connector": "echo", "kb": {"collections": ["faq", "notes"]},'
        ' "uses": {"search": "disabled"}}',
        {**FAQ, "kb/notes/n.md": "A note on password managers.", "src/index.py": NEXT},
    )
    registry = make_registry()
    reply = await registry.get("help").respond("how do I reset my password")
    result = reply.next
    assert result["type"] == "kb" and result["source"] == "hook" and "error" not in result
    first = result["items"][0]
    assert first["url"] == "kb://faq/password.md" and first["title"] == "Resetting your password"
    assert first["document_id"] == "faq/password.md" and first["collection"] == "faq"
    assert first["citation_id"] == "1" and 0 < first["score"] < 1
    assert {i["collection"] for i in result["items"]} == {"faq", "notes"}
    assert [i["citation_id"] for i in result["items"]] == [
        str(n) for n in range(1, len(result["items"]) + 1)
    ]
    assert (registry.state.path / "kb" / "help.sqlite3").is_file()

    one = (await registry.get("help").respond('{"q": "password", "limit": 1}')).next
    assert len(one["items"]) == 1 and one["total"] >= 3
    only = (await registry.get("help").respond('{"q": "password", "collections": ["notes"]}')).next
    assert [i["url"] for i in only["items"]] == ["kb://notes/n.md"]
    strict = (await registry.get("help").respond('{"q": "password reset", "threshold": 0.99}')).next
    assert strict["items"] == [] and "error" not in strict
    scores = [i["score"] for i in result["items"]]
    assert scores == sorted(scores, reverse=True)
    between = (scores[0] + scores[1]) / 2
    loose = (
        await registry.get("help").respond(
            json.dumps({"q": "how do I reset my password", "threshold": between})
        )
    ).next
    assert [i["score"] for i in loose["items"]] == scores[:1]  # those at or above it

    missing = (await registry.get("help").respond('{"q": "x", "collections": ["nope"]}')).next
    assert missing["items"] == [] and "kb collection 'nope': no folder" in missing["error"]
    trace = [n for n in reply.trace if n["type"] == "search"]
    assert trace[0]["label"] == "Search kb" and trace[0]["input"]["query"].startswith("how do")
    assert trace[0]["output"]["items"][0]["url"] == "kb://faq/password.md"


async def test_hybrid_search_finds_by_meaning_what_bm25_cannot(
    assistants: Path, make_registry, openai_server, tmp_path: Path
) -> None:
    # The fake embeds "credentials" like "password": only the vectors can connect them.
    openai_server.synonyms = {"credentials": "password", "forgot": "reset"}
    (tmp_path / "connectors.yml").write_text(
        f"embedder: {{model: openai/embed-small, api_base: '{openai_server.base_url}', "
        "api_key: none}\n"
    )
    package(
        assistants,
        "help",
        '{"name": "H", "connector": "echo", "kb": {"collections": ["faq"], "embedding": '
        '"embedder"}, "uses": {"search": "disabled"}}',
        {**FAQ, "src/index.py": NEXT},
    )
    registry = make_registry()
    result = (await registry.get("help").respond("forgot credentials")).next
    assert "error" not in result, result
    assert result["items"][0]["url"] == "kb://faq/password.md"
    embedded = [r for r in openai_server.requests if r.path.endswith("/embeddings")]
    assert embedded[0].body["model"] == "embed-small"
    assert len(embedded[0].body["input"]) == 5  # every chunk once, then the query
    assert embedded[1].body["input"] == ["forgot credentials"]

    # BM25 and vectors agree on the password page: it is first in both lists.
    both = (await registry.get("help").respond("reset password")).next
    assert both["items"][0]["url"] == "kb://faq/password.md"
    assert both["items"][0]["score"] == pytest.approx(1.0)
    requests = len(openai_server.requests)
    await registry.get("help").respond("billing card")
    assert len(openai_server.requests) == requests + 1  # the query only: chunks are kept

    # A changed document is embedded again, alone.
    (assistants / "help" / "kb" / "faq" / "shipping.txt").write_text("Shipping is free now.")
    await registry.get("help").respond("shipping")
    added = [r.body["input"] for r in openai_server.requests[requests + 1 :]]
    assert added[0] == ["shipping\nShipping is free now."] and added[1] == ["shipping"]


async def test_an_embedder_that_fails_is_the_error_of_the_result(
    assistants: Path, make_registry, tmp_path: Path
) -> None:
    (tmp_path / "connectors.yml").write_text(
        "embedder: {model: openai/e, api_base: 'http://127.0.0.1:9/v1', api_key: none}\n"
    )
    package(
        assistants,
        "help",
        '{"name": "H", "connector": "echo", "kb": {"collections": ["faq"], "embedding": '
        '"embedder"}, "uses": {"search": "disabled"}}',
        {**FAQ, "src/index.py": NEXT},
    )
    result = (await make_registry().get("help").respond("password")).next
    assert result["items"] == []
    assert result["error"].startswith("embeddings (embedder): cannot reach http://127.0.0.1:9")


def test_files_are_looked_at_once_per_recheck_period(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentcli.assistant.search import kb

    monkeypatch.setattr(kb, "RECHECK_SECONDS", 60.0)
    index, folders = _index(tmp_path, {"a.md": "apples", "b.md": "bananas", "c.md": "cherries"})
    assert index.refresh(folders) == (3, 0)
    (folders["docs"] / "a.md").write_text("apricots")
    assert index.refresh(folders) == (0, 0)  # within the period: not looked at
    assert index.refresh(folders, force=True) == (1, 0)


async def test_embeddings_are_recorded_in_the_cassette_and_replayed_without_the_endpoint(
    assistants: Path, make_registry, openai_server, tmp_path: Path
) -> None:
    from agentcli.assistant.cassette import Cassette, use

    openai_server.synonyms = {"credentials": "password", "forgot": "reset"}
    connectors = tmp_path / "connectors.yml"
    connectors.write_text(
        f"embedder: {{model: openai/embed-small, api_base: '{openai_server.base_url}', "
        "api_key: sk-embed-123}\n"
    )
    package(
        assistants,
        "help",
        '{"name": "H", "connector": "echo", "kb": {"collections": ["faq"], "embedding": '
        '"embedder"}, "uses": {"search": "disabled"}}',
        {**FAQ, "src/index.py": NEXT},
    )
    path = tmp_path / "cassettes" / "c1.jsonl"
    recording = Cassette.open(path, "record", "c1", None)
    with use(recording):
        live = (await make_registry().get("help").respond("forgot credentials")).next
    recording.save()
    assert live["items"][0]["url"] == "kb://faq/password.md"
    assert "sk-embed-123" not in path.read_text()
    # The endpoint is gone (a port nothing listens on); a fresh state re-embeds every chunk,
    # and the cassette answers both requests.
    connectors.write_text(
        "embedder: {model: openai/embed-small, api_base: 'http://127.0.0.1:9/v1', api_key: x}\n"
    )
    with use(Cassette.open(path, "replay", "c1", None)):
        replayed = (await make_registry().get("help").respond("forgot credentials")).next
    assert replayed["items"] == live["items"] and "error" not in replayed

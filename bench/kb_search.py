"""Knowledge-base search over 10,000 documents: index time and query latency.

Run: .venv/bin/python bench/kb_search.py [--docs 10000] [--queries 300] [--no-vectors]
Writes ``--docs`` synthetic Markdown pages (a title and ~120 words each, drawn from a
Zipf-like vocabulary, seeded) into a temp collection, then measures:

- ``index``: the first refresh (read, hash, chunk and FTS5-index every page);
- ``recheck``: a refresh with nothing changed (the stat walk; a search pays it at most
  once a second, ``RECHECK_SECONDS``);
- ``bm25``: one BM25 query (2-4 words) on the index, p50/p95/max ms;
- ``search``: what ``ctx.search.kb`` pays per call: the (throttled) recheck + BM25 query;
- with vectors (sqlite-vec, 64-dimension vectors from the loopback OpenAI server's
  /v1/embeddings): the time to embed and store every chunk, and one hybrid query
  (BM25 + KNN + reciprocal rank fusion, the query's own embedding over loopback HTTP
  included).

Writes bench/results/kb_search.json.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from common import print_table, save

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentcli.assistant.search.kb import KbIndex, fuse

_SYLLABLES = ["ka", "lo", "mi", "ten", "ru", "sa", "vo", "pel", "dri", "nu", "zor", "fa"]


def vocabulary(size: int, rng: random.Random) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def write_docs(folder: Path, count: int, rng: random.Random) -> list[str]:
    words = vocabulary(5000, rng)
    weights = [1 / (rank + 1) for rank in range(len(words))]  # Zipf-like
    for index in range(count):
        title = " ".join(rng.choices(words, weights, k=3))
        body = " ".join(rng.choices(words, weights, k=120))
        sub = folder / f"part{index % 50:02d}"
        sub.mkdir(exist_ok=True)
        (sub / f"doc{index:05d}.md").write_text(f"# {title}\n\n{body}.\n")
    return words


def percentiles(times: list[float]) -> dict[str, float]:
    times = sorted(times)
    return {
        "p50_ms": round(statistics.median(times), 2),
        "p95_ms": round(times[max(int(len(times) * 0.95) - 1, 0)], 2),
        "max_ms": round(times[-1], 2),
    }


async def vectors(index: KbIndex, queries: list[str]) -> tuple[dict, dict]:
    from agentcli.assistant.search.embeddings import Embedder
    from fixtures.openai_server import OpenAIServer

    with OpenAIServer(latency=0.0, record=False) as server:
        embedder = Embedder(
            connector="bench",
            model="embed",
            url=server.base_url + "/embeddings",
            headers={"Content-Type": "application/json"},
            params={},
            timeout=60,
        )
        started = time.perf_counter()
        pending = index.prepare_vectors(embedder.key)
        found = await embedder.embed([text for _id, text in pending])
        index.store_vectors(
            [(chunk_id, v) for (chunk_id, _t), v in zip(pending, found, strict=True)]
        )
        embed_seconds = time.perf_counter() - started
        times = []
        for query in queries:
            started = time.perf_counter()
            [vector] = await embedder.embed([query])
            near = index.nearest(vector, ["docs"], 30)
            keyword = index.keyword(query, ["docs"], 30)
            fuse([keyword, near], 30)
            times.append((time.perf_counter() - started) * 1000)
    return (
        {
            "step": "embed+store all chunks",
            "seconds": round(embed_seconds, 2),
            "chunks": len(pending),
        },
        {"step": "hybrid query", **percentiles(times)},
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--no-vectors", action="store_true", help="BM25 only")
    args = parser.parse_args()
    rng = random.Random(7)
    work = Path(tempfile.mkdtemp(prefix="agentcli-kb-bench-"))
    try:
        folder = work / "docs"
        folder.mkdir()
        words = write_docs(folder, args.docs, rng)
        folders = {"docs": folder}
        index = KbIndex(work / "index.sqlite3", vectors=not args.no_vectors)
        started = time.perf_counter()
        indexed, _ = index.refresh(folders)
        index_seconds = time.perf_counter() - started
        rechecks = []
        for _ in range(5):
            started = time.perf_counter()
            index.refresh(folders, force=True)
            rechecks.append((time.perf_counter() - started) * 1000)
        queries = [
            " ".join(rng.sample(words[:2000], rng.randint(2, 4))) for _ in range(args.queries)
        ]
        bm25, whole = [], []
        for query in queries:
            started = time.perf_counter()
            index.keyword(query, ["docs"], 10)
            bm25.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            index.refresh(folders)
            index.keyword(query, ["docs"], 10)
            whole.append((time.perf_counter() - started) * 1000)
        rows = [
            {"step": "index", "seconds": round(index_seconds, 2), "chunks": index.count(),
             "docs": indexed},
            {"step": "recheck (no change, forced)", **percentiles(rechecks)},
            {"step": "bm25 query", **percentiles(bm25)},
            {"step": "search (recheck + bm25)", **percentiles(whole)},
        ]  # fmt: skip
        if not args.no_vectors:
            rows.extend(asyncio.run(vectors(index, queries[:100])))
        index.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    columns = [("step", "step"), ("docs", "docs"), ("chunks", "chunks"), ("seconds", "s"),
               ("p50_ms", "p50 ms"), ("p95_ms", "p95 ms"), ("max_ms", "max ms")]  # fmt: skip
    print_table(rows, columns)
    print(f"wrote {save('kb_search', {'docs': args.docs, 'queries': args.queries, 'rows': rows})}")


if __name__ == "__main__":
    main()

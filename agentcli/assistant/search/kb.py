"""The knowledge-base index: a package's ``kb/<collection>/**.md|txt|json`` documents in one
SQLite file of the run's state folder (``kb/<assistant id>.sqlite3``), searched with FTS5's
BM25 and, when ``kb.embedding`` names a connector, by vector distance too (sqlite-vec).

The index follows the files: before a search (at most once every ``RECHECK_SECONDS``),
every document's ``(mtime, size)`` is compared with the manifest, and a file whose stamp moved is hashed (SHA-256); only a
changed hash re-indexes it, and a file gone is dropped. A document is cut into chunks at
headings and blank lines (about ``CHUNK_CHARS`` characters each); a chunk is one hit.

Scores are 0..1. BM25 (title weighted twice the text) gives ``x = -bm25`` (FTS5 ranks are
negative, lower better), reported as ``x / (x + 1)``: an absolute scale, so a threshold
means the same for any query. A vector hit scores its cosine similarity. With both,
hits are fused by reciprocal rank (RRF, k = 60) over the two lists, each list cut at the
threshold first, and the fused score is reported scaled so a chunk ranked first in both
lists scores 1.0.

This module is plain blocking SQLite; ``KbSearch`` (``searcher.py``) calls it from a
worker thread.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentcli.assistant.search.spec import KB_SUFFIXES
from agentcli.errors import ConfigError, SearchError

__all__ = ["CHUNK_CHARS", "Chunk", "Hit", "KbIndex", "fts_query", "open_index"]

CHUNK_CHARS = 1200
RRF_K = 60
RECHECK_SECONDS = 1.0  # how stale the index may be: files are looked at once a second
# Words a question is made of rather than about: left out of the query (unless it has no
# others), so "how do I reset my password" does not match every page saying "how".
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "how",
        "i",
        "if",
        "in",
        "is",
        "it",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "so",
        "the",
        "their",
        "there",
        "this",
        "to",
        "was",
        "we",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
        "your",
    ]
)
_SCHEMA_VERSION = "1"
_WORD = re.compile(r"\w+", re.UNICODE)
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")
_indexes: dict[Path, KbIndex] = {}
_indexes_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class Chunk:
    """A piece of a document as indexed."""

    collection: str
    path: str  # relative to the collection folder, with /
    seq: int
    title: str
    content: str


@dataclass(slots=True)
class Hit:
    """A chunk a search found, with its score (0..1) and rank in its list."""

    id: int
    collection: str
    path: str
    title: str
    content: str
    score: float


def fts_query(text: str) -> str | None:
    """An FTS5 query matching any word of ``text`` but the stopwords (each quoted, so no
    word is taken for FTS5 syntax); None when it has no words."""
    words = list(dict.fromkeys(word.lower() for word in _WORD.findall(text)))
    words = [word for word in words if word not in STOPWORDS] or words
    if not words:
        return None
    return " OR ".join('"' + word.replace('"', '""') + '"' for word in words)


def open_index(path: Path, *, vectors: bool) -> KbIndex:
    """The index in ``path``, one object per file in this process (its lock serialises
    refreshes, so two requests do not index the same files twice)."""
    key = path.absolute()
    with _indexes_lock:
        index = _indexes.get(key)
        if index is None or index.closed or (vectors and not index.vectors):
            if index is not None:
                index.close()
            index = _indexes[key] = KbIndex(key, vectors=vectors)
        return index


def _sqlite(vectors: bool) -> Any:
    """The SQLite module: the standard library's, unless vectors are asked for and it
    cannot load extensions (then sqlean-py's, which can)."""
    import sqlite3

    if not vectors or hasattr(sqlite3.Connection, "enable_load_extension"):
        return sqlite3
    try:
        import sqlean
    except ImportError:
        raise ConfigError(
            "kb.embedding needs a SQLite that loads extensions (for sqlite-vec); this "
            "Python's cannot",
            hint="pip install 'agentcli[vectors]'",
        ) from None
    return sqlean


class KbIndex:
    """One package's index file: manifest, chunks, FTS5 table and (``vectors``) the
    sqlite-vec table."""

    def __init__(self, path: Path, *, vectors: bool) -> None:
        self.path = path
        self.vectors = vectors
        self.closed = False
        self.lock = threading.Lock()
        self._checked: dict[tuple[tuple[str, str], ...], float] = {}
        path.parent.mkdir(parents=True, exist_ok=True)
        module = _sqlite(vectors)
        self.db = module.connect(str(path), check_same_thread=False, timeout=30)
        if vectors:
            self._load_vec()
        self._create()

    def _load_vec(self) -> None:
        try:
            import sqlite_vec
        except ImportError:
            raise ConfigError(
                "kb.embedding needs sqlite-vec, which is not installed",
                hint="pip install 'agentcli[vectors]'",
            ) from None
        self.db.enable_load_extension(True)
        sqlite_vec.load(self.db)
        self.db.enable_load_extension(False)

    def _create(self) -> None:
        with self.db:
            self.db.executescript(
                """
                PRAGMA journal_mode = WAL;
                CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
                CREATE TABLE IF NOT EXISTS files (
                    collection TEXT NOT NULL, path TEXT NOT NULL, mtime_ns INTEGER NOT NULL,
                    size INTEGER NOT NULL, sha256 TEXT NOT NULL, PRIMARY KEY (collection, path));
                CREATE TABLE IF NOT EXISTS chunks (
                    id INTEGER PRIMARY KEY, collection TEXT NOT NULL, path TEXT NOT NULL,
                    seq INTEGER NOT NULL, title TEXT NOT NULL, content TEXT NOT NULL,
                    embedded INTEGER NOT NULL DEFAULT 0);
                CREATE INDEX IF NOT EXISTS chunks_file ON chunks (collection, path);
                CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
                    title, content, tokenize = 'porter unicode61 remove_diacritics 2');
                """
            )
            self.db.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (_SCHEMA_VERSION,))

    def close(self) -> None:
        """Close the file."""
        with self.lock:
            if not self.closed:
                self.db.close()
                self.closed = True

    # -- keeping up with the files -------------------------------------------------------

    def refresh(self, folders: dict[str, Path], *, force: bool = False) -> tuple[int, int]:
        """Bring the index up to the collection folders (name -> folder); the numbers of
        documents re-indexed and dropped. Folders looked at less than ``RECHECK_SECONDS``
        ago are not looked at again (unless ``force``): a search of a 10,000-page
        collection would otherwise spend more time on the walk than on the query."""
        key = tuple(sorted((name, str(folder)) for name, folder in folders.items()))
        with self.lock:
            now = time.monotonic()
            if not force and now - self._checked.get(key, -RECHECK_SECONDS) < RECHECK_SECONDS:
                return 0, 0
            known = {
                (c, p): (m, s, h)
                for c, p, m, s, h in self.db.execute(
                    "SELECT collection, path, mtime_ns, size, sha256 FROM files"
                )
            }
            seen: set[tuple[str, str]] = set()
            changed = 0
            with self.db:
                for collection, folder in folders.items():
                    for file, relative, stat in _documents(folder):
                        name = (collection, relative)
                        seen.add(name)
                        stamp = known.get(name)
                        if stamp is not None and stamp[:2] == (stat.st_mtime_ns, stat.st_size):
                            continue
                        try:
                            with open(file, "rb") as handle:
                                data = handle.read()
                        except OSError:
                            continue
                        digest = hashlib.sha256(data).hexdigest()
                        if stamp is None or stamp[2] != digest:
                            self._replace(collection, relative, data)
                            changed += 1
                        self.db.execute(
                            "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?)",
                            (collection, relative, stat.st_mtime_ns, stat.st_size, digest),
                        )
                gone = [name for name in known if name not in seen and name[0] in folders]
                for collection, relative in gone:
                    self._drop(collection, relative)
                    self.db.execute(
                        "DELETE FROM files WHERE collection = ? AND path = ?",
                        (collection, relative),
                    )
            self._checked[key] = time.monotonic()
            return changed, len(gone)

    def _drop(self, collection: str, relative: str) -> None:
        ids = [
            row[0]
            for row in self.db.execute(
                "SELECT id FROM chunks WHERE collection = ? AND path = ?", (collection, relative)
            )
        ]
        for chunk_id in ids:
            self.db.execute("DELETE FROM chunks_fts WHERE rowid = ?", (chunk_id,))
            if self.vectors and self._has_vec_table():
                self.db.execute("DELETE FROM chunks_vec WHERE rowid = ?", (chunk_id,))
        self.db.execute(
            "DELETE FROM chunks WHERE collection = ? AND path = ?", (collection, relative)
        )

    def _replace(self, collection: str, relative: str, data: bytes) -> None:
        self._drop(collection, relative)
        for chunk in split_document(collection, relative, data.decode("utf-8", "replace")):
            cursor = self.db.execute(
                "INSERT INTO chunks (collection, path, seq, title, content) VALUES (?,?,?,?,?)",
                (chunk.collection, chunk.path, chunk.seq, chunk.title, chunk.content),
            )
            self.db.execute(
                "INSERT INTO chunks_fts (rowid, title, content) VALUES (?, ?, ?)",
                (cursor.lastrowid, chunk.title, chunk.content),
            )

    # -- vectors ---------------------------------------------------------------------------

    def _has_vec_table(self) -> bool:
        found = self.db.execute("SELECT 1 FROM sqlite_master WHERE name = 'chunks_vec'").fetchone()
        return found is not None

    def prepare_vectors(self, embedder: str) -> list[tuple[int, str]]:
        """The chunks that need a vector from ``embedder`` (all of them when the embedder
        changed since they were embedded): ``(id, text)``."""
        with self.lock, self.db:
            row = self.db.execute("SELECT value FROM meta WHERE key = 'embedder'").fetchone()
            if row is None or row[0] != embedder:
                if self._has_vec_table():
                    self.db.execute("DROP TABLE chunks_vec")
                self.db.execute("UPDATE chunks SET embedded = 0")
                self.db.execute("DELETE FROM meta WHERE key IN ('embedder', 'dimensions')")
                self.db.execute("INSERT INTO meta VALUES ('embedder', ?)", (embedder,))
            return [
                (chunk_id, f"{title}\n{content}")
                for chunk_id, title, content in self.db.execute(
                    "SELECT id, title, content FROM chunks WHERE embedded = 0 ORDER BY id"
                )
            ]

    def store_vectors(self, vectors: Sequence[tuple[int, list[float]]]) -> None:
        """Keep the vectors of chunks (their table made with the first one's size)."""
        if not vectors:
            return
        import sqlite_vec

        with self.lock, self.db:
            dimensions = len(vectors[0][1])
            row = self.db.execute("SELECT value FROM meta WHERE key = 'dimensions'").fetchone()
            if row is None:
                self.db.execute(
                    f"CREATE VIRTUAL TABLE IF NOT EXISTS chunks_vec USING vec0("
                    f"embedding float[{dimensions}] distance_metric=cosine)"
                )
                self.db.execute("INSERT INTO meta VALUES ('dimensions', ?)", (str(dimensions),))
            elif int(row[0]) != dimensions:
                raise SearchError(
                    f"kb embeddings changed size ({row[0]} -> {dimensions}) within one embedder"
                )
            for chunk_id, vector in vectors:
                exists = self.db.execute(
                    "SELECT 1 FROM chunks WHERE id = ?", (chunk_id,)
                ).fetchone()
                if exists is None:  # re-indexed while it was being embedded
                    continue
                self.db.execute("DELETE FROM chunks_vec WHERE rowid = ?", (chunk_id,))
                self.db.execute(
                    "INSERT INTO chunks_vec (rowid, embedding) VALUES (?, ?)",
                    (chunk_id, sqlite_vec.serialize_float32(vector)),
                )
                self.db.execute("UPDATE chunks SET embedded = 1 WHERE id = ?", (chunk_id,))

    # -- searching ---------------------------------------------------------------------------

    def keyword(self, query: str, collections: Sequence[str], limit: int) -> list[Hit]:
        """The best ``limit`` chunks of ``collections`` by BM25, best first."""
        match = fts_query(query)
        if match is None or not collections:
            return []
        marks = ", ".join("?" for _ in collections)
        sql = (
            "SELECT c.id, c.collection, c.path, c.title, c.content, "
            "bm25(chunks_fts, 2.0, 1.0) AS rank FROM chunks_fts "
            "JOIN chunks c ON c.id = chunks_fts.rowid "
            f"WHERE chunks_fts MATCH ? AND c.collection IN ({marks}) ORDER BY rank LIMIT ?"
        )
        with self.lock:
            rows = self.db.execute(sql, (match, *collections, limit)).fetchall()
        hits = []
        for chunk_id, collection, path, title, content, rank in rows:
            strength = max(-float(rank), 0.0)
            hits.append(Hit(chunk_id, collection, path, title, content, strength / (strength + 1)))
        return hits

    def nearest(self, vector: list[float], collections: Sequence[str], limit: int) -> list[Hit]:
        """The ``limit`` chunks of ``collections`` closest to ``vector`` (cosine), best
        first. The KNN step runs over every collection, so it asks for more than
        ``limit`` and keeps the ones of ``collections``."""
        import sqlite_vec

        with self.lock:
            if not self._has_vec_table():
                return []
            rows = self.db.execute(
                "SELECT c.id, c.collection, c.path, c.title, c.content, v.distance FROM "
                "(SELECT rowid, distance FROM chunks_vec WHERE embedding MATCH ? AND k = ?) v "
                "JOIN chunks c ON c.id = v.rowid ORDER BY v.distance",
                (sqlite_vec.serialize_float32(vector), max(limit * 4, 50)),
            ).fetchall()
        wanted = set(collections)
        hits = [
            Hit(chunk_id, collection, path, title, content, 1.0 - float(distance))
            for chunk_id, collection, path, title, content, distance in rows
            if collection in wanted
        ]
        return hits[:limit]

    def count(self) -> int:
        """How many chunks the index holds."""
        with self.lock:
            return int(self.db.execute("SELECT count(*) FROM chunks").fetchone()[0])


def fuse(lists: Sequence[Sequence[Hit]], limit: int) -> list[Hit]:
    """Reciprocal rank fusion of ranked lists: ``sum 1 / (RRF_K + rank)``, scaled so a
    chunk first in every list scores 1.0."""
    scores: dict[int, float] = {}
    hits: dict[int, Hit] = {}
    for ranked in lists:
        for rank, hit in enumerate(ranked, start=1):
            scores[hit.id] = scores.get(hit.id, 0.0) + 1.0 / (RRF_K + rank)
            hits.setdefault(hit.id, hit)
    best = len(lists) / (RRF_K + 1)
    order = sorted(scores, key=lambda chunk_id: (-scores[chunk_id], chunk_id))[:limit]
    fused = []
    for chunk_id in order:
        hit = hits[chunk_id]
        fused.append(
            Hit(hit.id, hit.collection, hit.path, hit.title, hit.content, scores[chunk_id] / best)
        )
    return fused


# -- documents -------------------------------------------------------------------------------


def _documents(folder: Path) -> Iterator[tuple[str, str, os.stat_result]]:
    """The documents of a collection folder (hidden files and folders, and symlinks, which
    could lead out of the package, skipped): their
    path, path relative to the folder (with /) and stat. ``scandir`` rather than
    ``Path`` objects: the walk runs before searches, over every page."""
    pending = [(str(folder), "")]
    while pending:
        directory, prefix = pending.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            relative = prefix + entry.name
            if entry.is_dir(follow_symlinks=False):
                pending.append((entry.path, relative + "/"))
            elif entry.name.endswith(KB_SUFFIXES) and entry.is_file(follow_symlinks=False):
                try:
                    yield entry.path, relative, entry.stat()
                except OSError:
                    continue


def split_document(collection: str, relative: str, text: str) -> list[Chunk]:
    """A document's chunks: JSON documents by their records, text at headings and blank
    lines, each up to about ``CHUNK_CHARS`` characters."""
    stem = Path(relative).stem.replace("-", " ").replace("_", " ")
    if relative.endswith(".json"):
        return _json_chunks(collection, relative, text, stem)
    chunks: list[Chunk] = []
    title = stem
    heading = ""
    for line in text.splitlines():
        found = _HEADING.match(line)
        if found:
            title = found.group(1) if title == stem else title
            break
        if line.strip():
            break
    pieces: list[str] = []
    size = 0

    def flush() -> None:
        nonlocal pieces, size
        body = "\n\n".join(pieces).strip()
        if body:
            shown = f"{title} — {heading}" if heading and heading != title else title
            chunks.append(Chunk(collection, relative, len(chunks), shown, body))
        pieces, size = [], 0

    for block in re.split(r"\n\s*\n", text):
        block = block.strip()
        if not block:
            continue
        found = _HEADING.match(block.splitlines()[0])
        if found:
            flush()
            heading = found.group(1)
        # a heading stays with the text under it, however long that is
        heading_only = len(pieces) == 1 and _HEADING.match(pieces[0]) is not None
        if size + len(block) > CHUNK_CHARS and pieces and not heading_only:
            flush()
        pieces.append(block)
        size += len(block)
    flush()
    return chunks


def _json_chunks(collection: str, relative: str, text: str, stem: str) -> list[Chunk]:
    """A JSON document: each record of a list (or the object) one chunk; its ``title``
    (or ``name``, ``question``) is the title, its other strings the text."""
    try:
        data = json.loads(text)
    except ValueError:
        return [Chunk(collection, relative, 0, stem, text.strip())] if text.strip() else []
    records = data if isinstance(data, list) else [data]
    chunks: list[Chunk] = []
    for record in records:
        if isinstance(record, dict):
            title = next(
                (str(record[k]) for k in ("title", "name", "question") if record.get(k)), stem
            )
            body = "\n".join(
                _strings({k: v for k, v in record.items() if k not in ("title", "name")})
            )
        else:
            title, body = stem, "\n".join(_strings(record))
        if body.strip():
            chunks.append(Chunk(collection, relative, len(chunks), title, body.strip()))
    return chunks


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif value is not None and not isinstance(value, bool):
        yield str(value)

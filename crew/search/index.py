"""``SearchIndex``: a named collection in one SQLite file, searched by keywords and vectors.

One file holds any number of collections (memory and knowledge may share a file). Texts go to
FTS5 and, when the index has an embedder, their vectors (float32 bytes) to the same row, in one
transaction, so a document is never half-indexed. A collection records the embedder that filled
it and its dimension: opening it with another embedder is refused with the way out
(``reembed=True``), never mixing vectors.

Many processes may write one file (WAL, busy timeout, ``BEGIN IMMEDIATE``: the run store's
rules, through ``crew.common.sqlite_files``). The vectors a process holds in memory carry the
collection's revision; a search first reads the revision, and reloads only when another
process wrote.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from crew.common import secrets
from crew.common.sqlite_files import open_shared
from crew.errors import EmbedderMismatchError, SearchIndexError
from crew.search import schema
from crew.search.arrays import numpy_or_error
from crew.search.documents import Doc, Hit, normalize_scope
from crew.search.embedders import Embedder
from crew.search.keywords import keyword_ranking
from crew.search.ranking import fuse
from crew.search.vectors import VectorMatrix

DEPTH = 50
"""How deep each ranking goes before fusion (at least; ``4 * limit`` when larger)."""

_COLUMNS = "rowid, id, text, scope, metadata"


class SearchIndex:
    """The collection ``collection`` of the SQLite file ``path``, searched with ``embedder``.

    ``embedder=None`` means keywords only. ``reembed=True`` re-embeds a collection another
    embedder filled (every document, once, now) instead of refusing it.
    """

    def __init__(self, path: Path | str, collection: str, embedder: Embedder | None, *, reembed: bool = False) -> None:
        self.path = Path(path)
        self.collection = collection
        self.embedder = embedder
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._conn = open_shared(self.path, lambda conn: schema.setup(conn, self.path))
        self._vectors: VectorMatrix | None = None
        try:
            self._adopt(reembed)
        except BaseException:
            self._conn.close()
            raise

    # -- the collection's embedder ------------------------------------------------
    @staticmethod
    def recorded(path: Path | str, collection: str) -> tuple[str | None, int | None] | None:
        """The embedder name and dimension a collection of ``path`` records, or None if it has none."""
        path = Path(path)
        if not path.is_file():
            return None
        conn = open_shared(path, lambda c: schema.setup(c, path))
        try:
            row = conn.execute(
                "SELECT embedder, dimension FROM search_collections WHERE name = ?", (collection,)
            ).fetchone()
        finally:
            conn.close()
        return None if row is None else (row[0], row[1])

    def _adopt(self, reembed: bool) -> None:
        """Record this index's embedder for a new or empty collection; check it for a filled one."""
        wanted = self.embedder.name if self.embedder else None
        dimension = self.embedder.dimension if self.embedder else None
        with self._write() as conn:
            conn.execute("INSERT OR IGNORE INTO search_collections (name) VALUES (?)", (self.collection,))
            recorded, recorded_dim = conn.execute(
                "SELECT embedder, dimension FROM search_collections WHERE name = ?", (self.collection,)
            ).fetchone()
            empty = self._count(conn) == 0
            if empty or (recorded is None and recorded_dim is None and wanted is None):
                conn.execute(
                    "UPDATE search_collections SET embedder = ?, dimension = ? WHERE name = ?",
                    (wanted, dimension, self.collection),
                )
                return
        same = recorded == wanted and (dimension is None or recorded_dim in (None, dimension))
        if same or (wanted is None):  # keywords only over vectors: reading is fine, adding is refused
            return
        if not reembed:
            raise self._mismatch(recorded, recorded_dim, wanted)
        self.reembed()

    def _mismatch(self, recorded: str | None, recorded_dim: int | None, wanted: str | None) -> EmbedderMismatchError:
        had = f"'{recorded}' ({recorded_dim} dimensions)" if recorded else "no embedder (keywords only)"
        asked = f"'{wanted}'" if wanted else "no embedder (keywords only)"
        return EmbedderMismatchError(
            f"{self.path}: collection '{self.collection}' was indexed with {had}, not {asked}; vectors of "
            f"two embedders are never mixed: use embedder '{recorded or 'none'}' again, or re-embed every "
            "document with the new one (SearchIndex(..., reembed=True), Memory(..., reembed=True))",
            recorded=recorded or "none",
            requested=wanted or "none",
        )

    def reembed(self) -> None:
        """Embed every document again with this index's embedder, and record it (one transaction)."""
        if self.embedder is None:
            with self._write() as conn:
                conn.execute("UPDATE search_docs SET vector = NULL WHERE collection = ?", (self.collection,))
                self._record_embedder(conn, None)
            return
        rows = self._conn.execute(
            "SELECT rowid, text FROM search_docs WHERE collection = ? ORDER BY rowid", (self.collection,)
        ).fetchall()
        blobs: list[tuple[bytes, int]] = []
        for start in range(0, len(rows), 256):
            batch = rows[start : start + 256]
            matrix = self.embedder.embed([text for _, text in batch])
            blobs.extend((matrix[i].tobytes(), rowid) for i, (rowid, _) in enumerate(batch))
        with self._write() as conn:
            conn.executemany("UPDATE search_docs SET vector = ? WHERE rowid = ?", blobs)
            self._record_embedder(conn, self.embedder.dimension)

    def _record_embedder(self, conn: sqlite3.Connection, dimension: int | None) -> None:
        name = self.embedder.name if self.embedder else None
        conn.execute(
            "UPDATE search_collections SET embedder = ?, dimension = ?, revision = revision + 1 WHERE name = ?",
            (name, dimension, self.collection),
        )
        self._vectors = None

    # -- writing --------------------------------------------------------------------
    def add(self, docs: Sequence[Doc]) -> None:
        """Index ``docs`` (scrubbed of secrets first); a document whose id exists replaces it."""
        docs = list({doc.id: doc for doc in map(_clean, docs)}.values())  # one id twice: the last wins
        if not docs:
            return
        vectors = self._embed([doc.text for doc in docs])
        with self._write() as conn:
            revision = self._check_writable(conn, vectors)
            replaced = [self._remove(conn, doc.id) for doc in docs]
            rowids = [self._insert(conn, doc, None if vectors is None else vectors[i]) for i, doc in enumerate(docs)]
            self._bump(conn, revision)
            if vectors is not None and self._vectors is not None:
                self._vectors.remove(rowid for rowid in replaced if rowid is not None)
                self._vectors.add([(rowid, docs[i].scope, vectors[i]) for i, rowid in enumerate(rowids)])

    def delete(self, ids: Sequence[str]) -> None:
        """Remove the documents ``ids`` (an unknown id is no error)."""
        if not ids:
            return
        with self._write() as conn:
            revision = self._revision(conn)
            rowids = [self._remove(conn, doc_id) for doc_id in ids]
            self._bump(conn, revision)
            if self._vectors is not None:
                self._vectors.remove(rowid for rowid in rowids if rowid is not None)

    def clear(self, scope: str | None = None) -> int:
        """Remove every document under ``scope`` (all of them by default); returns how many."""
        ids = [doc.id for doc in self.docs(scope)]
        self.delete(ids)
        return len(ids)

    def _embed(self, texts: list[str]) -> Any:
        if self.embedder is None:
            return None
        return self.embedder.embed(texts)

    def _check_writable(self, conn: sqlite3.Connection, vectors: Any) -> int:
        recorded, dimension, revision = conn.execute(
            "SELECT embedder, dimension, revision FROM search_collections WHERE name = ?", (self.collection,)
        ).fetchone()
        wanted = self.embedder.name if self.embedder else None
        if recorded != wanted and (recorded is not None or self._count(conn) > 0):
            raise self._mismatch(recorded, dimension, wanted)
        if vectors is not None:
            if dimension is None:
                conn.execute(
                    "UPDATE search_collections SET embedder = ?, dimension = ? WHERE name = ?",
                    (wanted, int(vectors.shape[1]), self.collection),
                )
            elif dimension != vectors.shape[1]:
                raise self._mismatch(recorded, dimension, f"{wanted} ({vectors.shape[1]} dimensions)")
        return revision

    def _insert(self, conn: sqlite3.Connection, doc: Doc, vector: Any) -> int:
        cursor = conn.execute(
            "INSERT INTO search_docs (collection, id, text, scope, metadata, vector) VALUES (?, ?, ?, ?, ?, ?)",
            (
                self.collection,
                doc.id,
                doc.text,
                doc.scope,
                json.dumps(dict(doc.metadata)),
                None if vector is None else vector.tobytes(),
            ),
        )
        rowid = int(cursor.lastrowid or 0)
        conn.execute("INSERT INTO search_fts (rowid, text) VALUES (?, ?)", (rowid, doc.text))
        return rowid

    def _remove(self, conn: sqlite3.Connection, doc_id: str) -> int | None:
        row = conn.execute(
            "SELECT rowid FROM search_docs WHERE collection = ? AND id = ?", (self.collection, doc_id)
        ).fetchone()
        if row is None:
            return None
        conn.execute("DELETE FROM search_docs WHERE rowid = ?", (row[0],))
        conn.execute("DELETE FROM search_fts WHERE rowid = ?", (row[0],))
        return int(row[0])

    def _bump(self, conn: sqlite3.Connection, revision: int) -> None:
        conn.execute("UPDATE search_collections SET revision = ? WHERE name = ?", (revision + 1, self.collection))
        vectors = self._vectors
        if vectors is not None:
            if vectors.revision == revision:
                vectors.revision = revision + 1
            else:  # another process wrote since we loaded: reload at the next search
                self._vectors = None

    # -- reading ------------------------------------------------------------------------
    def search(self, query: str, limit: int = 5, scope: str | None = None) -> list[Hit]:
        """The ``limit`` documents under ``scope`` that best match ``query``, best first."""
        if limit <= 0 or not query.strip():
            return []
        scope = normalize_scope(scope)
        depth = max(DEPTH, 4 * limit)
        with self._lock:
            rankings = [keyword_ranking(self._conn, self.collection, query, depth, scope)]
            vector = self._vector_ranking(query, depth, scope)
            if vector:
                rankings.append(vector)
            fused = fuse(rankings, limit)
            docs = self._fetch([rowid for rowid, _ in fused])
        return [Hit(docs[rowid], score) for rowid, score in fused if rowid in docs]

    def _vector_ranking(self, query: str, depth: int, scope: str) -> list[int]:
        if self.embedder is None:
            return []
        matrix = self._matrix()
        if matrix is None or matrix.count == 0:
            return []
        query_vector = self.embedder.embed([secrets.scrub(query)])[0]
        if query_vector.shape[0] != matrix.dimension:
            return []
        return [rowid for rowid, _ in matrix.top(query_vector, depth, scope)]

    def _matrix(self) -> VectorMatrix | None:
        """The collection's vectors, loaded now if another process wrote since (or never loaded)."""
        recorded, dimension, revision = self._conn.execute(
            "SELECT embedder, dimension, revision FROM search_collections WHERE name = ?", (self.collection,)
        ).fetchone()
        if self.embedder is None or recorded != self.embedder.name or not dimension:
            return None
        if self._vectors is not None and self._vectors.revision == revision:
            return self._vectors
        np = numpy_or_error(self.embedder.name)
        with self._write() as conn:  # one snapshot: the rows and the revision they belong to
            revision = self._revision(conn)
            rows = conn.execute(
                "SELECT rowid, scope, vector FROM search_docs WHERE collection = ? AND vector IS NOT NULL",
                (self.collection,),
            ).fetchall()
        matrix = VectorMatrix(np, int(dimension), revision)
        matrix.add_blobs(rows)
        self._vectors = matrix
        return matrix

    def _fetch(self, rowids: list[int]) -> dict[int, Doc]:
        if not rowids:
            return {}
        marks = ",".join("?" * len(rowids))
        rows = self._conn.execute(f"SELECT {_COLUMNS} FROM search_docs WHERE rowid IN ({marks})", rowids)
        return {row[0]: _doc(row) for row in rows}

    def get(self, doc_id: str) -> Doc | None:
        """The document ``doc_id``, or None."""
        with self._lock:
            row = self._conn.execute(
                f"SELECT {_COLUMNS} FROM search_docs WHERE collection = ? AND id = ?", (self.collection, doc_id)
            ).fetchone()
        return None if row is None else _doc(row)

    def docs(self, scope: str | None = None) -> Iterator[Doc]:
        """Every document under ``scope``, oldest first."""
        scope = normalize_scope(scope)
        sql = f"SELECT {_COLUMNS} FROM search_docs WHERE collection = ?"
        args: list[Any] = [self.collection]
        if scope != "/":
            sql += " AND (scope = ? OR substr(scope, 1, ?) = ?)"
            args += [scope, len(scope) + 1, scope + "/"]
        with self._lock:
            rows = self._conn.execute(sql + " ORDER BY rowid", args).fetchall()
        return (_doc(row) for row in rows)

    def count(self) -> int:
        with self._lock:
            return self._count(self._conn)

    def _count(self, conn: sqlite3.Connection) -> int:
        return conn.execute("SELECT count(*) FROM search_docs WHERE collection = ?", (self.collection,)).fetchone()[0]

    def _revision(self, conn: sqlite3.Connection) -> int:
        return conn.execute("SELECT revision FROM search_collections WHERE name = ?", (self.collection,)).fetchone()[0]

    # -- the connection -----------------------------------------------------------
    def _write(self) -> _Transaction:
        return _Transaction(self._conn, self._lock)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> SearchIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Transaction:
    """``with``: the index's lock and one ``BEGIN IMMEDIATE`` transaction, committed or rolled back."""

    def __init__(self, conn: sqlite3.Connection, lock: threading.RLock) -> None:
        self.conn = conn
        self.lock = lock

    def __enter__(self) -> sqlite3.Connection:
        self.lock.acquire()
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except BaseException:
            self.lock.release()
            raise
        return self.conn

    def __exit__(self, kind: object, *rest: object) -> None:
        try:
            self.conn.execute("ROLLBACK" if kind is not None else "COMMIT")
        finally:
            self.lock.release()


def _clean(doc: Doc) -> Doc:
    if not isinstance(doc, Doc):
        raise SearchIndexError(f"SearchIndex.add takes Doc values, not {type(doc).__name__}")
    if not doc.id:
        raise SearchIndexError("a document needs a non-empty id")
    return Doc(
        id=str(doc.id),
        text=secrets.scrub(str(doc.text)),
        scope=normalize_scope(doc.scope),
        metadata=secrets.scrub_data(dict(doc.metadata)),
    )


def _doc(row: Any) -> Doc:
    return Doc(id=row[1], text=row[2], scope=row[3], metadata=json.loads(row[4]))

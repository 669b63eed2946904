"""``KnowledgeBase``: a project's sources indexed once, in ``.crew/knowledge.db``, and searched.

Knowledge lives in a file of its own, not in the memory file: it is derived from files the
project keeps, so it can be deleted and rebuilt at any time, while memory is what runs learnt
and is kept; resetting one must never drop the other.

Each holder (the crew, or one agent) has a scope of its own in the collection ``knowledge``,
and each unit of its sources (a string, a file) a scope under it. A table beside the search
core's, ``knowledge_units``, records each unit's content hash (and a file's size and mtime, so
an unchanged file is not even hashed again). Indexing a changed unit adds its new chunks, then
drops the old ones: if reading fails half-way (a byte that is not UTF-8 at 900 MB), the chunks
added so far are removed and the error raised, so a unit is indexed whole or not at all, and a
run never starts on half a source.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crew.common.sqlite_files import open_shared
from crew.knowledge.chunking import Chunk
from crew.knowledge.sources import KNOWLEDGE_FOLDER, BaseKnowledgeSource, Unit

COLLECTION = "knowledge"
BATCH = 256
"""Chunks embedded and written at a time: the memory a large source needs while indexed."""

_UNITS = """
CREATE TABLE IF NOT EXISTS knowledge_units (
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    label TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    size INTEGER,
    mtime_ns INTEGER,
    chunks INTEGER NOT NULL,
    PRIMARY KEY (scope, key)
)
"""


@dataclass(frozen=True)
class IndexReport:
    """What an ``index`` call did: units indexed (new or changed), unchanged, removed; chunks written."""

    indexed: list[str]
    unchanged: list[str]
    removed: list[str]
    chunks: int


@dataclass(frozen=True)
class Passage:
    """A chunk a search found: its text, where it came from, and its score (higher is better)."""

    id: str
    text: str
    source: str
    page: int | None
    score: float

    @property
    def label(self) -> str:
        return self.source if self.page is None else f"{self.source}, page {self.page}"


class KnowledgeBase:
    """The knowledge of one project: ``path`` (``.crew/knowledge.db``), relative source paths in
    ``folder`` (``knowledge/``), vectors from ``embedder`` (a spec ``resolve_embedder`` takes; an
    embedder object; ``"none"`` for keywords only)."""

    def __init__(self, path: Path | str, *, folder: Path | str = KNOWLEDGE_FOLDER, embedder: Any = None) -> None:
        from crew.search import SearchIndex, resolve_embedder

        self.path = Path(path)
        self.folder = Path(folder)
        # another embedder than the one that filled the file: re-embed (knowledge is derived, rebuilt at will)
        chosen = resolve_embedder(embedder, where="knowledge embedder")
        self.index = SearchIndex(self.path, COLLECTION, chosen, reembed=True)
        self._lock = threading.Lock()
        self._conn = open_shared(self.path, _setup)

    # -- indexing ---------------------------------------------------------------------
    def ingest(self, scope: str, sources: Sequence[BaseKnowledgeSource]) -> IndexReport:
        """Make ``scope`` hold exactly ``sources``: index new or changed units, drop removed ones.

        Every source's paths are resolved (and refused) before anything is written.
        """
        units = [unit for source in sources for unit in source.units(self.folder)]
        known = self._known(scope)
        indexed: list[str] = []
        unchanged: list[str] = []
        written = 0
        for unit in units:
            row = known.pop(unit.key, None)
            stat = _stat(unit)
            if row is not None and stat is not None and (row["size"], row["mtime_ns"]) == stat:
                unchanged.append(unit.label)
                continue
            fingerprint = unit.fingerprint()
            if row is not None and row["fingerprint"] == fingerprint:
                self._record(scope, unit, fingerprint, stat, row["chunks"])
                unchanged.append(unit.label)
                continue
            count = self._replace(scope, unit, fingerprint)
            self._record(scope, unit, fingerprint, stat, count)
            indexed.append(unit.label)
            written += count
        removed = [self._drop(scope, key, row["label"]) for key, row in known.items()]
        return IndexReport(indexed, unchanged, removed, written)

    def _replace(self, scope: str, unit: Unit, fingerprint: str) -> int:
        """Index ``unit``'s chunks anew (all or none of them), then drop its older chunks."""
        from crew.search import Doc

        home = _unit_scope(scope, unit.key)
        # short ids that differ from unit to unit and version to version (`crew show` prints 12 characters)
        prefix = hashlib.sha256(f"{home}\n{fingerprint}".encode()).hexdigest()[:10] + "-"
        added: list[str] = []
        try:
            for batch in _batches(unit.chunks(), BATCH):
                docs = [Doc(prefix + str(c.index), c.text, home, _metadata(c)) for c in batch]
                self.index.add(docs)
                added.extend(doc.id for doc in docs)
        except BaseException:
            self.index.delete(added)
            raise
        stale = [doc.id for doc in self.index.docs(home) if not doc.id.startswith(prefix)]
        self.index.delete(stale)
        return len(added)

    def _drop(self, scope: str, key: str, label: str) -> str:
        self.index.clear(_unit_scope(scope, key))
        with self._lock:
            self._conn.execute("DELETE FROM knowledge_units WHERE scope = ? AND key = ?", (scope, key))
        return label

    def _known(self, scope: str) -> dict[str, dict[str, Any]]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT key, label, fingerprint, size, mtime_ns, chunks FROM knowledge_units WHERE scope = ?", (scope,)
            ).fetchall()
        names = ("label", "fingerprint", "size", "mtime_ns", "chunks")
        return {row[0]: dict(zip(names, row[1:], strict=True)) for row in rows}

    def _record(self, scope: str, unit: Unit, fingerprint: str, stat: tuple[int, int] | None, chunks: int) -> None:
        size, mtime = stat if stat is not None else (None, None)
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO knowledge_units VALUES (?, ?, ?, ?, ?, ?, ?)",
                (scope, unit.key, unit.label, fingerprint, size, mtime, chunks),
            )

    # -- reading ----------------------------------------------------------------------
    def search(self, query: str, scopes: Iterable[str], limit: int = 5) -> list[Passage]:
        """The ``limit`` passages under any of ``scopes`` that best match ``query``, best first."""
        hits = [hit for scope in dict.fromkeys(scopes) for hit in self.index.search(query, limit=limit, scope=scope)]
        hits.sort(key=lambda hit: -hit.score)
        return [_passage(hit) for hit in hits[:limit]]

    def units(self, scope: str | None = None) -> list[dict[str, Any]]:
        """The indexed units (``scope``, ``source``, ``chunks``, ``fingerprint``), under ``scope`` if given."""
        sql = "SELECT scope, label, chunks, fingerprint FROM knowledge_units"
        args: tuple[Any, ...] = ()
        if scope:
            sql, args = sql + " WHERE scope = ? OR substr(scope, 1, ?) = ?", (scope, len(scope) + 1, scope + "/")
        with self._lock:
            rows = self._conn.execute(sql + " ORDER BY scope, label", args).fetchall()
        return [{"scope": r[0], "source": r[1], "chunks": r[2], "fingerprint": r[3]} for r in rows]

    def close(self) -> None:
        self.index.close()
        with self._lock:
            self._conn.close()

    def __enter__(self) -> KnowledgeBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _setup(conn: Any) -> None:
    conn.execute(_UNITS)


def _unit_scope(scope: str, key: str) -> str:
    return f"{scope.rstrip('/')}/{hashlib.sha256(key.encode()).hexdigest()[:16]}"


def _stat(unit: Unit) -> tuple[int, int] | None:
    if unit.path is None:
        return None
    try:
        stat = unit.path.stat()
    except OSError:
        return None
    return stat.st_size, stat.st_mtime_ns


def _batches(chunks: Iterator[Chunk], size: int) -> Iterator[list[Chunk]]:
    batch: list[Chunk] = []
    for chunk in chunks:
        batch.append(chunk)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _metadata(chunk: Chunk) -> dict[str, Any]:
    meta: dict[str, Any] = {**chunk.metadata, "source": chunk.source, "chunk": chunk.index}
    if chunk.page is not None:
        meta["page"] = chunk.page
    return meta


def _passage(hit: Any) -> Passage:
    meta: Mapping[str, Any] = hit.doc.metadata
    return Passage(hit.doc.id, hit.doc.text, str(meta.get("source", "")), meta.get("page"), float(hit.score))

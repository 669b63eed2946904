"""A collection's vectors held as one float32 matrix, searched exactly (brute force).

Loaded lazily from the file at the first vector search, then kept current by the index's own
adds and deletes (rows appended into spare capacity, a deleted row replaced by the last), so a
write costs no reload. Each row's scope is an integer into a small table of scope names: a
search in a scope masks rows by integer, not by comparing 100k strings.

numpy is imported by the caller and handed in, so this module loads without it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from crew.search.documents import in_scope


class VectorMatrix:
    """Rows of ``(rowid, scope, vector)``; ``top`` ranks them by dot product with a query."""

    def __init__(self, np: Any, dimension: int, revision: int) -> None:
        self.np = np
        self.dimension = dimension
        self.revision = revision
        self.count = 0
        self._matrix = np.zeros((0, dimension), dtype=np.float32)
        self._rowids = np.zeros(0, dtype=np.int64)
        self._scope_ids = np.zeros(0, dtype=np.int32)
        self._positions: dict[int, int] = {}
        self._scopes: dict[str, int] = {}

    def add(self, rows: Sequence[tuple[int, str, Any]]) -> None:
        """Append ``(rowid, scope, vector)`` rows (a rowid already present is replaced)."""
        self.remove([rowid for rowid, _, _ in rows if rowid in self._positions])
        self._reserve(self.count + len(rows))
        for rowid, scope, vector in rows:
            at = self.count
            self._matrix[at] = vector
            self._rowids[at] = rowid
            self._scope_ids[at] = self._scopes.setdefault(scope, len(self._scopes))
            self._positions[rowid] = at
            self.count += 1

    def add_blobs(self, rows: Iterable[tuple[int, str, bytes]]) -> None:
        """Append rows whose vectors are the float32 bytes the file stores."""
        np = self.np
        self.add([(rowid, scope, np.frombuffer(blob, dtype=np.float32)) for rowid, scope, blob in rows])

    def remove(self, rowids: Iterable[int]) -> None:
        for rowid in rowids:
            at = self._positions.pop(rowid, None)
            if at is None:
                continue
            last = self.count - 1
            if at != last:
                moved = int(self._rowids[last])
                self._matrix[at] = self._matrix[last]
                self._rowids[at] = moved
                self._scope_ids[at] = self._scope_ids[last]
                self._positions[moved] = at
            self.count = last

    def top(self, query: Any, depth: int, scope: str) -> list[tuple[int, float]]:
        """The ``depth`` rows most similar to ``query`` in ``scope``: ``(rowid, similarity)``, best first."""
        np = self.np
        if self.count == 0:
            return []
        scores = self._matrix[: self.count] @ query
        if scope != "/":
            wanted = [sid for name, sid in self._scopes.items() if in_scope(name, scope)]
            if not wanted:
                return []
            mask = np.isin(self._scope_ids[: self.count], np.asarray(wanted, dtype=np.int32))
            scores = np.where(mask, scores, -np.inf)
        depth = min(depth, self.count)
        best = np.argpartition(-scores, depth - 1)[:depth] if depth < self.count else np.arange(self.count)
        best = best[np.argsort(-scores[best], kind="stable")]
        return [(int(self._rowids[i]), float(scores[i])) for i in best if scores[i] != -np.inf]

    def _reserve(self, size: int) -> None:
        if size <= len(self._rowids):
            return
        np = self.np
        capacity = max(size, 2 * len(self._rowids), 64)
        matrix = np.zeros((capacity, self.dimension), dtype=np.float32)
        matrix[: self.count] = self._matrix[: self.count]
        rowids = np.zeros(capacity, dtype=np.int64)
        rowids[: self.count] = self._rowids[: self.count]
        scope_ids = np.zeros(capacity, dtype=np.int32)
        scope_ids[: self.count] = self._scope_ids[: self.count]
        self._matrix, self._rowids, self._scope_ids = matrix, rowids, scope_ids

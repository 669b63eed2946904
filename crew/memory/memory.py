"""``Memory``: remember a text under a scope, recall the ones that match a query, best first.

A memory is a collection (``"memory"``) of a search file (``crew.search``): keywords always,
vectors from its embedder (offline WordLlama by default; ``embedder="none"`` for keywords only).
Scopes are paths: ``/crew/<crew>/<agent>`` for what a crew's agent did, and a recall in a scope
sees everything under it, so ``/crew/<crew>`` sees the whole crew's memory and ``/`` all of it.
Texts and metadata are scrubbed of secrets before they are stored (and before a remote embedder
sees them). Writes from many processes are safe (the search file's rules).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from crew.common import secrets
from crew.search import Doc, Embedder, SearchIndex, normalize_scope, resolve_embedder

DEFAULT_PATH = Path(".crew") / "memory.db"
COLLECTION = "memory"
_DEFAULT = "default"


@dataclass(frozen=True)
class MemoryRecord:
    """One remembered text: ``id``, ``content``, its ``scope`` (a path), ``metadata``, when it was remembered."""

    id: str
    content: str
    scope: str = "/"
    metadata: Mapping[str, Any] = field(default_factory=dict)
    created_at: float = 0.0

    @classmethod
    def from_doc(cls, doc: Doc) -> MemoryRecord:
        stored = dict(doc.metadata)
        return cls(
            id=doc.id,
            content=doc.text,
            scope=doc.scope,
            metadata=dict(stored.get("metadata") or {}),
            created_at=float(stored.get("created_at") or 0.0),
        )


class MemoryMatch(NamedTuple):
    """A recalled record and its score (higher is better); unpacks as ``record, score``."""

    record: MemoryRecord
    score: float


class Memory:
    """A memory in the SQLite file ``path`` (default ``.crew/memory.db``), embedded with ``embedder``.

    ``embedder``: ``"default"`` (offline WordLlama, from ``pip install 'crew-agents[memory]'``),
    ``"none"`` (keywords only), a litellm model name (``"openai/text-embedding-3-small"``), a
    mapping (``{"model": ..., "api_base": ...}``) or an embedder object. A file filled by another
    embedder is refused with the way out; ``reembed=True`` re-embeds it with this one.
    """

    def __init__(
        self,
        path: Path | str | None = None,
        embedder: str | Mapping[str, Any] | Embedder | None = _DEFAULT,
        *,
        reembed: bool = False,
        collection: str = COLLECTION,
    ) -> None:
        self.path = Path(path) if path is not None else DEFAULT_PATH
        self._spec = embedder
        chosen = None if embedder == _DEFAULT else embedder  # None, as in resolve_embedder, is the default
        self.embedder = resolve_embedder(chosen, where=f"memory {self.path}: embedder")
        self.index = SearchIndex(self.path, collection, self.embedder, reembed=reembed)

    def remember(
        self, content: str, scope: str = "/", metadata: Mapping[str, Any] | None = None, *, id: str | None = None
    ) -> MemoryRecord:
        """Store ``content`` under ``scope``; returns the record as stored (scrubbed of secrets)."""
        if not isinstance(content, str) or not content.strip():
            raise ValueError("remember() needs a non-empty text")
        record = MemoryRecord(
            id=id or uuid.uuid4().hex,
            content=secrets.scrub(content),
            scope=normalize_scope(scope),
            metadata=secrets.scrub_data(dict(metadata or {})),
            created_at=time.time(),
        )
        stored = {"metadata": dict(record.metadata), "created_at": record.created_at}
        self.index.add([Doc(record.id, record.content, record.scope, stored)])
        return record

    def recall(self, query: str, limit: int = 5, scope: str | None = None) -> list[MemoryMatch]:
        """The ``limit`` records under ``scope`` that best match ``query``, best first."""
        hits = self.index.search(secrets.scrub(query), limit=limit, scope=scope)
        return [MemoryMatch(MemoryRecord.from_doc(hit.doc), hit.score) for hit in hits]

    def get(self, id: str) -> MemoryRecord | None:
        doc = self.index.get(id)
        return None if doc is None else MemoryRecord.from_doc(doc)

    def forget(self, id: str) -> bool:
        """Remove the record ``id``; whether there was one."""
        if self.index.get(id) is None:
            return False
        self.index.delete([id])
        return True

    def reset(self, scope: str | None = None) -> int:
        """Remove every record under ``scope`` (everything by default); returns how many."""
        return self.index.clear(scope)

    def list_records(self, scope: str | None = None) -> list[MemoryRecord]:
        """Every record under ``scope``, oldest first."""
        return [MemoryRecord.from_doc(doc) for doc in self.index.docs(scope)]

    def close(self) -> None:
        self.index.close()

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its file (made absolute) and embedder: a crew sent to a Ray worker opens the
        same file there (SQLite's rules keep the writes of many processes apart)."""
        return (_reopened, (str(self.path.resolve()), self._spec, self.index.collection))

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        name = self.embedder.name if self.embedder else "none"
        return f"Memory(path={str(self.path)!r}, embedder={name!r})"


def _reopened(path: str, embedder: Any, collection: str) -> Memory:
    return Memory(path, embedder, collection=collection)

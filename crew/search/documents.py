"""The values a search index holds and returns: a document and a scored hit; scopes as paths."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Doc:
    """One searchable text: ``id`` unique in its collection, ``scope`` a path (``/crew/a/agent``).

    ``metadata`` is any JSON-serialisable mapping, returned as it was stored.
    """

    id: str
    text: str
    scope: str = "/"
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Hit:
    """A document a search found; ``score`` is its fused reciprocal-rank score (higher is better)."""

    doc: Doc
    score: float


def normalize_scope(scope: str | None) -> str:
    """``scope`` as a path: a leading ``/``, no trailing one (but the root), no empty parts.

    ``"crew/a/"`` and ``"/crew//a"`` both mean ``/crew/a``; ``None`` and ``""`` mean the root.
    """
    if not scope:
        return "/"
    if not isinstance(scope, str):
        raise TypeError(f"a scope is a path string such as '/crew/name', not {type(scope).__name__}")
    parts = [part for part in scope.split("/") if part]
    return "/" + "/".join(parts)


def in_scope(doc_scope: str, scope: str) -> bool:
    """Whether a document in ``doc_scope`` is under ``scope`` (both normalised)."""
    return scope == "/" or doc_scope == scope or doc_scope.startswith(scope + "/")

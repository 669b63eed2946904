"""Search over one SQLite file: keywords (FTS5, BM25) and vectors, fused, filtered by scope.

What memory and knowledge both stand on. A :class:`SearchIndex` is a named collection in one
SQLite file: each document's text is indexed by SQLite's own FTS5 (always on, no dependency),
and, when an :class:`Embedder` is given, its vector is stored beside it and searched exactly
(numpy, brute force). The two rankings are fused by reciprocal rank. Scopes are paths: a search
in ``/crew/a`` sees documents under it. ``resolve_embedder`` turns a spec (``None``, ``"none"``,
``"openai/text-embedding-3-small"``, a mapping) into an embedder.

numpy, WordLlama and litellm are imported only when vectors are used: ``import crew.search``
loads none of them.

May import: ``crew.errors``, ``crew.common`` and ``crew.models`` (litellm is loaded the one way
crew loads it, ``crew.models.litellm_loading``: its offline cost map, quiet logs and the HTTP client
that refuses a redirect to another origin).
"""

from __future__ import annotations

from crew.search.documents import Doc, Hit, normalize_scope
from crew.search.embedders import Embedder, resolve_embedder
from crew.search.index import SearchIndex

__all__ = ["Doc", "Embedder", "Hit", "SearchIndex", "normalize_scope", "resolve_embedder"]

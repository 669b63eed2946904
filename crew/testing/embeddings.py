"""The embeddings the test server answers with: hashed words, so similar texts are similar.

A real embedding model maps texts with shared meaning to near vectors; this one maps texts with
shared *words* to near vectors (each lower-cased word adds one to a dimension chosen by a stable
hash, then the vector is unit-normalised). That is enough for a test to see that a search over
the real HTTP path ranks a related text first, with no model and no network.
"""

from __future__ import annotations

import hashlib
import math
import re
from typing import Any

DIMENSION = 64
_WORD = re.compile(r"\w+")


def embed_text(text: str, dimension: int = DIMENSION) -> list[float]:
    """The unit vector of ``text``'s hashed words (all zeros but the first for a text of no words)."""
    vector = [0.0] * dimension
    for word in _WORD.findall(text.lower()):
        slot = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest(), "big") % dimension
        vector[slot] += 1.0
    norm = math.sqrt(sum(x * x for x in vector))
    if norm == 0:
        vector[0] = 1.0
        return vector
    return [x / norm for x in vector]


def embeddings_body(body: dict[str, Any], dimension: int = DIMENSION) -> dict[str, Any]:
    """The OpenAI ``/v1/embeddings`` answer to ``body`` (``input`` a string or a list of strings)."""
    inputs = body.get("input")
    texts = [inputs] if isinstance(inputs, str) else list(inputs or [])
    size = int(body.get("dimensions") or dimension)
    data = [{"object": "embedding", "index": i, "embedding": embed_text(str(t), size)} for i, t in enumerate(texts)]
    tokens = sum(len(_WORD.findall(str(t))) for t in texts)
    return {
        "object": "list",
        "data": data,
        "model": body.get("model") or "test-embedding",
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }

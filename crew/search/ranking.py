"""Two rankings made one: an FTS5 query from free text, and reciprocal-rank fusion.

A user's query is text, not FTS5 syntax (``"what's C++?"`` would be a syntax error): its words
(but the commonest English ones) are quoted and joined by AND or OR (``crew.search.keywords``
chooses which words).
Reciprocal-rank fusion (Cormack et al., 2009) adds ``1 / (k + rank)`` over the rankings a
document appears in: it needs no calibration between BM25 and cosine scores, and a document
both rankings like rises above one only a single ranking likes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

RRF_K = 60
"""The constant of reciprocal-rank fusion: the value its authors found best, and the usual one."""

MAX_TERMS = 64
"""Words of a query kept for keyword search: a pasted page must not become a 5,000-term query."""

_WORD = re.compile(r"\w+", re.UNICODE)

_COMMON = (
    "a an and are as at be but by for from had has have he her his i if in into is it its me my no not of on "
    "or our she so such than that the their them then there these they this to too was we were what when where "
    "which who whom why will with you your"
)
STOPWORDS = frozenset(_COMMON.split())
"""English words too common to rank by: in a small collection BM25 would still rank "on" and "a" matches."""


def query_words(text: str) -> list[str]:
    """The words of ``text`` a keyword search asks for: lower-cased, once each, in order, not
    the commonest English ones, at most ``MAX_TERMS``."""
    words: list[str] = []
    for word in _WORD.findall(text.lower()):
        if word not in words and word not in STOPWORDS:
            words.append(word)
        if len(words) == MAX_TERMS:
            break
    return words


def match_expression(words: Sequence[str], joiner: str = " OR ") -> str:
    """An FTS5 MATCH expression for ``words``: each quoted (so no word is FTS5 syntax), OR-ed, or
    AND-ed with ``joiner=" AND "``."""
    return joiner.join(f'"{word}"' for word in words)


def fuse(rankings: Sequence[Sequence[int]], limit: int) -> list[tuple[int, float]]:
    """The ``limit`` best ids over ``rankings`` (each best first) by reciprocal rank, best first.

    Ties keep the order of first appearance (the keyword ranking comes first), so results are
    the same from run to run.
    """
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking, start=1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (RRF_K + rank)
    ordered = sorted(scores.items(), key=lambda item: -item[1])
    return ordered[:limit]

"""The keyword ranking of a search: BM25 over the collection's FTS5 table, its cost bounded.

BM25 costs one score per document a query matches, each for every word of the query (FTS5
reads the word's positions and the document's length), so a query of words common in the
collection scores most of it: at 100k records, 50 to 100 ms. The ranking therefore first counts,
for each word, how many documents hold it (counting stops past ``BUDGET``, so it costs little),
and keeps the rarest words while the documents they match add up to at most ``BUDGET``, at most
``MAX_RANKED`` of them. The words left out are the commonest in the collection: those BM25 gives
the least weight (as a stop word, but found from the collection, not from a list). So one query
scores at most ``BUDGET`` documents whatever the collection's size.

Of the kept words, the documents holding every one come first, then those holding any. When
every word of the query is in more than ``BUDGET`` documents (none says much about a document),
the newest documents holding all of them come first, then the newest holding the query's first
word (counts stop past ``BUDGET``, so they do not tell which of such words is rarest).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from crew.search.ranking import match_expression, query_words

BUDGET = 5000
"""Documents one query's BM25 scores at most (the sum of its kept words' document counts).
Measured (``benchmarks/memory.py``): the keyword side of a recall takes 6 to 8 ms (p50) at 100k
records, where it took 54 ms unbounded; under 5,000 documents nothing is left out."""

MAX_RANKED = 12
"""Words of a query BM25 ranks by at most (the rarest ones): its cost grows with the words too."""


def keyword_ranking(conn: sqlite3.Connection, collection: str, query: str, depth: int, scope: str) -> list[int]:
    """The rowids of the ``depth`` documents under ``scope`` that best match ``query``, best first."""
    counts = {word: _count(conn, match_expression([word])) for word in query_words(query)}
    words = sorted((word for word, count in counts.items() if count), key=lambda word: counts[word])
    if not words:
        return []
    kept = selective(words, counts)
    search = _Search(conn, collection, depth, scope)
    if not kept:
        return search.common(words)
    found = search.ranked(match_expression(kept, " AND "))
    if len(found) >= depth or len(kept) == 1:
        return found
    return search.more(found, search.ranked(match_expression(kept)))


def selective(words: Sequence[str], counts: Mapping[str, int]) -> list[str]:
    """Of ``words`` (rarest first), those kept: while their document counts add up to at most
    ``BUDGET``, at most ``MAX_RANKED``."""
    kept: list[str] = []
    total = 0
    for word in words:
        total += counts[word]
        if total > BUDGET or len(kept) == MAX_RANKED:
            break
        kept.append(word)
    return kept


def _count(conn: sqlite3.Connection, match: str) -> int:
    """How many documents of the file match (``BUDGET + 1`` meaning more: the count stops there)."""
    sql = "SELECT count(*) FROM (SELECT rowid FROM search_fts WHERE search_fts MATCH ? LIMIT ?)"
    return int(conn.execute(sql, (match, BUDGET + 1)).fetchone()[0])


class _Search:
    """The queries of one ranking: a collection, a scope, how deep."""

    def __init__(self, conn: sqlite3.Connection, collection: str, depth: int, scope: str) -> None:
        self.conn = conn
        self.collection = collection
        self.depth = depth
        self.scope = scope

    def ranked(self, match: str) -> list[int]:
        return self._matches(match, "bm25(search_fts)")

    def newest(self, match: str) -> list[int]:
        return self._matches(match, "f.rowid DESC")

    def common(self, words: Sequence[str]) -> list[int]:
        """Every word is in more than ``BUDGET`` documents: the newest holding all of them, then
        the newest holding the first word (BM25 would score thousands of documents, and weighs
        such words least; newest first stops at ``depth``)."""
        found = self.newest(match_expression(words[:MAX_RANKED], " AND "))
        if len(found) >= self.depth or len(words) == 1:
            return found
        return self.more(found, self.newest(match_expression(words[:1])))

    def more(self, found: list[int], then: list[int]) -> list[int]:
        """``found``, then what ``then`` adds, ``depth`` in all."""
        seen = set(found)
        return found + [rowid for rowid in then if rowid not in seen][: self.depth - len(found)]

    def _matches(self, match: str, order: str) -> list[int]:
        sql = (
            "SELECT f.rowid FROM search_fts f JOIN search_docs d ON d.rowid = f.rowid "
            "WHERE search_fts MATCH ? AND d.collection = ?"
        )
        args: list[Any] = [match, self.collection]
        if self.scope != "/":
            sql += " AND (d.scope = ? OR substr(d.scope, 1, ?) = ?)"
            args += [self.scope, len(self.scope) + 1, self.scope + "/"]
        sql += f" ORDER BY {order} LIMIT ?"
        return [row[0] for row in self.conn.execute(sql, (*args, self.depth))]

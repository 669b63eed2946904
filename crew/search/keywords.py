"""The keyword ranking of a search: BM25 over the collection's FTS5 table, filtered by scope."""

from __future__ import annotations

import sqlite3
from typing import Any

from crew.search.ranking import fts_query


def keyword_ranking(conn: sqlite3.Connection, collection: str, query: str, depth: int, scope: str) -> list[int]:
    """BM25 over FTS5: the documents holding every word first, then those holding any.

    Ranking costs one BM25 score per matching document, so words common to most documents
    make the OR query score nearly all of them (a second at 100k). When at least ``depth``
    documents hold every word, they are the ranking and the OR query is not run.
    """
    every = fts_query(query, " AND ")
    if every is None:
        return []
    found = _matches(conn, collection, every, depth, scope)
    anyword = fts_query(query)
    if len(found) >= depth or anyword == every or anyword is None:
        return found
    seen = set(found)
    more = [rowid for rowid in _matches(conn, collection, anyword, depth, scope) if rowid not in seen]
    return found + more[: depth - len(found)]


def _matches(conn: sqlite3.Connection, collection: str, match: str, depth: int, scope: str) -> list[int]:
    sql = (
        "SELECT f.rowid FROM search_fts f JOIN search_docs d ON d.rowid = f.rowid "
        "WHERE search_fts MATCH ? AND d.collection = ?"
    )
    args: list[Any] = [match, collection]
    if scope != "/":
        sql += " AND (d.scope = ? OR substr(d.scope, 1, ?) = ?)"
        args += [scope, len(scope) + 1, scope + "/"]
    sql += " ORDER BY bm25(search_fts) LIMIT ?"
    return [row[0] for row in conn.execute(sql, (*args, depth))]

"""The tables of a search file, and the check that a file is one this crew can use.

Every table is prefixed ``search_`` so a search file may share a SQLite file with other
tables. ``search_meta`` says which format and version wrote the file: a newer one is refused
(never half-read), an older one is migrated here when a version 2 exists.

A collection's ``revision`` grows by one with every write, so a process holding the vectors in
memory sees, by one read, whether another process changed them.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from crew.errors import SearchIndexError

FORMAT = "crew-search"
VERSION = 1

_TABLES = """
CREATE TABLE IF NOT EXISTS search_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS search_collections (
    name TEXT PRIMARY KEY,
    embedder TEXT,
    dimension INTEGER,
    revision INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS search_docs (
    rowid INTEGER PRIMARY KEY,
    collection TEXT NOT NULL,
    id TEXT NOT NULL,
    text TEXT NOT NULL,
    scope TEXT NOT NULL,
    metadata TEXT NOT NULL,
    vector BLOB,
    UNIQUE (collection, id)
);
CREATE INDEX IF NOT EXISTS search_docs_scope ON search_docs (collection, scope);
CREATE VIRTUAL TABLE IF NOT EXISTS search_fts USING fts5 (text, tokenize = 'porter unicode61 remove_diacritics 2');
"""


def setup(conn: sqlite3.Connection, path: Path) -> None:
    """Create the tables (once, whoever comes first) or check the file's format and version."""
    _check(conn, path)
    try:
        conn.executescript(
            f"BEGIN IMMEDIATE;{_TABLES}"
            f"INSERT OR IGNORE INTO search_meta VALUES ('format', '{FORMAT}'), ('version', '{VERSION}');"
            "COMMIT;"
        )
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _check(conn: sqlite3.Connection, path: Path) -> None:
    has_meta = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'search_meta'").fetchone()
    if not has_meta:
        return
    rows = dict(conn.execute("SELECT key, value FROM search_meta").fetchall())
    if rows.get("format", FORMAT) != FORMAT:
        raise SearchIndexError(f"{path}: not a crew search file (format {rows['format']!r})")
    version = int(rows.get("version", VERSION))
    if version > VERSION:
        raise SearchIndexError(
            f"{path}: written by a newer crew (search format {version}; this crew reads up to {VERSION}): "
            "upgrade crew, or give this crew another file"
        )

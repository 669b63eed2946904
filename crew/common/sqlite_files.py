"""Opening one SQLite file from many processes at once: the run store and the tool cache.

SQLite's busy timeout makes a second writer wait its turn, but it does not cover every
step of two processes creating one file together: while one switches a new file to WAL
(or recovers its WAL), SQLite can answer another's statement with "database is locked"
without calling the busy handler. ``open_shared`` retries the set-up on exactly those
answers, with a short back-off, until a deadline; any other error is final.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

SETTLE_SECONDS = 30.0
"""How long opening waits out other processes opening or migrating the same file."""


def open_shared(path: Path, setup: Callable[[sqlite3.Connection], None]) -> sqlite3.Connection:
    """Connect to ``path`` in WAL mode and run ``setup`` (tables, migrations) on it.

    The connection is in autocommit mode (``isolation_level=None``: callers write their own
    ``BEGIN IMMEDIATE``), usable from any thread (callers hold their own lock), with a 30 s
    busy timeout. On failure the connection is closed and the error propagates.
    """
    conn = sqlite3.connect(path, timeout=SETTLE_SECONDS, isolation_level=None, check_same_thread=False)
    try:
        _settle(conn, setup)
    except BaseException:
        conn.close()
        raise
    return conn


def _settle(conn: sqlite3.Connection, setup: Callable[[sqlite3.Connection], None]) -> None:
    deadline = time.monotonic() + SETTLE_SECONDS
    pause = 0.005
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            setup(conn)
            return
        except sqlite3.OperationalError as exc:
            if not is_lock(exc) or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.2)


def is_lock(exc: sqlite3.Error) -> bool:
    """Whether ``exc`` is SQLite saying another connection holds the file (worth waiting out)."""
    text = str(exc)
    return "locked" in text or "busy" in text

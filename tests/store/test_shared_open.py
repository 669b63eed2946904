"""Many processes opening one SQLite file at once: the run store and the tool cache."""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from crew import RunStore
from crew.sqlite_files import open_shared
from crew.tools.cache import SQLiteCache


def _open_store(path: str) -> str | None:
    try:
        RunStore(path).close()
    except Exception as exc:  # noqa: BLE001 - the parent reports what any child met
        return repr(exc)
    return None


def _open_cache(path: str) -> str | None:
    try:
        cache = SQLiteCache(path)
        cache.set("k", path)
        cache.close()
    except Exception as exc:  # noqa: BLE001 - the parent reports what any child met
        return repr(exc)
    return None


@pytest.mark.parametrize("opener", [_open_store, _open_cache], ids=["run store", "tool cache"])
def test_processes_creating_one_file_together_all_open_it(tmp_path: Path, opener) -> None:
    context = multiprocessing.get_context("spawn")
    with context.Pool(6) as pool:
        paths = [str(tmp_path / f"round{r}" / "runs.db") for r in range(3) for _ in range(6)]
        failures = [error for error in pool.map(opener, paths) if error]
    assert failures == []


def test_a_lock_sqlite_did_not_wait_for_is_retried_until_the_setup_succeeds(tmp_path: Path) -> None:
    calls: list[int] = []

    def setup(conn: sqlite3.Connection) -> None:
        calls.append(1)
        if len(calls) < 3:
            raise sqlite3.OperationalError("database is locked")
        conn.execute("CREATE TABLE t (x)")

    conn = open_shared(tmp_path / "db.sqlite", setup)
    try:
        assert len(calls) == 3
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("SELECT count(*) FROM t").fetchone()[0] == 0
    finally:
        conn.close()


def test_any_other_sqlite_error_is_final_at_once(tmp_path: Path) -> None:
    calls: list[int] = []

    def setup(conn: sqlite3.Connection) -> None:
        calls.append(1)
        conn.execute("SELECT * FROM missing")

    with pytest.raises(sqlite3.OperationalError, match="no such table: missing"):
        open_shared(tmp_path / "db.sqlite", setup)
    assert calls == [1]

"""Many processes opening one SQLite file at once: the run store and the tool cache."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from crew.common.sqlite_files import open_shared

_OPENERS = {
    "run store": "from crew import RunStore; RunStore(path).close()",
    "tool cache": "from crew.tools.cache import SQLiteCache; c = SQLiteCache(path); c.set('k', path); c.close()",
}


@pytest.mark.parametrize("opener", list(_OPENERS))
def test_processes_creating_one_file_together_all_open_it(tmp_path: Path, opener: str) -> None:
    code = f"import sys; path = sys.argv[1]; {_OPENERS[opener]}"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    for round_ in range(3):
        path = str(tmp_path / f"round{round_}" / "shared.db")
        procs = [
            subprocess.Popen([sys.executable, "-c", code, path], stderr=subprocess.PIPE, text=True, env=env)
            for _ in range(6)
        ]
        errors = [proc.communicate(timeout=60)[1] for proc in procs]
        assert [proc.returncode for proc in procs] == [0] * 6, errors


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


_OTHER_WRITER = (
    "import sqlite3, sys\n"
    "conn = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
    "for i in range(10):\n"
    "    conn.execute('INSERT INTO probe VALUES (?, ?)', ('other', int(sys.argv[2]) * 10 + i))\n"
    "conn.close()\n"
)


def test_two_stores_on_one_file_in_one_process_lose_no_write(tmp_path: Path) -> None:
    """Opening a second store must not drop the POSIX locks the first one's connection holds.

    Closing any descriptor of a file drops every lock this process holds on it; another process
    closing its connection then thought itself the last one, checkpointed and deleted the WAL
    that this process's connections were still writing to, and their later writes were lost.
    """
    from concurrent.futures import ThreadPoolExecutor

    from crew.store.store import RunStore

    path = tmp_path / "runs.db"
    first = RunStore(path)
    first.execute("CREATE TABLE probe (writer TEXT, n INTEGER)")
    second = RunStore(path)
    stores = {"first": first, "second": second}

    def write(name: str, round_: int) -> None:
        for i in range(25):
            stores[name].execute("INSERT INTO probe VALUES (?, ?)", (name, round_ * 100 + i))
        RunStore(path).close()  # a store opened and closed meanwhile in this process

    with ThreadPoolExecutor(max_workers=4) as pool:
        for round_ in range(3):
            list(pool.map(lambda job: write(*job), [("first", round_), ("second", round_)] * 2))
            subprocess.run([sys.executable, "-c", _OTHER_WRITER, str(path), str(round_)], check=True, timeout=60)
    first.close()
    second.close()
    with sqlite3.connect(path) as conn:
        counts = dict(conn.execute("SELECT writer, count(*) FROM probe GROUP BY writer").fetchall())
    assert counts == {"first": 150, "second": 150, "other": 30}

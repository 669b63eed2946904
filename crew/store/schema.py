"""The run store's tables, their version, and the steps that bring an older file up to date.

``PRAGMA user_version`` holds the schema version; ``MIGRATIONS[n]`` turns version ``n``
into ``n + 1``, so a later crew opens any earlier store (in one transaction, so a
crash mid-migration leaves the file as it was). A file with tables of its own that are
not ours is refused rather than written into: the path was probably a mistake.
The persistent tool cache (``SQLiteCache``, table ``tool_cache``) may share the file.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

from crew.common.sqlite_files import open_shared
from crew.errors import StoreError

APP = "crew-run-store"
"""What ``crew_meta.app`` says in a file this module made."""

_V1 = """
CREATE TABLE IF NOT EXISTS crew_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    crew TEXT NOT NULL,
    crew_hash TEXT NOT NULL,
    folder TEXT,
    inputs TEXT NOT NULL,
    settings TEXT NOT NULL,
    status TEXT NOT NULL,
    mode TEXT NOT NULL,
    continued_from TEXT,
    from_task TEXT,
    started_at REAL NOT NULL,
    finished_at REAL,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    total_tokens INTEGER NOT NULL DEFAULT 0,
    requests INTEGER NOT NULL DEFAULT 0,
    cost REAL NOT NULL DEFAULT 0,
    error TEXT,
    pid INTEGER,
    host TEXT
);
CREATE INDEX IF NOT EXISTS runs_started ON runs (started_at);
CREATE TABLE IF NOT EXISTS tasks (
    run_id TEXT NOT NULL,
    name TEXT NOT NULL,
    position INTEGER NOT NULL,
    agent TEXT,
    def_hash TEXT NOT NULL,
    status TEXT NOT NULL,
    reused INTEGER NOT NULL DEFAULT 0,
    output TEXT,
    error TEXT,
    started_at REAL,
    finished_at REAL,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    total_tokens INTEGER NOT NULL DEFAULT 0,
    requests INTEGER NOT NULL DEFAULT 0,
    cost REAL NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, name)
);
CREATE TABLE IF NOT EXISTS model_calls (
    id INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL,
    task TEXT,
    agent TEXT,
    model TEXT,
    status TEXT NOT NULL,
    started_at REAL NOT NULL,
    latency REAL NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 1,
    message_count INTEGER NOT NULL DEFAULT 0,
    message_chars INTEGER NOT NULL DEFAULT 0,
    messages TEXT,
    reply TEXT,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    total_tokens INTEGER NOT NULL DEFAULT 0,
    cost REAL NOT NULL DEFAULT 0,
    finish_reason TEXT,
    error TEXT
);
CREATE INDEX IF NOT EXISTS model_calls_run ON model_calls (run_id);
CREATE TABLE IF NOT EXISTS tool_calls (
    id INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL,
    task TEXT,
    agent TEXT,
    tool TEXT NOT NULL,
    status TEXT NOT NULL,
    cached INTEGER NOT NULL DEFAULT 0,
    refused INTEGER NOT NULL DEFAULT 0,
    started_at REAL NOT NULL,
    duration REAL NOT NULL DEFAULT 0,
    args TEXT,
    result TEXT
);
CREATE INDEX IF NOT EXISTS tool_calls_run ON tool_calls (run_id);
"""

Migration = Callable[[sqlite3.Connection], None]


def _create_v1(conn: sqlite3.Connection) -> None:
    for statement in _V1.split(";"):
        if statement.strip():
            conn.execute(statement)
    conn.execute("INSERT OR REPLACE INTO crew_meta (key, value) VALUES ('app', ?)", (APP,))


_V2 = """
CREATE TABLE IF NOT EXISTS approvals (
    run_id TEXT NOT NULL,
    call_id TEXT NOT NULL,
    task TEXT NOT NULL,
    agent TEXT,
    tool TEXT NOT NULL,
    args TEXT,
    checkpoint TEXT NOT NULL,
    decision TEXT,
    reason TEXT,
    arguments TEXT,
    decided_at REAL,
    PRIMARY KEY (run_id, call_id)
)
"""


def _approvals_v2(conn: sqlite3.Connection) -> None:
    """Tool calls a paused run waits on, with where their task stopped, and the decisions made."""
    conn.execute(_V2)


_V3 = """
CREATE TABLE approvals (
    run_id TEXT NOT NULL,
    call_id TEXT NOT NULL,
    task TEXT NOT NULL,
    agent TEXT,
    tool TEXT NOT NULL,
    args TEXT,
    checkpoint TEXT NOT NULL,
    decision TEXT,
    reason TEXT,
    arguments TEXT,
    decided_at REAL,
    PRIMARY KEY (run_id, task, call_id)
)
"""

_APPROVAL_COLUMNS = "run_id, call_id, task, agent, tool, args, checkpoint, decision, reason, arguments, decided_at"


def _approvals_by_task_v3(conn: sqlite3.Connection) -> None:
    """A waiting call is keyed by its task too: calls of two tasks of one run may share an id.

    Ids are only unique within a conversation (a model may number its calls ``call_0``,
    ``call_1`` in each), and keyed by ``(run_id, call_id)`` the second task's row replaced
    the first's, losing where that task had stopped. SQLite cannot change a primary key in
    place: the table is rebuilt, its rows kept.
    """
    conn.execute("ALTER TABLE approvals RENAME TO approvals_v2")
    conn.execute(_V3)
    conn.execute(f"INSERT INTO approvals ({_APPROVAL_COLUMNS}) SELECT {_APPROVAL_COLUMNS} FROM approvals_v2")
    conn.execute("DROP TABLE approvals_v2")


def _continued_by_v4(conn: sqlite3.Connection) -> None:
    """A run names the run that continued it, claimed in one conditional write.

    Two ``crew resume`` of one paused run at once each checked that nobody had continued
    it, then both ran its approved calls. The claim (``UPDATE runs SET continued_by = ?
    WHERE id = ? AND continued_by IS NULL``, in the transaction that records the new run)
    lets only one of them through.
    """
    conn.execute("ALTER TABLE runs ADD COLUMN continued_by TEXT")


def _startup_v5(conn: sqlite3.Connection) -> None:
    """What a run's start-up did before its first task: each MCP server opened, how long it took, or why it failed."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS startup (id INTEGER PRIMARY KEY, run_id TEXT NOT NULL, kind TEXT NOT NULL, "
        "name TEXT NOT NULL, transport TEXT, started_at REAL NOT NULL, duration REAL NOT NULL DEFAULT 0, "
        "tools INTEGER NOT NULL DEFAULT 0, error TEXT)"
    )
    conn.execute("CREATE INDEX IF NOT EXISTS startup_run ON startup (run_id)")


_FLOW_STEPS = """
CREATE TABLE flow_steps (
    run_id TEXT NOT NULL,
    step TEXT NOT NULL,
    number INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    status TEXT NOT NULL,
    reused INTEGER NOT NULL DEFAULT 0,
    input TEXT,
    output TEXT,
    state TEXT,
    error TEXT,
    started_at REAL,
    finished_at REAL,
    PRIMARY KEY (run_id, step, number)
)
"""


def _flows_v6(conn: sqlite3.Connection) -> None:
    """Flow runs: a run is a crew's or a flow's (``kind``); a crew a flow's step kicked off names that
    run and step (``parent_run``, ``parent_step``); each run of each step of a flow is a row of
    ``flow_steps`` (the ``number``-th run of that step), with its input, output and the state after it."""
    conn.execute("ALTER TABLE runs ADD COLUMN kind TEXT NOT NULL DEFAULT 'crew'")
    conn.execute("ALTER TABLE runs ADD COLUMN parent_run TEXT")
    conn.execute("ALTER TABLE runs ADD COLUMN parent_step TEXT")
    conn.execute("CREATE INDEX runs_parent ON runs (parent_run)")
    conn.execute(_FLOW_STEPS)


_TASK_CONTEXT = """
CREATE TABLE IF NOT EXISTS task_context (
    run_id TEXT NOT NULL,
    task TEXT NOT NULL,
    position INTEGER NOT NULL,
    provider TEXT NOT NULL,
    title TEXT NOT NULL,
    items TEXT NOT NULL,
    replayed INTEGER NOT NULL DEFAULT 0,
    recorded_at REAL NOT NULL,
    PRIMARY KEY (run_id, task, position)
)
"""


def _task_context_v7(conn: sqlite3.Connection) -> None:
    """What context providers (memory, knowledge) gave each task's prompt: each item's id, score,
    source and text, so ``crew show`` says what a task recalled and a replay recalls the same."""
    conn.execute(_TASK_CONTEXT)


MIGRATIONS: list[Migration] = [
    _create_v1,
    _approvals_v2,
    _approvals_by_task_v3,
    _continued_by_v4,
    _startup_v5,
    _flows_v6,
    _task_context_v7,
]
"""``MIGRATIONS[n]`` upgrades a store of version ``n`` to ``n + 1`` (0 is an empty file)."""

_SHAREABLE = frozenset({"tool_cache", "sqlite_sequence"})
"""Tables of other crew parts that may live in the same file."""

_HINT = "move it away, or give another file with --store (the CLI's --no-store runs without one)"


def current_version() -> int:
    return len(MIGRATIONS)


def connect(path: Path) -> sqlite3.Connection:
    """Open (creating or upgrading) the store at ``path``; ``StoreError`` names the file when it cannot be used.

    WAL lets readers (``crew runs`` in another terminal) proceed while a run writes;
    ``timeout`` is SQLite's busy timeout, so a second process waits its turn to write
    instead of failing with "database is locked"; ``synchronous=NORMAL`` in WAL mode keeps
    every committed row through a crash of the process (only a power cut can lose the last ones).

    SQLite opens the file first, and only its refusal ("file is not a database") has the header
    read (``_not_a_database``): opening and closing another descriptor on a live store would drop
    the POSIX locks this process's connections hold on it (closing any descriptor of a file drops
    them all), and another process could then checkpoint and delete the WAL under them.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"cannot create the folder of the run store {path}: {exc.strerror or exc}") from None

    def setup(conn: sqlite3.Connection) -> None:
        conn.execute("PRAGMA synchronous=NORMAL")
        _upgrade(conn, path)

    try:
        return open_shared(path, setup)
    except StoreError:
        raise
    except sqlite3.Error as exc:
        if _not_sqlite(exc):
            raise _not_a_database(path, exc) from None
        if _denied(exc) and path.is_file():
            return open_read_only(path)  # it can still be listed and shown
        raise StoreError(f"{path} is not a usable crew run store ({exc}); {_HINT}") from None


def _denied(exc: sqlite3.Error) -> bool:
    """SQLite refusing to write (a read-only file, folder or mount), not a broken file."""
    text = str(exc)
    return "readonly" in text or "read-only" in text or "unable to open" in text


def open_read_only(path: Path) -> sqlite3.Connection:
    """The store opened for reading only: a file crew may not write, or in a folder it may not write.

    A WAL database read-only needs its ``-shm`` file; where even that cannot be made, the
    file is read as immutable (nothing else can be writing where nobody may write).
    """
    uri = path.resolve().as_uri()
    last: sqlite3.Error | None = None
    for mode in ("mode=ro", "immutable=1"):
        try:
            conn = sqlite3.connect(f"{uri}?{mode}", uri=True, isolation_level=None, check_same_thread=False)
            version = conn.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.Error as exc:
            last = exc
            continue
        if version != current_version():
            conn.close()
            raise StoreError(f"{path} is read-only and needs an upgrade (store version {version}): {_HINT}")
        _check_ours(conn, path)
        conn.execute("PRAGMA query_only = 1")  # how RunStore tells it may not write
        return conn
    raise StoreError(f"cannot read the run store {path} ({last}); {_HINT}")


def _not_sqlite(exc: sqlite3.Error) -> bool:
    """SQLite finding no database in the file: not SQLite at all, or its first page broken."""
    return getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_NOTADB or "file is not a database" in str(exc)


def _not_a_database(path: Path, exc: sqlite3.Error) -> StoreError:
    """The located error for a file SQLite refused: not SQLite at all, or an SQLite file it cannot read.

    The header is read only now, after SQLite's refusal: no connection of this process can be
    working on a file that is no database, so closing this descriptor drops no lock anyone relies on.
    """
    try:
        with open(path, "rb") as fh:
            head = fh.read(16)
    except OSError as err:
        return StoreError(f"cannot read the run store {path}: {err.strerror or err}")
    if head != b"SQLite format 3\x00":
        return StoreError(f"{path} is not a crew run store (not an SQLite database); {_HINT}")
    return StoreError(f"{path} is not a usable crew run store ({exc}); {_HINT}")


def _upgrade(conn: sqlite3.Connection, path: Path) -> None:
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version == current_version():
        _check_ours(conn, path)
        return
    if version > current_version():
        raise StoreError(
            f"{path} was written by a newer crew (store version {version}; this crew reads up to "
            f"{current_version()}): upgrade crew, or {_HINT}"
        )
    conn.execute("BEGIN IMMEDIATE")  # one process migrates; the others wait, then see it done
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version == 0:
            foreign = _tables(conn) - _SHAREABLE
            if foreign:
                names = ", ".join(sorted(foreign)[:5])
                raise StoreError(f"{path} is not a crew run store (it holds other tables: {names}); {_HINT}")
        elif version < current_version():
            _check_ours(conn, path)
        for step in MIGRATIONS[version:]:
            step(conn)
        conn.execute(f"PRAGMA user_version = {current_version()}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:  # SQLite rolls back by itself on a full disk: ROLLBACK would hide why
            conn.execute("ROLLBACK")
        raise


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _check_ours(conn: sqlite3.Connection, path: Path) -> None:
    try:
        row = conn.execute("SELECT value FROM crew_meta WHERE key = 'app'").fetchone()
    except sqlite3.Error:
        row = None
    if row is None or row[0] != APP:
        raise StoreError(f"{path} is not a crew run store (no crew metadata in it); {_HINT}")


def host() -> str:
    """This machine's name, to tell whether a run marked as running can still be alive."""
    try:
        return os.uname().nodename
    except AttributeError:  # pragma: no cover - not on POSIX
        import socket

        return socket.gethostname()

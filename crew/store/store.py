"""``RunStore``: one SQLite file of runs, their tasks and their model and tool calls.

One connection per store object, behind a lock. Writes are short ``BEGIN IMMEDIATE``
transactions, so concurrent tasks of a run and two processes on the same file take
turns at SQLite's write lock instead of failing with "database is locked" (the busy
timeout makes them wait). The rows of model and tool calls are queued and committed
together a moment later (a commit costs far more than a row); a finished task's output
is committed at once, with whatever is queued, before its dependants start. A crash
loses at most the call rows of the last fraction of a second, never a finished task.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from collections.abc import Iterable, Sequence
from contextvars import ContextVar
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crew.common.usage import Usage
from crew.errors import StoreError
from crew.store.records import (
    RunDetail,
    StoredContext,
    StoredModelCall,
    StoredRun,
    StoredStartup,
    StoredStep,
    StoredTask,
    StoredToolCall,
)
from crew.store.schema import connect, host

if TYPE_CHECKING:
    import sqlite3

    from crew.tasks.output import TaskOutput

FLUSH_ROWS = 200
FLUSH_SECONDS = 0.2
"""Queued call rows are committed once this many wait, or the oldest is this old."""

DEFAULT_MAX_TEXT = 20_000
"""Characters kept of a model call's messages, a reply, a tool's arguments or result."""

_USAGE = ("prompt_tokens", "completion_tokens", "total_tokens", "requests", "cost")
_WRITABLE = "give a writable file with --store, or run with --no-store"

ambient: ContextVar[RunStore | None] = ContextVar("crew_ambient_store", default=None)
"""The store of the flow run whose step is running here: a crew kicked off in the step without a
store of its own is recorded there, as a child of the flow run (``crew.run.kickoff`` reads it)."""

recording: set[str] = set()
"""The runs this process is recording now: a "running" row with this process's pid is alive only
if its run is here (in a container crew is PID 1 every time, so the pid alone says nothing)."""


class RunStore:
    """The run store at ``path`` (created, or upgraded from an older crew, on open).

    ``max_text`` caps every long text kept per call (messages, replies, tool results);
    task outputs are kept whole, since resume and replay hand them to later tasks.
    """

    def __init__(self, path: str | PathLike[str], *, max_text: int = DEFAULT_MAX_TEXT) -> None:
        self.path = Path(path)
        self.max_text = max_text
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection = connect(self.path)
        self.read_only = self._conn.execute("PRAGMA query_only").fetchone()[0] == 1  # set by schema.open_read_only
        self._pending: list[tuple[str, Sequence[Any]]] = []
        self._since = 0.0
        self._commits: dict[asyncio.AbstractEventLoop, asyncio.Future[None]] = {}  # see committed()
        self.host = host()

    def __repr__(self) -> str:
        return f"RunStore({str(self.path)!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its path (a crew shipped to another process opens the same file there)."""
        return (RunStore, (str(self.path),), {"max_text": self.max_text})

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.max_text = state["max_text"]

    def close(self) -> None:
        self.flush()
        with self._lock:
            self._conn.close()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing (the recorder's side) ---------------------------------------------------

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        """One statement, committed before this returns."""
        with self._lock:
            self._conn.execute(sql, params)

    def submit(self, sql: str, params: Sequence[Any] = ()) -> None:
        """Queue a write; queued writes are committed together, in one short transaction.

        A commit costs far more than a row, so the rows of a run's calls wait (at most
        ``FLUSH_SECONDS`` or ``FLUSH_ROWS``, or until ``flush``) and go in together.
        """
        self.submit_all([(sql, params)])

    def submit_all(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> None:
        """Queue several writes that are committed together (never split between two commits)."""
        with self._lock:
            if not self._pending:
                self._since = time.monotonic()
            self._pending.extend(statements)
            due = len(self._pending) >= FLUSH_ROWS or time.monotonic() - self._since >= FLUSH_SECONDS
        if due:
            self.flush()

    def flush(self) -> None:
        """Commit every queued write now (a finished task's output, before its dependants start)."""
        with self._lock:
            pending, self._pending = self._pending, []
        if pending:
            self.transaction(pending)

    async def committed(self) -> None:
        """Every write queued so far committed, in one commit shared by this loop turn's callers.

        What ``flush`` promises, for the coroutines of many runs at once: each kickoff of a
        batch of thousands flushed its start, each finished task and its end on its own, three
        commits a kickoff. Here every caller of one turn of the event loop waits on the same
        commit, made at the start of the next turn; it fails for all of them when it fails.
        """
        loop = asyncio.get_running_loop()
        with self._lock:
            commit = self._commits.get(loop)
            if commit is None:
                commit = self._commits[loop] = loop.create_future()
                loop.call_soon(self._commit, loop, commit)
        await asyncio.shield(commit)

    def _commit(self, loop: asyncio.AbstractEventLoop, commit: asyncio.Future[None]) -> None:
        with self._lock:
            if self._commits.get(loop) is commit:
                del self._commits[loop]
        try:
            self.flush()
        except Exception as exc:  # noqa: BLE001 - handed to every caller waiting on this commit
            commit.set_exception(exc)
            commit.exception()  # retrieved: a caller cancelled meanwhile must not make asyncio warn
        else:
            commit.set_result(None)

    def transaction(
        self, statements: Iterable[tuple[str, Sequence[Any]]], *, only_if: tuple[str, Sequence[Any]] | None = None
    ) -> bool:
        """Several statements committed together (or not at all); True when they were.

        ``only_if`` is a conditional write made first, in the same transaction: when it changes
        no row (another thread or process got there first), nothing is written and the answer
        is False. ``BEGIN IMMEDIATE`` holds the file's write lock from the start, so no other
        writer comes between the condition and the statements.
        """
        if self.read_only:
            raise StoreError(f"the run store {self.path} is read-only: it can be listed, not written ({_WRITABLE})")
        with self._lock:
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                if only_if is not None and conn.execute(*only_if).rowcount == 0:
                    conn.execute("ROLLBACK")
                    return False
                for sql, params in statements:
                    conn.execute(sql, params)
                conn.execute("COMMIT")
                return True
            except BaseException:
                if conn.in_transaction:  # a full disk rolls back by itself: ROLLBACK would raise instead
                    conn.execute("ROLLBACK")
                raise

    def cap(self, text: str | None) -> str | None:
        if text is None or len(text) <= self.max_text:
            return text
        return text[: self.max_text] + f"…[{len(text) - self.max_text} more characters not kept]"

    # -- reading ---------------------------------------------------------------------------

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        self.flush()  # this process reads its own writes
        with self._lock:
            cursor = self._conn.execute(sql, params)
            names = [d[0] for d in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def runs(self, limit: int | None = None, *, crew_hash: str | None = None) -> list[StoredRun]:
        """Runs, newest first (``crew_hash``: only runs of that crew definition)."""
        where, params = ("WHERE crew_hash = ?", [crew_hash]) if crew_hash else ("", [])
        sql = f"SELECT * FROM runs {where} ORDER BY started_at DESC, rowid DESC"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [self._run(row) for row in self._rows(sql, params)]

    def run(self, ref: str | None = None) -> StoredRun:
        """A run by id or unique id prefix; the latest run when ``ref`` is None."""
        if ref is None:
            runs = self.runs(limit=1)
            if not runs:
                raise StoreError(f"no runs recorded in {self.path} yet")
            return runs[0]
        rows = self._rows("SELECT * FROM runs WHERE id LIKE ? ORDER BY started_at DESC", [_like_prefix(ref)])
        exact = [r for r in rows if r["id"] == ref]
        if exact:
            return self._run(exact[0])
        if len(rows) == 1:
            return self._run(rows[0])
        if not rows:
            raise StoreError(f"no run '{ref}' in {self.path} (`crew runs` lists them)")
        raise StoreError(f"run '{ref}' is ambiguous in {self.path}: {', '.join(r['id'][:12] for r in rows[:5])}")

    def latest_unfinished(self, folder: str | None = None) -> StoredRun:
        """The newest run that did not finish, is not still running, and that no later run has continued
        or overtaken: a run that continued the same work and finished after it started (two resumes of
        one failed run, the second done) leaves nothing to resume."""
        rows = self._rows("SELECT id, continued_from, status, started_at FROM runs")
        parent = {r["id"]: r["continued_from"] for r in rows}
        continued = set(parent.values())

        def origin(run_id: str) -> str:
            seen: set[str] = set()
            while parent.get(run_id) and run_id not in seen:  # a store edited by hand may hold a loop
                seen.add(run_id)
                run_id = parent[run_id]  # type: ignore[assignment]
            return run_id

        finished: dict[str, float] = {}  # origin -> when the latest finished run of that work started
        for r in rows:
            if r["status"] == "done":
                root = origin(r["id"])
                finished[root] = max(finished.get(root, r["started_at"]), r["started_at"])
        for run in self.runs():
            if folder is not None and run.folder not in (None, folder):
                continue
            if run.status in ("done", "running") or run.id in continued:
                continue  # "running" here is a live process: resuming it would do its work twice
            if run.parent_run is not None:
                continue  # a crew a flow's step ran: resuming the flow run redoes that step
            if finished.get(origin(run.id), float("-inf")) > run.started_at:
                continue
            return run
        raise StoreError(f"no unfinished run in {self.path} to resume (`crew runs` lists the runs)")

    def tasks(self, run_id: str) -> list[StoredTask]:
        rows = self._rows("SELECT * FROM tasks WHERE run_id = ? ORDER BY position", [run_id])
        out = []
        for row in rows:
            row["output"] = json.loads(row["output"]) if row["output"] else None
            row["usage"] = _usage(row)
            row["reused"] = bool(row["reused"])
            out.append(StoredTask.model_validate(row))
        return out

    def model_calls(self, run_id: str) -> list[StoredModelCall]:
        rows = self._rows("SELECT * FROM model_calls WHERE run_id = ? ORDER BY started_at, id", [run_id])
        return [StoredModelCall.model_validate({**row, "usage": _usage(row)}) for row in rows]

    def tool_calls(self, run_id: str) -> list[StoredToolCall]:
        rows = self._rows("SELECT * FROM tool_calls WHERE run_id = ? ORDER BY started_at, id", [run_id])
        for row in rows:
            row["args"] = _loads(row["args"])
            row["cached"], row["refused"] = bool(row["cached"]), bool(row["refused"])
        return [StoredToolCall.model_validate(row) for row in rows]

    def startup(self, run_id: str) -> list[StoredStartup]:
        rows = self._rows("SELECT * FROM startup WHERE run_id = ? ORDER BY started_at, id", [run_id])
        return [StoredStartup.model_validate(row) for row in rows]

    def steps(self, run_id: str) -> list[StoredStep]:
        """A flow run's step runs, in the order they started."""
        rows = self._rows("SELECT * FROM flow_steps WHERE run_id = ? ORDER BY seq", [run_id])
        for row in rows:
            row["input"], row["output"], row["state"] = (
                _loads(row["input"]),
                _loads(row["output"]),
                _loads(row["state"]),
            )
            row["reused"] = bool(row["reused"])
        return [StoredStep.model_validate(row) for row in rows]

    def children(self, run_id: str) -> list[StoredRun]:
        """The crews a flow run's steps kicked off, in the order they started."""
        rows = self._rows("SELECT * FROM runs WHERE parent_run = ? ORDER BY started_at, rowid", [run_id])
        return [self._run(row) for row in rows]

    def context(self, run_id: str) -> list[StoredContext]:
        """What context providers gave the run's tasks (memory's recalls), in the order recorded."""
        rows = self._rows("SELECT * FROM task_context WHERE run_id = ? ORDER BY recorded_at, task, position", [run_id])
        for row in rows:
            row["items"] = _loads(row["items"]) or []
            row["replayed"] = bool(row["replayed"])
        return [StoredContext.model_validate(row) for row in rows]

    def detail(self, ref: str | None = None) -> RunDetail:
        run = self.run(ref)
        return RunDetail(
            run=run,
            tasks=self.tasks(run.id),
            model_calls=self.model_calls(run.id),
            tool_calls=self.tool_calls(run.id),
            startup=self.startup(run.id),
            steps=self.steps(run.id) if run.kind == "flow" else [],
            children=[self.detail(child.id) for child in self.children(run.id)] if run.kind == "flow" else [],
            context=self.context(run.id),
        )

    def outputs(self, run_id: str) -> dict[str, TaskOutput]:
        """The finished outputs of a run (done tasks only), as TaskOutputs, by task name."""
        from crew.tasks.output import TaskOutput

        return {
            task.name: TaskOutput.model_validate(task.output)
            for task in self.tasks(run_id)
            if task.status == "done" and task.output is not None
        }

    def _run(self, row: dict[str, Any]) -> StoredRun:
        row["inputs"] = _loads(row["inputs"]) or {}
        row["settings"] = _loads(row["settings"]) or {}
        row["usage"] = _usage(row)
        if row["status"] == "running" and row.get("host") == self.host and not _alive(row.get("pid"), row["id"]):
            row["status"] = "interrupted"  # its process is gone: it will never finish by itself
        return StoredRun.model_validate(row)


def _usage(row: dict[str, Any]) -> Usage:
    return Usage(**{k: row.get(k) or 0 for k in _USAGE})


def _loads(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text  # capped text is no longer JSON: shown as it is


def _like_prefix(ref: str) -> str:
    """A LIKE pattern for ids starting with ``ref`` (run ids are hex: wildcards are dropped)."""
    return "".join(c for c in ref if c not in "%_\\") + "%"


def _alive(pid: int | None, run_id: str) -> bool:
    if not pid:
        return False
    if pid == os.getpid():
        return run_id in recording
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True

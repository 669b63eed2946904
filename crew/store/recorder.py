"""Recording one run as it happens: the run's row, each task's output, each model and tool call.

The recorder listens on the event bus for its own run's events (every event names its
run: see ``crew.common.events.scoped``) and is the scheduler's ``on_task_done`` hook, so a
task's output is committed the moment the task finishes, before anything else can fail.
Every text passes through the run's scrubber first: no secret reaches the file.

The run's row keeps its usage current as each model call finishes (in the same batched
commit as the call's row), so a run killed with SIGKILL still says what it spent and a
resumed budget counts it. A write that fails (a full disk) is reported once, in one
``store.error`` event; a run some of whose rows were lost is never recorded as done.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from typing import Any

from crew.common.events import Event, bus, current_origin
from crew.common.usage import Usage
from crew.errors import StoreError
from crew.store.approvals import check_not_continued
from crew.store.hashing import crew_hash, task_hashes
from crew.store.scrub import scrubber_for
from crew.store.store import RunStore, recording
from crew.tasks.output import TaskOutput

_INSERT_MODEL_CALL = (
    "INSERT INTO model_calls (run_id, task, agent, model, status, started_at, latency, attempts, message_count, "
    "message_chars, messages, reply, prompt_tokens, completion_tokens, total_tokens, cost, finish_reason, error) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_INSERT_TOOL_CALL = (
    "INSERT INTO tool_calls (run_id, task, agent, tool, status, cached, refused, started_at, duration, args, result) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_ADD_USAGE = (
    "UPDATE runs SET prompt_tokens = prompt_tokens + ?, completion_tokens = completion_tokens + ?, "
    "total_tokens = total_tokens + ?, requests = requests + 1, cost = cost + ? WHERE id = ?"
)
_UPDATE_TASK = (
    "UPDATE tasks SET status = ?, agent = COALESCE(?, agent), output = ?, error = ?, started_at = ?, finished_at = ?, "
    "prompt_tokens = ?, completion_tokens = ?, total_tokens = ?, requests = ?, cost = ?, attempts = ? "
    "WHERE run_id = ? AND name = ?"
)


lost_writes: dict[str, str] = {}
"""By run id, what the store could not write of a run in this process (the CLI says it after the run)."""


class RunRecorder:
    """Writes one run into a ``RunStore``; ``start()``, then the hooks, then ``finish()``.

    ``reused``: outputs taken from an earlier run (resume, replay); they are recorded as
    this run's tasks, marked reused, with none of their usage (this run did not spend it).
    """

    def __init__(
        self,
        store: RunStore,
        crew: Any,
        *,
        run_id: str,
        inputs: Mapping[str, Any],
        mode: str = "kickoff",
        continued_from: str | None = None,
        from_task: str | None = None,
        settings: Mapping[str, Any] | None = None,
        folder: str | None = None,
        reused: Mapping[str, TaskOutput] | None = None,
    ) -> None:
        self.store = store
        self.crew = crew
        self.run_id = run_id
        self.inputs = dict(inputs)
        self.mode = mode
        self.continued_from = continued_from
        self.from_task = from_task
        self.settings = dict(settings or {})
        self.folder = folder
        self.reused = dict(reused or {})
        self.scrub = scrubber_for(crew)
        self.hashes = task_hashes(crew, inputs)  # raises MissingInputError like the run would
        self.crew_hash = crew_hash(self.hashes, str(crew.process))
        self._unsubscribe: Callable[[], None] | None = None
        self._lost: str | None = None  # the first write that failed: the store misses rows of this run
        self._handlers: dict[str, Callable[[dict[str, Any], float], None]] = {
            "task.start": self._task_start,
            "llm.call": self._model_call,
            "llm.error": self._model_error,
            "tool.call": self._tool_call,
            "mcp.start": self._server_opened,
            "task.context": self._task_context,
        }

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """The run's row and its tasks' rows, committed before this returns."""
        if not self.store.transaction(self._start_rows(), only_if=self._claim()):
            check_not_continued(self.store, self.continued_from or "")  # raises, naming the run that won
            raise StoreError(f"run {self.continued_from} is no longer in the store {self.store.path}")
        self._started()

    def _started(self) -> None:
        recording.add(self.run_id)
        self._unsubscribe = bus.subscribe(self._on_event, run_id=self.run_id, types=self._handlers)

    def _start_rows(self) -> list[tuple[str, tuple[Any, ...]]]:
        scrub = self.scrub
        now = time.time()
        statements: list[tuple[str, tuple[Any, ...]]] = [
            (
                "INSERT INTO runs (id, crew, crew_hash, folder, inputs, settings, status, mode, continued_from, "
                "from_task, started_at, pid, host, parent_run, parent_step) "
                "VALUES (?, ?, ?, ?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    self.run_id,
                    self.crew.name,
                    self.crew_hash,
                    self.folder,
                    scrub.json(self.inputs),
                    scrub.json(self.settings),
                    self.mode,
                    self.continued_from,
                    self.from_task,
                    now,
                    os.getpid(),
                    self.store.host,
                    *_within(),
                ),
            )
        ]
        agents = {
            name: getattr(task.agent, "role", None) for name, task in zip(self.hashes, self.crew.tasks, strict=True)
        }
        for position, (name, digest) in enumerate(self.hashes.items()):
            out = self.reused.get(name)
            if out is None:
                row = (self.run_id, name, position, agents[name], digest, "pending", 0, None, None, None, None, 0)
            else:
                output = scrub.output(out)
                row = (self.run_id, name, position, out.agent, digest, "done", 1, output, None, out.started_at)
                row += (out.finished_at, out.attempts)
            statements.append(
                (
                    "INSERT INTO tasks (run_id, name, position, agent, def_hash, status, reused, output, error, "
                    "started_at, finished_at, attempts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    row,
                )
            )
        return statements

    def _claim(self) -> tuple[str, tuple[Any, ...]] | None:
        """The conditional write by which a resume takes the paused run it continues.

        A paused run is continued once (its approved calls run once): of two resumes racing,
        the one whose claim changes no row records nothing and fails like a second resume.
        A run that never paused (a failed one) may be resumed again: then the claim always
        holds, and names the newest continuation.
        """
        if self.mode != "resume" or self.continued_from is None:
            return None
        return (
            "UPDATE runs SET continued_by = ? WHERE id = ? AND (continued_by IS NULL "
            "AND NOT EXISTS (SELECT 1 FROM runs AS later WHERE later.continued_from = runs.id) "
            "OR NOT EXISTS (SELECT 1 FROM approvals WHERE approvals.run_id = runs.id))",
            (self.run_id, self.continued_from),
        )

    def finish(self, status: str, usage: Usage | None = None, error: str | None = None) -> None:
        """The run's final row; without ``usage`` (an interrupted run) it is summed from its model calls."""
        self._stop_listening()
        try:
            self.store.flush()  # what can still be written, before the last row says how the run ended
        except Exception as exc:  # noqa: BLE001 - reported; the run's own result stands
            self._failed(exc)
        self._final_row(status, usage, error)
        try:
            self.store.flush()  # the run's last rows are on disk when kickoff returns
        except Exception as exc:  # noqa: BLE001 - reported; the run's own result stands
            self._failed(exc)

    async def finish_async(self, status: str, usage: Usage | None = None, error: str | None = None) -> None:
        """``finish``, its rows in one commit shared with the other runs of this event loop."""
        self._stop_listening()
        self._final_row(status, usage, error)
        try:
            await self.store.committed()
        except Exception as exc:  # noqa: BLE001 - reported; the run's own result stands
            self._failed(exc)

    def _stop_listening(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        recording.discard(self.run_id)

    def _final_row(self, status: str, usage: Usage | None, error: str | None) -> None:
        if self._lost is not None and status == "done":
            status = "failed"  # its task rows may be missing: `done` would hide work a resume must redo
            error = f"the run store lost some of this run's rows ({self._lost}): `crew resume` redoes what it lacks"
        if usage is None:
            self.store.submit(
                "UPDATE runs SET status = ?, finished_at = ?, error = ?, "
                "(prompt_tokens, completion_tokens, total_tokens, requests, cost) = "
                "(SELECT COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0), "
                "COALESCE(SUM(total_tokens), 0), COUNT(*), COALESCE(SUM(cost), 0) "
                "FROM model_calls WHERE run_id = ? AND status = 'success') WHERE id = ?",
                (status, time.time(), self.scrub.text(error), self.run_id, self.run_id),
            )
        else:
            self.store.submit(
                "UPDATE runs SET status = ?, finished_at = ?, error = ?, prompt_tokens = ?, completion_tokens = ?, "
                "total_tokens = ?, requests = ?, cost = ? WHERE id = ?",
                (status, time.time(), self.scrub.text(error), *_usage(usage), self.run_id),
            )

    # -- hooks -------------------------------------------------------------------------------

    def on_task_done(self, out: TaskOutput) -> None:
        """The scheduler's hook: the output is committed before the run goes on."""
        if self._task_row(out):
            try:
                self.store.flush()
            except Exception as exc:  # noqa: BLE001 - a full disk must not fail the task that just succeeded
                self._failed(exc)

    async def task_done(self, out: TaskOutput) -> None:
        """``on_task_done``, in a commit shared with the other runs of this event loop."""
        if self._task_row(out):
            try:
                await self.store.committed()
            except Exception as exc:  # noqa: BLE001 - a full disk must not fail the task that just succeeded
                self._failed(exc)

    def _task_row(self, out: TaskOutput) -> bool:
        """Queue the task's row; False when even that failed (reported)."""
        try:
            document = self.scrub.output(out)
            self.store.submit(
                _UPDATE_TASK,
                (
                    out.status,
                    out.agent,
                    document,
                    self.scrub.text(out.error),
                    out.started_at,
                    out.finished_at,
                    *_usage(out.usage),
                    out.attempts,
                    self.run_id,
                    out.name,
                ),
            )
        except Exception as exc:  # noqa: BLE001 - a full disk must not fail the task that just succeeded
            self._failed(exc)
            return False
        return True

    def _on_event(self, event: Event) -> None:
        if event.run_id != self.run_id:
            return
        handler = self._handlers.get(event.type)
        if handler is None:
            return
        try:
            handler(event.data, event.time)
        except Exception as exc:  # noqa: BLE001 - recording must never break the run it records
            self._failed(exc)

    def _failed(self, exc: Exception) -> None:
        """Report the first failed write, once (a full disk fails every later write the same way)."""
        if self._lost is not None:
            return
        self._lost = f"{type(exc).__name__}: {exc}"
        message = f"cannot write the run store {self.store.path} ({exc}); the run went on, not fully recorded"
        lost_writes[self.run_id] = message
        bus.emit(
            "store.error",
            run_id=self.run_id,
            path=str(self.store.path),
            error=self._lost,
            message=message,
        )

    def _task_start(self, data: dict[str, Any], at: float) -> None:
        self.store.submit(
            "UPDATE tasks SET status = 'running', started_at = ?, agent = COALESCE(?, agent) "
            "WHERE run_id = ? AND name = ?",
            (at, data.get("agent"), self.run_id, data.get("task")),
        )

    def _model_call(self, data: dict[str, Any], at: float) -> None:
        messages = data.get("messages") or []
        text = self.scrub.json(messages)
        reply = data.get("reply")
        reply_text = reply if isinstance(reply, str) or reply is None else self.scrub.json(reply)
        latency = float(data.get("latency") or 0.0)
        self.store.submit(
            _INSERT_MODEL_CALL,
            (
                self.run_id,
                data.get("task"),
                data.get("agent"),
                data.get("model"),
                "success",
                at - latency,
                latency,
                int(data.get("attempts") or 1),
                len(messages),
                len(text),
                self.store.cap(text),
                self.store.cap(self.scrub.text(reply_text)),
                int(data.get("prompt_tokens") or 0),
                int(data.get("completion_tokens") or 0),
                int(data.get("total_tokens") or 0),
                float(data.get("cost") or 0.0),
                data.get("finish_reason"),
                None,
            ),
        )
        usage = (int(data.get(k) or 0) for k in ("prompt_tokens", "completion_tokens", "total_tokens"))
        self.store.submit(_ADD_USAGE, (*usage, float(data.get("cost") or 0.0), self.run_id))

    def _model_error(self, data: dict[str, Any], at: float) -> None:
        error = self.scrub.text(str(data.get("error") or data.get("reason") or "failed"))
        self.store.submit(
            _INSERT_MODEL_CALL,
            (
                *(self.run_id, data.get("task"), data.get("agent"), data.get("model"), "error", at, 0.0),
                *(int(data.get("attempts") or 1), 0, 0, None, None, 0, 0, 0, 0.0, None, self.store.cap(error)),
            ),
        )

    def _server_opened(self, data: dict[str, Any], at: float) -> None:
        """An MCP server of the run opened (or failed to): a step of the run's start-up."""
        error = data.get("error")
        self.store.submit(
            "INSERT INTO startup (run_id, kind, name, transport, started_at, duration, tools, error) "
            "VALUES (?, 'mcp', ?, ?, ?, ?, ?, ?)",
            (
                self.run_id,
                str(data.get("server") or "?"),
                data.get("transport"),
                float(data.get("started_at") or at),
                float(data.get("duration") or 0.0),
                int(data.get("tools") or 0),
                None if error is None else self.store.cap(self.scrub.text(str(error))),
            ),
        )

    def _tool_call(self, data: dict[str, Any], at: float) -> None:
        duration = float(data.get("duration") or 0.0)
        args = self.store.cap(self.scrub.json(data.get("args")))
        result = data.get("result")
        self.store.submit(
            _INSERT_TOOL_CALL,
            (
                self.run_id,
                data.get("task"),
                data.get("agent"),
                str(data.get("tool")),
                str(data.get("status")),
                int(bool(data.get("cached"))),
                int(bool(data.get("refused"))),
                at - duration,
                duration,
                args,
                self.store.cap(self.scrub.text(result if isinstance(result, str) or result is None else str(result))),
            ),
        )

    def _task_context(self, data: dict[str, Any], at: float) -> None:
        """The sections a task's prompt showed (what it recalled), one row each."""
        for position, section in enumerate(data.get("sections") or []):
            self.store.submit(
                "INSERT OR REPLACE INTO task_context (run_id, task, position, provider, title, items, replayed, "
                "recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    self.run_id,
                    data.get("task"),
                    position,
                    str(section.get("provider")),
                    str(section.get("title")),
                    self.scrub.json(section.get("items") or []),
                    int(bool(data.get("replayed"))),
                    at,
                ),
            )


def _within() -> tuple[str | None, str | None]:
    """(flow run, step) when this crew runs inside a flow's step (``crew.common.events.within_step``)."""
    origin = current_origin()
    return (None, None) if origin is None or origin.within is None else origin.within


def _usage(usage: Usage) -> tuple[int, int, int, int, float]:
    return usage.prompt_tokens, usage.completion_tokens, usage.total_tokens, usage.requests, usage.cost

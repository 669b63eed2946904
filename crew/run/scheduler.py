"""Runs a task DAG: a ready queue, bounded concurrency, cancellation and a failure policy.

The scheduler knows names, edges and a coroutine that runs one task; it knows nothing
about agents or models, which keeps its hot loop small (a 1000-task DAG costs well under
a second of our own time) and makes it reusable for a distributed backend later.

A task starts the moment its last dependency finishes, not when a whole "generation"
has; when more tasks are ready than there are slots, the one with the longest remaining
path to the end of the run goes first, which is what keeps wall time near the critical path.
"""

from __future__ import annotations

import asyncio
import heapq
import inspect
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal

from crew.common.events import bus
from crew.errors import TaskFailedError, TaskPaused
from crew.tasks.graph import TaskGraph
from crew.tasks.output import TaskOutput

OnError = Literal["stop", "continue"]
RunTask = Callable[[str, list[TaskOutput]], Awaitable[TaskOutput]]
"""``run_task(name, context_outputs)``: returns the task's output or raises ``TaskFailedError``."""
TaskDone = Callable[[TaskOutput], Any]
"""Called (and awaited when it returns an awaitable) the moment a task's output exists."""


RUN_CANCELLED = "cancelled: the run was cancelled"
"""The ``error`` of a task that was running when its run was cancelled (Ctrl-C, a caller's cancel)."""


class Scheduler:
    """One run of one graph. Build a new one per run; it holds that run's state.

    ``precomputed``: outputs from an earlier run (resume). Those with status "done" are
    taken as they are and their tasks are not run again; their dependants start at once.
    ``on_task_done``: the hook a run store uses to record each output as soon as it exists
    (done, failed or skipped). ``priority``: bigger starts first when slots are short;
    defaults to the longest remaining path in task counts. ``label(name)``: fields
    (description, agent...) for the outputs the scheduler makes itself (skipped tasks).
    """

    def __init__(
        self,
        graph: TaskGraph,
        run_task: RunTask,
        *,
        max_concurrency: int = 8,
        on_error: OnError = "stop",
        precomputed: Mapping[str, TaskOutput] | None = None,
        on_task_done: TaskDone | None = None,
        priority: Mapping[str, float] | None = None,
        label: Callable[[str], Mapping[str, Any]] | None = None,
        run_id: str | None = None,
    ) -> None:
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be at least 1, got {max_concurrency}")
        if on_error not in ("stop", "continue"):
            raise ValueError(f"on_error must be 'stop' or 'continue', got {on_error!r}")
        self.graph = graph
        self.run_task = run_task
        self.max_concurrency = max_concurrency
        self.on_error = on_error
        self.on_task_done = on_task_done
        self.run_id = run_id
        self.label = label
        self.priority = priority if priority is not None else graph.remaining()
        self.outputs: dict[str, TaskOutput] = {
            name: out for name, out in (precomputed or {}).items() if name in graph.index and out.status == "done"
        }
        self.errors: dict[str, BaseException] = {}
        """The exception behind each failed task, to chain into the crew's error."""
        self.failed: str | None = None
        """With on_error="stop": the task whose failure stopped the run."""
        self.paused: dict[str, Any] = {}
        """Tasks waiting for a person (their checkpoints by name): their readers wait with them."""
        self._waiting: dict[str, int] = {}
        """Per task not yet released: how many of its dependencies have not settled."""
        self._ready: list[tuple[float, int, str]] = []
        self._running: dict[asyncio.Task[TaskOutput], str] = {}

    async def run(self) -> dict[str, TaskOutput]:
        """Run every task not already done; return all outputs by name.

        Cancelling the coroutine cancels every running task and waits for them to
        unwind before the cancellation propagates: nothing is left running behind.
        """
        graph, running = self.graph, self._running
        self._waiting = {
            name: sum(1 for dep in graph.deps[name] if dep not in self.outputs)
            for name in graph.names
            if name not in self.outputs
        }
        self._ready = [self._entry(name) for name, count in self._waiting.items() if count == 0]
        heapq.heapify(self._ready)
        try:
            while self._start_ready():
                finished, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                for future in sorted(finished, key=lambda f: graph.index[running[f]]):
                    if future in running:  # not already recorded by a "stop" in this batch
                        await self._finish(running.pop(future), future)
            await self._skip_unstarted()
        finally:
            if running:  # only when run() itself is being cancelled or a hook raised
                await self._cancel_running()
        return self.outputs

    async def _cancel_running(self) -> None:
        """Cancel what still runs; each running task says how it ended."""
        for future, name in await _cancel(self._running):
            await self._record(self._skipped(name, RUN_CANCELLED) if future.cancelled() else self._result(name, future))

    def _start_ready(self) -> bool:
        """Start ready tasks, longest remaining path first, while slots are free; True while any runs."""
        ready, running = self._ready, self._running
        while ready and len(running) < self.max_concurrency and self.failed is None:
            name = heapq.heappop(ready)[2]
            if name in self.outputs:  # skipped while it sat in the queue
                continue
            running[asyncio.ensure_future(self.run_task(name, self._context(name)))] = name
        return bool(running)

    async def _finish(self, name: str, future: asyncio.Future[TaskOutput]) -> None:
        """Record a finished task and free what waited for it (or stop, or skip its readers)."""
        out = self._result(name, future)
        await self._record(out)
        if out.status == "paused":
            return  # its readers wait: the run pauses once nothing else can go on
        settled = [name]
        if out.status == "failed":
            if self.on_error == "stop":
                await self._stop(name, self._running)
                return
            settled += await self._skip_readers(name)
        self._release(settled)

    def _release(self, settled: list[str]) -> None:
        """A task waiting only for ``settled`` tasks may go now."""
        waiting, outputs = self._waiting, self.outputs
        for done in settled:
            for dep in self.graph.dependants[done]:
                if dep in waiting and dep not in outputs:
                    waiting[dep] -= 1
                    if waiting[dep] == 0:
                        heapq.heappush(self._ready, self._entry(dep))

    async def _skip_unstarted(self) -> None:
        """Once nothing runs: every task never started is skipped, saying why (a failure, a pause)."""
        if self.failed is not None:
            reason = f"not started: the run stopped after task '{self.failed}' failed"
        elif self.paused:
            waiting_for = ", ".join(f"'{name}'" for name in self.paused)
            reason = f"not started: waits for {waiting_for}, paused for a person's approval"
        else:
            return
        for name in self.graph.names:
            if name not in self.outputs:
                await self._record(self._skipped(name, reason))

    # -- internals -----------------------------------------------------------------------

    def _entry(self, name: str) -> tuple[float, int, str]:
        return (-self.priority.get(name, 0.0), self.graph.index[name], name)

    def _context(self, name: str) -> list[TaskOutput]:
        outputs = self.outputs
        return [outputs[n] for n in self.graph.context[name] if n in outputs and outputs[n].status == "done"]

    def _result(self, name: str, future: asyncio.Future[TaskOutput]) -> TaskOutput:
        """The output of a finished task; anything but an output is a failure (never lost)."""
        exc: BaseException | None = asyncio.CancelledError() if future.cancelled() else future.exception()
        if exc is None:
            return future.result()
        if isinstance(exc, TaskFailedError):
            self.errors[name] = exc.__cause__ or exc
            return exc.output
        if isinstance(exc, TaskPaused):
            checkpoint = self.paused[name] = exc.checkpoint
            calls = ", ".join(p.call_id for p in checkpoint.pending)
            error = f"paused: waits for a person's approval of {calls}"
            return TaskOutput(**self._fields(name), status="paused", error=error, finished_at=time.time())
        self.errors[name] = exc
        error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        return TaskOutput(**self._fields(name), status="failed", error=error, finished_at=time.time())

    async def _stop(self, name: str, running: dict[asyncio.Task[TaskOutput], str]) -> None:
        """on_error="stop": cancel what runs (their outputs say so); nothing starts afterwards."""
        self.failed = name
        finished = await _cancel(running)
        reason = f"cancelled: the run stopped after task '{name}' failed"
        for future, other in finished:
            out = self._skipped(other, reason) if future.cancelled() else self._result(other, future)
            await self._record(out)

    async def _skip_readers(self, name: str) -> list[str]:
        """on_error="continue": skip the tasks that need the failed task's output, directly or not.

        Only reading counts: a task that merely comes later (the sequential order) but
        whose ``context`` leaves the failed task out still runs. Returns the skipped tasks.
        """
        skipped = []
        for other in sorted(self.graph.readers(name), key=self.graph.index.__getitem__):
            if other not in self.outputs:
                await self._record(self._skipped(other, f"not run: it depends on task '{name}', which failed"))
                skipped.append(other)
        return skipped

    def _fields(self, name: str) -> dict[str, Any]:
        return {**self.label(name), "name": name} if self.label is not None else {"name": name}

    def _skipped(self, name: str, reason: str) -> TaskOutput:
        return TaskOutput(**self._fields(name), status="skipped", error=reason, attempts=0, finished_at=time.time())

    async def _record(self, out: TaskOutput) -> None:
        self.outputs[out.name] = out
        bus.emit(
            f"task.{out.status}",
            run_id=self.run_id,
            task=out.name,
            agent=out.agent,
            error=out.error,
            duration=out.duration,
            output=out,
        )
        if self.on_task_done is not None:
            result = self.on_task_done(out)
            if inspect.isawaitable(result):
                await result


async def _cancel(
    running: dict[asyncio.Task[TaskOutput], str],
) -> list[tuple[asyncio.Task[TaskOutput], str]]:
    """Cancel every running task and wait until each has unwound; empties ``running``."""
    items = list(running.items())
    running.clear()
    for future, _ in items:
        future.cancel()
    await asyncio.gather(*(f for f, _ in items), return_exceptions=True)
    return items

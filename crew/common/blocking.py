"""Sync <-> async at the edges: the one way sync code finishes a coroutine, and the threads
sync tools run in when async code calls them.

``run_blocking`` serves every sync entry point (``Crew.kickoff``, ``Agent.execute_task``,
``complete_sync``, a tool's ``run`` on an async-only tool, the executor's sync paths);
``in_thread`` is how async code runs a sync tool without blocking its loop.

Kept at the bottom of the package, importing no asyncio until a coroutine actually runs,
so that loading a crew (``crew validate``) costs neither asyncio nor a thread.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from queue import SimpleQueue
from typing import TYPE_CHECKING, Any, TypeVar, cast

from crew.common.daemon_pool import DaemonPool

if TYPE_CHECKING:
    import asyncio

T = TypeVar("T")


def running_loop() -> asyncio.AbstractEventLoop | None:
    """This thread's running event loop, or None. No loop runs before asyncio is imported, and
    importing it here would cost every ``import crew`` ~40 ms (``crew validate`` needs none)."""
    aio = sys.modules.get("asyncio")
    return None if aio is None else aio.events._get_running_loop()


__all__ = ["in_thread", "run_blocking", "running_loop"]


def run_blocking(work: Awaitable[T] | Callable[[], Awaitable[T]], *, thread_name: str = "crew-sync") -> T:
    """Run ``work`` (an awaitable, or a function making one) to completion from sync code.

    Without a running loop in this thread it runs on a fresh loop here; inside one (a
    notebook, an async app, a sync tool called from a coroutine) it runs on a fresh loop
    in a worker thread named ``thread_name``, the caller waiting: never "event loop is
    already running".

    Sync tools run in threads, which cannot be interrupted: when a timeout or a
    cancellation abandons one, ``asyncio.run`` would still wait for the thread before
    returning (a 0.3 s timeout on a 2 s tool would return after 2 s). Tools run on
    :func:`tool_pool`, which no loop shuts down, and the loop's default executor here is
    a ``DaemonPool``: neither waits at shutdown nor at interpreter exit, so an abandoned
    thread finishes on its own, or ends with the process.
    """
    import asyncio  # here, not at module level: loading a crew needs no event loop

    async def main() -> T:
        asyncio.get_running_loop().set_default_executor(DaemonPool(thread_name_prefix="crew-worker"))
        awaitable = work() if callable(work) else work
        return await cast("Awaitable[T]", awaitable)

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(main())
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix=thread_name) as pool:
        return pool.submit(asyncio.run, main()).result()


# -- the threads sync tools run in ------------------------------------------------------
#
# asyncio's default executor has ``min(32, cores + 4)`` threads: six on a 2-core machine,
# so a crew whose agents call slow, I/O-bound sync tools (HTTP, databases) would queue
# behind six of them however many tasks run at once. Tools get workers of their own,
# sized for waiting rather than for CPU (``CREW_TOOL_THREADS``, default 64).
#
# The hop is lean on purpose: ``loop.run_in_executor`` on a ``ThreadPoolExecutor`` builds a
# concurrent Future, a work item and a chained asyncio Future per call (25-40 µs a hop
# here). A job here is a tuple on a ``SimpleQueue``; the worker hands the outcome back with
# one ``call_soon_threadsafe`` (about 16 µs a hop). A worker is started only when no idle
# one is reserved for the job, so every queued job has a thread. The threads are daemons:
# a sync tool abandoned by a timeout can never hold the process open at exit (it finishes,
# or dies with the process).

_Job = tuple[contextvars.Context, Callable[..., Any], tuple[Any, ...], dict[str, Any], Any, Any]


class _Workers:
    """Threads that run jobs from one queue; idle ones are reserved by the jobs they will take."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._jobs: SimpleQueue[_Job] = SimpleQueue()
        self._lock = threading.Lock()
        self._threads = 0
        self._idle = 0  # idle workers not yet reserved by a queued job

    def submit(self, job: _Job) -> None:
        with self._lock:
            if self._idle:
                self._idle -= 1
                start = False
            else:
                start = self._threads < self.size  # at the cap, the job waits for the next free worker
                self._threads += start
        self._jobs.put(job)
        if start:
            threading.Thread(target=self._work, name=f"crew-tool-{self._threads}", daemon=True).start()

    def _work(self) -> None:
        get = self._jobs.get
        while True:
            context, fn, args, kwargs, loop, future = get()
            try:
                outcome: Any = context.run(fn, *args, **kwargs)
                failed = False
            except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task as it is
                outcome, failed = exc, True
            # Counted idle before the outcome goes back: the caller's next job (often submitted
            # as soon as it has this one's result) then reserves this thread, still awake on
            # its way to ``get``, instead of starting another or waking a sleeping one.
            with self._lock:
                self._idle += 1
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits for this tool any more
                loop.call_soon_threadsafe(_settle, future, outcome, failed)
            del context, fn, args, kwargs, loop, future, outcome


def _settle(future: asyncio.Future[Any], outcome: Any, failed: bool) -> None:
    if future.cancelled():
        return  # the caller gave up (timeout, cancellation); the result is dropped
    if failed:
        if isinstance(outcome, StopIteration):  # a future cannot hold one (it would end the awaiting coroutine)
            error = RuntimeError(f"the tool raised StopIteration: {outcome}")
            error.__cause__ = outcome
            outcome = error
        future.set_exception(outcome)
    else:
        future.set_result(outcome)


_workers: _Workers | None = None
_lock = threading.Lock()


def _pool() -> _Workers:
    global _workers
    if _workers is None:
        with _lock:
            if _workers is None:
                _workers = _Workers(max(1, int(os.environ.get("CREW_TOOL_THREADS", "64"))))
    return _workers


async def in_thread(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """``asyncio.to_thread`` on the tool workers: the caller's context variables go along."""
    import asyncio  # only async callers get here, and they have it loaded

    loop = asyncio.get_running_loop()
    future = loop.create_future()
    _pool().submit((contextvars.copy_context(), fn, args, kwargs, loop, future))
    return await future

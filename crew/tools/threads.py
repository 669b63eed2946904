"""The worker threads that sync tools run in when called from async code.

asyncio's default executor has ``min(32, cores + 4)`` threads: six on a 2-core machine,
so a crew whose agents call slow, I/O-bound sync tools (HTTP, databases) would queue
behind six of them however many tasks run at once. Tools get workers of their own,
sized for waiting rather than for CPU (``CREW_TOOL_THREADS``, default 64).

The hop is lean on purpose: ``loop.run_in_executor`` on a ``ThreadPoolExecutor``
builds a concurrent Future, a work item and a chained asyncio Future per call (25-40
µs a hop here). A job here is a tuple on a ``SimpleQueue``; the worker hands the
outcome back with one ``call_soon_threadsafe`` (about 16 µs a hop). A worker is started
only when no idle one is reserved for the job, so every queued job has a thread. The
threads are daemons: a sync tool abandoned by a timeout can never hold the process
open at exit (it finishes, or dies with the process).
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import threading
from collections.abc import Callable
from queue import SimpleQueue
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import asyncio

T = TypeVar("T")

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
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits for this tool any more
                loop.call_soon_threadsafe(_settle, future, outcome, failed)
            del context, fn, args, kwargs, loop, future, outcome
            with self._lock:
                self._idle += 1


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

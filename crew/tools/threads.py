"""The worker threads that sync tools run in when called from async code.

asyncio's default executor has ``min(32, cores + 4)`` threads: six on a 2-core machine,
so a crew whose agents call slow, I/O-bound sync tools (HTTP, databases) would queue
behind six of them however many tasks run at once. Tools get a pool of their own,
sized for waiting rather than for CPU (``CREW_TOOL_THREADS``, default 64).

A thread cannot be stopped from outside. When a timeout or a cancellation abandons a
sync tool, its thread runs on until the function returns; the pool's threads are daemon
threads that the interpreter does not join at exit, so an abandoned tool never keeps the
process alive (``ThreadPoolExecutor``'s own threads are joined at exit, which is why a
timed-out ``time.sleep(600)`` used to hold the process for ten minutes).
"""

from __future__ import annotations

import contextvars
import functools
import os
import threading
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import thread as _cf_thread
from typing import Any, TypeVar

T = TypeVar("T")


class DaemonPool(ThreadPoolExecutor):
    """A ``ThreadPoolExecutor`` whose threads are daemons, never joined at exit or at ``shutdown``.

    Work still running when the process ends is dropped with the process: that is the
    point (see the module docstring). ``shutdown`` does not wait either.
    """

    def _adjust_thread_count(self) -> None:
        if self._idle_semaphore.acquire(timeout=0):
            return

        def on_collected(_: Any, queue: Any = self._work_queue) -> None:
            queue.put(None)

        if len(self._threads) < self._max_workers:
            thread = threading.Thread(
                name=f"{self._thread_name_prefix or self}_{len(self._threads)}",
                target=_cf_thread._worker,  # type: ignore[attr-defined]
                args=(weakref.ref(self, on_collected), self._work_queue, self._initializer, self._initargs),
                daemon=True,
            )
            thread.start()
            self._threads.add(thread)  # type: ignore[arg-type]
            # not in concurrent.futures' registry of threads to join at interpreter exit

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        super().shutdown(wait=False, cancel_futures=cancel_futures)


_pool: ThreadPoolExecutor | None = None
_lock = threading.Lock()


def tool_pool() -> ThreadPoolExecutor:
    """The process-wide pool, made on first use."""
    global _pool
    if _pool is None:
        with _lock:
            if _pool is None:
                size = int(os.environ.get("CREW_TOOL_THREADS", "64"))
                _pool = DaemonPool(max_workers=max(1, size), thread_name_prefix="crew-tool")
    return _pool


async def in_thread(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """``asyncio.to_thread`` on the tool pool: the caller's context variables go along."""
    import asyncio  # only async callers get here, and they have it loaded

    call = functools.partial(contextvars.copy_context().run, fn, *args, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(tool_pool(), call)

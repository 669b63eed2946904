"""A thread pool whose threads never hold the process: abandoned work ends with it.

A thread cannot be stopped from outside. When a timeout or a cancellation abandons a
sync tool, its thread runs on until the function returns; ``ThreadPoolExecutor``'s
threads are joined at interpreter exit, so a timed-out ``time.sleep(600)`` held the
process for ten minutes. These are daemon threads the interpreter does not join.
Kept at the bottom layer: the tools' pool and ``run_blocking`` both use it.
"""

from __future__ import annotations

import threading
import weakref
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import thread as _cf_thread
from typing import Any

__all__ = ["DaemonPool"]


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

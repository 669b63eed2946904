"""The worker threads that sync tools run in when called from async code.

asyncio's default executor has ``min(32, cores + 4)`` threads: six on a 2-core machine,
so a crew whose agents call slow, I/O-bound sync tools (HTTP, databases) would queue
behind six of them however many tasks run at once. Tools get a pool of their own,
sized for waiting rather than for CPU (``CREW_TOOL_THREADS``, default 64).

A thread cannot be stopped from outside. When a timeout or a cancellation abandons a
sync tool, its thread runs on until the function returns; the pool is a ``DaemonPool``,
whose threads the interpreter does not join at exit, so an abandoned tool never keeps
the process alive.
"""

from __future__ import annotations

import contextvars
import functools
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from crew.daemon_pool import DaemonPool

T = TypeVar("T")


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

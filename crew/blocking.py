"""Sync <-> async at the edges: the one way sync code finishes a coroutine, and the threads
sync tools run in when async code calls them.

``run_blocking`` serves every sync entry point (``Crew.kickoff``, ``Agent.execute_task``,
``complete_sync``, a tool's ``run`` on an async-only tool, the executor's sync paths);
``in_thread`` is how async code runs a sync tool without blocking its loop.

Kept at the bottom of the package, importing no asyncio until a coroutine actually runs,
so that loading a crew (``crew validate``) costs neither asyncio nor a thread.
"""

from __future__ import annotations

import contextvars
import functools
import os
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar, cast

from crew.daemon_pool import DaemonPool

T = TypeVar("T")

__all__ = ["in_thread", "run_blocking", "tool_pool"]


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
# behind six of them however many tasks run at once. Tools get a pool of their own, sized
# for waiting rather than for CPU (``CREW_TOOL_THREADS``, default 64). A thread cannot be
# stopped from outside: an abandoned sync tool runs on until it returns, so the pool is a
# ``DaemonPool``, whose threads the interpreter does not join at exit.

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def tool_pool() -> ThreadPoolExecutor:
    """The process-wide pool sync tools run in, made on first use."""
    global _pool
    if _pool is None:
        with _pool_lock:
            if _pool is None:
                size = int(os.environ.get("CREW_TOOL_THREADS", "64"))
                _pool = DaemonPool(max_workers=max(1, size), thread_name_prefix="crew-tool")
    return _pool


async def in_thread(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """``asyncio.to_thread`` on the tool pool: the caller's context variables go along."""
    import asyncio  # only async callers get here, and they have it loaded

    call = functools.partial(contextvars.copy_context().run, fn, *args, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(tool_pool(), call)

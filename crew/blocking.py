"""Running a coroutine to completion from sync code: ``Crew.kickoff``, ``Agent.execute_task``.

Kept apart (and imported when first needed) so that loading a crew costs no asyncio and
no thread-pool import.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from crew.daemon_pool import DaemonPool

T = TypeVar("T")


def run_blocking(make: Callable[[], Coroutine[Any, Any, T]], *, thread_name: str) -> T:
    """Run the coroutine ``make()`` to completion from sync code, even inside a running loop
    (then on a fresh loop in a worker thread named ``thread_name``, the caller waiting).

    Sync tools run in worker threads, which cannot be interrupted: when a timeout or a
    cancellation abandons one, ``asyncio.run`` would still wait for the thread before
    returning (a 0.3 s timeout on a 2 s tool would return after 2 s). The loop's default
    executor here is a ``DaemonPool``: it does not wait at shutdown, nor at interpreter exit.
    """

    async def main() -> T:
        asyncio.get_running_loop().set_default_executor(DaemonPool(thread_name_prefix="crew-tool"))
        return await make()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(main())
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix=thread_name) as pool:
        return pool.submit(asyncio.run, main()).result()

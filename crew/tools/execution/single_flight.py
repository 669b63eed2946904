"""Single flight: identical calls in flight run the tool once, the others wait for its value.

The first call with a cache key leads; an identical call arriving meanwhile gets a future
of the leader's outcome. A leader that stored nothing hands its waiters ``NOT_SHARED``
(they run the tool themselves); a leader that was cancelled hands them ``LEADER_GONE`` (one
of them takes the lead). The lock is the executor's own, so the calls in flight change
under the same lock as its usage counts and statistics.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from crew.tools.cache import InMemoryCache
from crew.tools.execution import caching as cache_guard

if TYPE_CHECKING:
    from crew.tools.cache import CacheBackend
    from crew.tools.execution.pending import Pending

__all__ = ["LEADER_GONE", "NOT_SHARED", "SingleFlight"]

NOT_SHARED = object()  # what a leader hands its waiters when it stored nothing: they run themselves
LEADER_GONE = object()  # what a cancelled leader hands its waiters: one of them takes the lead


class SingleFlight:
    """The calls in flight of one executor, by cache key."""

    __slots__ = ("_inflight", "_lock")

    def __init__(self, lock: threading.Lock) -> None:
        self._lock = lock
        self._inflight: dict[str, Pending] = {}  # cache key -> the call computing it

    def join(self, pending: Pending, cache: CacheBackend, run_id: str | None) -> Future[Any] | None:
        """Lead the identical calls in flight (returns None) or get a future of the leader's outcome.

        The future is only built when a second identical call actually shows up, so an
        uncontended call pays for a dict entry, not for a Future and its condition lock.
        ``cache`` is read again once the lead is taken (``run_id``: the executor's, for its error event).
        """
        key: str = pending.key  # type: ignore[assignment]
        lock = self._lock
        lock.acquire()  # no ``with``: this runs on every cache miss, and only the Future below may raise
        leader = self._inflight.get(key)
        if leader is not None:
            try:
                if leader.waiters is None:
                    leader.waiters = Future()
                    leader.waiters.set_running_or_notify_cancel()  # a cancelled waiter cannot cancel it
                return leader.waiters
            finally:
                lock.release()
        self._inflight[key] = pending
        pending.leading = True
        lock.release()
        # The previous leader may have stored its result between our cache lookup and
        # our taking the lead: look again so that result is never computed twice.
        hit, value = (
            cache.get(key)
            if type(cache) is InMemoryCache
            else cache_guard.read(cache, key, pending.name, pending.context, run_id)
        )
        if not hit:
            return None
        pending.shared = value
        self.release(pending)
        done: Future[Any] = Future()
        done.set_result(value)
        return done

    def release(self, pending: Pending) -> None:
        """Hand the stored value (or the news that nothing was stored) to the waiters."""
        pending.leading = False
        lock = self._lock
        lock.acquire()  # no ``with``: nothing in between raises (the key is ours while we lead)
        del self._inflight[pending.key]  # type: ignore[arg-type]
        waiters = pending.waiters
        lock.release()
        if waiters is not None:
            waiters.set_result(pending.shared)

"""Usage slots of tools with a ``max_usage_count``: counted exactly, under concurrency.

By default the executor counts a run's slots itself; ``UsageLimits`` is the hook for a
count kept elsewhere (a Ray actor holding one run's counts, shared by its workers). Either
way the local counts are kept, so ``ToolExecutor.usage`` answers for this executor.
"""

from __future__ import annotations

import threading
from typing import Protocol

__all__ = ["UsageCounts", "UsageLimits"]


class UsageLimits(Protocol):
    """Somewhere else that counts usage slots (a Ray actor holding one run's counts)."""

    def claim(self, tool_name: str, limit: int) -> bool:
        """Take one of the tool's ``limit`` slots; False when none is left. Atomic."""
        ...


class UsageCounts:
    """Slots consumed per tool name in one executor, behind the executor's lock."""

    __slots__ = ("_counts", "_lock")

    def __init__(self, lock: threading.Lock) -> None:
        self._lock = lock
        self._counts: dict[str, int] = {}

    def claim(self, name: str, limit: int | None, limits: UsageLimits | None) -> bool:
        """Take a slot atomically (from ``limits`` when given and the tool has a limit); False when none is left."""
        if limit is not None and limits is not None:
            if limits.claim(name, limit):
                with self._lock:
                    self._counts[name] = self._counts.get(name, 0) + 1
                return True
            return False
        lock = self._lock
        lock.acquire()  # no ``with``: nothing in between raises, and this runs before every tool run
        used = self._counts.get(name, 0)
        free = limit is None or used < limit
        if free:
            self._counts[name] = used + 1
        lock.release()
        return free

    def add_locked(self, name: str, runs: int) -> None:
        """Count slots consumed elsewhere; the caller holds the lock (it updates statistics with them)."""
        self._counts[name] = self._counts.get(name, 0) + runs

    def used(self, name: str) -> int:
        return self._counts.get(name, 0)

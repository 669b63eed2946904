"""Usage slots of tools with a ``max_usage_count``: counted exactly, under concurrency.

By default the executor counts a run's slots itself; ``UsageLimits`` is the hook for a
count kept elsewhere (a Ray actor holding one run's counts, shared by its workers). Either
way the local counts are kept, so ``ToolExecutor.usage`` answers for this executor.

``ToolTally``: one executor's ``ToolStats`` by tool name, counted behind the executor's lock.

Every call that named a tool counts once, whatever its end: a result (``count``) or none
at all (``abandoned``: cancelled). Counts made elsewhere (Ray workers of the run) are
added with ``merge``, their runs as usage slots too.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Protocol

from crew.tools.execution.stats import ToolStats

__all__ = ["ToolTally", "UsageCounts", "UsageLimits"]


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


class ToolTally:
    """Every tool's ``ToolStats`` in one executor, by bucket (``ToolRegistry``); not the run's token
    ``UsageSum`` of ``crew.agent.meter``, which counts model usage."""

    __slots__ = ("_lock", "_stats")

    def __init__(self, lock: threading.Lock) -> None:
        self._lock = lock
        self._stats: dict[str, ToolStats] = {}

    def add_locked(self, name: str) -> None:
        """Give a newly registered tool its counters; the caller holds the lock."""
        self._stats.setdefault(name, ToolStats())

    def snapshot(self) -> dict[str, ToolStats]:
        """A consistent copy of every tool's counters."""
        with self._lock:
            return {name: ToolStats(**vars(s)) for name, s in self._stats.items()}

    def merge(self, stats: Mapping[str, ToolStats], usage: UsageCounts) -> None:
        """Add counts made elsewhere; their runs consumed usage slots of this run too."""
        with self._lock:
            for name, other in stats.items():
                mine = self._stats.setdefault(name, ToolStats())
                for field, value in vars(other).items():
                    setattr(mine, field, getattr(mine, field) + value)
                usage.add_locked(name, other.runs)

    def abandoned(self, name: str, seconds: float | None = None) -> None:
        """A call that ended without a result: ``calls`` counts every call, ``runs`` one whose tool
        had started (``seconds`` it ran before it was cut short)."""
        with self._lock:
            stats = self._stats.get(name)
            if stats is None:
                stats = self._stats[name] = ToolStats()
            stats.calls += 1
            if seconds is not None:
                stats.runs += 1
                stats.run_seconds += seconds

    def of(self, name: str) -> ToolStats:
        """The counters of ``name`` (made if new): one object per name for the executor's life,
        so a caller may keep it and update it under the lock."""
        with self._lock:
            stats = self._stats.get(name)
            if stats is None:
                stats = self._stats[name] = ToolStats()
            return stats

    def count(self, name: str, status: str, cached: bool, refused: bool, seconds: float | None) -> None:
        """A call's outcome: a cache hit, a refusal, or a result (a run when it was timed)."""
        stats = self._stats.get(name) or self.of(name)
        lock = self._lock
        lock.acquire()  # no ``with``: nothing in between raises, and this runs after every call
        stats.calls += 1
        if cached:
            stats.cache_hits += 1
        elif refused:
            stats.refused += 1
        else:
            if seconds is not None:
                stats.runs += 1
                stats.run_seconds += seconds
            if status == "error":
                stats.errors += 1
        lock.release()

"""One executor's ``ToolStats`` by tool name, counted behind the executor's lock.

Every call that named a tool counts once, whatever its end: a result (``count``) or none
at all (``abandoned``: cancelled). Counts made elsewhere (Ray workers of the run) are
added with ``merge``, their runs as usage slots too.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

from crew.tools.execution.counts import UsageCounts
from crew.tools.execution.stats import ToolStats

__all__ = ["Tally"]


class Tally:
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

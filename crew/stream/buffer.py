"""The bounded buffer between a running crew and the one reading its events.

Two kinds of writers, two rules. Text deltas come from model streams: when the buffer
holds ``maxsize`` items the model's stream waits (``put_delta``) until the reader takes
one, so a slow reader slows the model's reading of its connection (the provider's TCP
window fills and it pauses) and nothing is dropped. Every other event (a task or a tool
starting or ending) is taken at once (``put``), even past the bound: a tool never waits
for a reader, and those events are bounded by the run's own work, a handful per turn.

One reader (the stream's iterator), on the loop the run runs on; ``put`` may be called
from any thread (a sync tool that emits an event runs in a worker thread).
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from typing import Any

__all__ = ["EventBuffer"]


class EventBuffer:
    """A FIFO with back-pressure for deltas only; ``close()`` wakes every waiter."""

    def __init__(self, maxsize: int, loop: asyncio.AbstractEventLoop | None = None) -> None:
        if maxsize < 1:
            raise ValueError(f"the stream buffer must hold at least one event, got buffer={maxsize}")
        self.maxsize = maxsize
        self._loop = loop or asyncio.get_running_loop()
        self._thread = threading.get_ident()
        self._items: deque[Any] = deque()
        self._readable = asyncio.Event()
        self._room = asyncio.Event()
        self._room.set()
        self.closed = False
        self.high_water = 0
        """The most items it ever held (to see how far a reader fell behind)."""

    def __len__(self) -> int:
        return len(self._items)

    def put(self, item: Any) -> None:
        """Append ``item`` now, whatever the fill; from any thread."""
        if threading.get_ident() == self._thread:
            self._append(item)
        else:
            self._loop.call_soon_threadsafe(self._append, item)

    async def put_delta(self, item: Any) -> None:
        """Append ``item`` once there is room (the back-pressure on model streams).

        From another thread (a crew a flow's sync step kicks off, on that thread's own loop)
        it is appended as :meth:`put` does, in order with that thread's other events: this
        buffer's waits belong to its own loop.
        """
        if threading.get_ident() != self._thread:
            self.put(item)
            return
        while len(self._items) >= self.maxsize and not self.closed:
            self._room.clear()
            await self._room.wait()
        self._append(item)

    async def get(self) -> Any:
        """The oldest item, waiting for one."""
        while not self._items:
            self._readable.clear()
            await self._readable.wait()
        item = self._items.popleft()
        if len(self._items) < self.maxsize:
            self._room.set()
        return item

    def get_nowait(self) -> Any:
        """The oldest item; ``IndexError`` when empty."""
        item = self._items.popleft()
        if len(self._items) < self.maxsize:
            self._room.set()
        return item

    def close(self) -> None:
        """No reader any more: writers stop waiting for room (what they add is dropped with the buffer)."""
        self.closed = True
        self._room.set()

    def _append(self, item: Any) -> None:
        items = self._items
        items.append(item)
        if len(items) > self.high_water:
            self.high_water = len(items)
        self._readable.set()

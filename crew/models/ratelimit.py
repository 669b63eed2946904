"""Request rate limits: process-wide per model (``LLM(max_rpm=...)``), and a crew's (``Throttled``).

A provider's limit belongs to the account, not to one agent, so every ``LLM``
naming the same model, endpoint and limit draws from one shared budget, whatever
thread or event loop it runs on. The limiter hands out *reservations*: under a
thread lock it picks the earliest moment the caller may go and records it; the
caller then sleeps outside the lock (``asyncio.sleep`` or ``time.sleep``), so
waiting never blocks other callers or the event loop.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

from crew.models.base import ChatModel, LLMResponse, ModelDelta
from crew.models.calling import stream_reply
from crew.models.wrapped import WrappedModel

Messages = list[dict[str, Any]]


class RateLimiter:
    """At most ``rate`` requests in any ``period``-second window (a sliding window).

    Requests under the limit go at once; the next ones are scheduled exactly when
    the oldest request in the window leaves it. Bursts are allowed up to ``rate``,
    which is what per-minute provider limits allow too.
    """

    def __init__(self, rate: int, period: float = 60.0) -> None:
        if rate < 1:
            raise ValueError(f"rate must be a positive number of requests, got {rate}")
        if period <= 0:
            raise ValueError(f"period must be positive, got {period}")
        self.rate = rate
        self.period = period
        self._starts: deque[float] = deque()  # reserved start times, ascending
        self._lock = threading.Lock()

    def __copy__(self) -> RateLimiter:
        return self  # a copied LLM (or agent) still draws from the same budget

    def __deepcopy__(self, memo: dict[int, object]) -> RateLimiter:
        return self

    def __getstate__(self) -> dict[str, object]:
        """Pickled (sent to a Ray worker), a limiter keeps its rate but not its lock or its
        reservations: each process then has a budget of its own (see docs/scaling.md)."""
        return {"rate": self.rate, "period": self.period}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__init__(state["rate"], state["period"])  # type: ignore[misc]

    def reserve(self) -> float:
        """Claim the next free slot; returns when (``time.monotonic()``) the caller may go."""
        with self._lock:
            now = time.monotonic()
            while self._starts and self._starts[0] <= now - self.period:
                self._starts.popleft()
            start = now
            if len(self._starts) >= self.rate:
                start = max(now, self._starts[-self.rate] + self.period)
            self._starts.append(start)
            return start

    async def acquire(self) -> float:
        """Wait (without blocking the loop) for a slot; returns the slot's start time."""
        start = self.reserve()
        delay = start - time.monotonic()
        if delay > 0:
            import asyncio  # only async callers get here, and they have it loaded

            await asyncio.sleep(delay)
        return start

    def acquire_sync(self) -> float:
        """Blocking twin of :meth:`acquire`."""
        start = self.reserve()
        delay = start - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        return start


_shared: dict[tuple[str, str | None, int], RateLimiter] = {}
_shared_lock = threading.Lock()


def shared_limiter(model: str, max_rpm: int, api_base: str | None = None) -> RateLimiter:
    """The process-wide limiter for a model (and endpoint) at ``max_rpm`` requests per minute."""
    key = (model, api_base, max_rpm)
    with _shared_lock:
        limiter = _shared.get(key)
        if limiter is None:
            limiter = _shared[key] = RateLimiter(max_rpm, 60.0)
        return limiter


class Throttled(WrappedModel):
    """A model that takes a slot from ``limiter`` before each call: a crew's ``max_rpm`` budget.

    The budget covers every model of the crew, whatever each model's own limits, so it
    wraps them rather than being one of their settings.
    """

    def __init__(self, wrapped: ChatModel, limiter: RateLimiter) -> None:
        super().__init__(wrapped)
        self.limiter = limiter

    async def acomplete(
        self, messages: Messages, tools: Messages | None = None, *, output_schema: dict[str, Any] | None = None
    ) -> LLMResponse:
        await self.limiter.acquire()
        return await self.wrapped.acomplete(messages, tools, output_schema=output_schema)

    async def astream(
        self, messages: Messages, tools: Messages | None = None, *, output_schema: dict[str, Any] | None = None
    ) -> AsyncIterator[ModelDelta | LLMResponse]:
        await self.limiter.acquire()
        async for item in stream_reply(self.wrapped, messages, tools, output_schema=output_schema):
            yield item

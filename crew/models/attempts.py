"""The attempt loop every model call runs: limiter, attempt, classify the failure, wait, again.

Both doors (litellm and the native OpenAI one) and both call shapes (one reply, a
stream; sync callers drive the same async loop) retry the same way, so the loop lives here once and a door
only says how to make one attempt. Per attempt: a limiter reservation is taken, the
attempt is numbered and timed, and a failure goes through :mod:`crew.models.failures`
(the retry policy's wait, with its ``llm.retry`` event, or the final ``LLMError`` and
its ``llm.error`` event). A stream that failed after text reached the caller is final:
retrying would repeat text the caller already has.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from crew.models.base import LLMResponse, ModelDelta
from crew.models.failures import after_failure, give_up
from crew.models.ratelimit import RateLimiter
from crew.models.retry import RetryPolicy

__all__ = ["Attempt", "Attempts"]

T = TypeVar("T")

BROKEN_MID_STREAM = "the stream broke after text was delivered"


@dataclass(frozen=True)
class Attempt:
    """One try: its 1-based number and when it started (after the limiter let it go)."""

    number: int
    started: float = field(default_factory=time.perf_counter)

    def elapsed(self) -> float:
        """Seconds since the attempt started: the latency its response reports."""
        return time.perf_counter() - self.started


@dataclass(frozen=True)
class Attempts:
    """How one model's calls are retried: its policy, its limiter, the secrets its errors must not show.

    ``fatal`` names failures a door knows are final before the policy looks (it returns
    the reason, or None to let the policy decide).
    """

    model: str
    policy: RetryPolicy
    limiter: RateLimiter | None = None
    secrets: Sequence[str | None] = ()
    fatal: Callable[[Exception], str | None] | None = None

    async def run(self, attempt: Callable[[Attempt], Awaitable[T]]) -> T:
        """``attempt`` until one succeeds or the policy says stop (then ``LLMError``)."""
        import asyncio  # imported where a loop runs: loading a crew needs none

        number = 0
        while True:
            if self.limiter is not None:
                await self.limiter.acquire()
            number += 1
            try:
                return await attempt(Attempt(number))
            except Exception as exc:  # noqa: BLE001 - classified by the retry policy
                failure = exc
            # outside the except block, so an LLMError raised here has no implicit __context__
            await asyncio.sleep(self._wait(failure, number))

    async def stream(
        self, attempt: Callable[[Attempt], AsyncGenerator[ModelDelta | LLMResponse]]
    ) -> AsyncIterator[ModelDelta | LLMResponse]:
        """Items of ``attempt``'s stream until its LLMResponse; a failure before any text is retried."""
        import asyncio

        number = 0
        while True:
            if self.limiter is not None:
                await self.limiter.acquire()
            number += 1
            delivered = False
            async with contextlib.aclosing(attempt(Attempt(number))) as items:
                while True:
                    try:
                        item = await anext(items)
                    except StopAsyncIteration:
                        return
                    except Exception as exc:  # noqa: BLE001 - classified by the retry policy
                        failure = exc
                        break
                    yield item  # outside the try: the consumer's own errors are not the model's
                    if isinstance(item, LLMResponse):
                        return
                    delivered = delivered or bool(item.text)
            if delivered:
                give_up(self.model, failure, number, BROKEN_MID_STREAM, secrets=self.secrets)
            await asyncio.sleep(self._wait(failure, number))

    def _wait(self, exc: Exception, number: int) -> float:
        """Seconds before the next attempt (an ``llm.retry`` event); raises LLMError when there is none."""
        why = self.fatal(exc) if self.fatal is not None else None
        if why is not None:
            give_up(self.model, exc, number, why, secrets=self.secrets)
        return after_failure(self.model, exc, number, self.policy, secrets=self.secrets)

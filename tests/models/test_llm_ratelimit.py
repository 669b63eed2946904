"""max_rpm: one shared sliding-window budget per model, exact across threads, tasks and LLM instances."""

import asyncio
import copy
import threading
import time

from crew.models import LLM
from crew.models.ratelimit import RateLimiter, shared_limiter
from crew.testing import Reply


def max_in_window(times: list[float], period: float) -> int:
    times = sorted(times)
    return max(sum(1 for t in times[i:] if t < start + period) for i, start in enumerate(times))


def test_limiter_is_exact_across_many_threads():
    limiter = RateLimiter(5, period=0.2)
    starts: list[float] = []
    lock = threading.Lock()

    def worker():
        for _ in range(3):
            start = limiter.acquire_sync()  # the slot it got, whatever the scheduler did after
            with lock:
                starts.append(start)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    began = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(starts) == 24
    assert max_in_window(starts, 0.2) <= 5
    assert time.monotonic() - began >= 0.2 * (24 // 5) - 0.01  # 24 requests need 4 more windows


async def test_limiter_is_exact_across_many_tasks():
    limiter = RateLimiter(4, period=0.15)
    starts: list[float] = []

    async def one():
        starts.append(await limiter.acquire())

    began = time.monotonic()
    await asyncio.gather(*[one() for _ in range(12)])
    assert max_in_window(starts, 0.15) <= 4
    assert sorted(starts)[3] - began < 0.05  # the first four go at once: bursts up to the limit
    assert time.monotonic() - began >= 0.3 - 0.01


def test_shared_limiter_is_one_per_model_endpoint_and_limit():
    a = LLM("openai/gpt-4o-mini", max_rpm=30)
    b = LLM("openai/gpt-4o-mini", max_rpm=30)
    assert a.limiter is b.limiter is shared_limiter("openai/gpt-4o-mini", 30)
    assert a.limiter.rate == 30 and a.limiter.period == 60
    assert LLM("openai/gpt-4o", max_rpm=30).limiter is not a.limiter
    assert LLM("openai/gpt-4o-mini").limiter is None


def test_copies_of_an_llm_share_its_limiter():
    limiter = RateLimiter(5, period=1)
    llm = LLM("openai/gpt-4o-mini", rate_limiter=limiter)
    assert llm.model_copy(deep=True).limiter is limiter
    assert copy.deepcopy(llm).limiter is limiter


def test_first_requests_under_max_rpm_do_not_wait():
    """Slots are times, not waits: the first three start when they are asked for (no later than the
    moment the asking returned, however loaded the machine), the fourth a period after the first."""
    limiter = RateLimiter(3, period=60)
    before = time.monotonic()
    starts = [limiter.reserve() for _ in range(3)]
    after = time.monotonic()
    assert all(before <= start <= after for start in starts)
    assert limiter.reserve() == starts[0] + 60


async def test_llm_calls_respect_a_shared_limiter_at_the_server(openai_server):
    openai_server.handler = lambda request: Reply.text("ok")
    settings = {"api_base": openai_server.url, "api_key": "sk-test"}
    await LLM("openai/gpt-4o-mini", **settings).acomplete([{"role": "user", "content": "warm up"}])
    openai_server.clear()  # the limiter spaces sends; a warm client makes arrivals track them

    limiter = RateLimiter(2, period=0.4)
    llms = [LLM("openai/gpt-4o-mini", rate_limiter=limiter, **settings) for _ in range(3)]  # 3 agents, 1 budget
    await asyncio.gather(*[llms[i % 3].acomplete([{"role": "user", "content": str(i)}]) for i in range(7)])

    arrivals = [r.received_at for r in openai_server.requests]
    assert len(arrivals) == 7
    assert max_in_window(arrivals, 0.4 - 0.1) <= 2  # slack for transit jitter on a busy machine
    assert max(arrivals) - min(arrivals) >= 1.2 - 0.1  # 7 requests at 2 per 0.4 s span 3 more windows

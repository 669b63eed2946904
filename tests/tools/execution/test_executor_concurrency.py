"""ToolExecutor under concurrency: exact usage limits, execute_many, never blocking the loop."""

from __future__ import annotations

import asyncio
import threading

import pytest

from crew.tools import ToolExecutor, tool

LIMIT_MESSAGE = "Tool 'limited' has reached its usage limit of 10 times and cannot be used anymore."


def limited_tool():
    runs = []
    lock = threading.Lock()

    @tool(max_usage_count=10)
    def limited(n: int) -> int:
        """Limited to ten uses per run."""
        with lock:
            runs.append(n)
        return n

    return limited, runs


@pytest.mark.parametrize("cache", [True, False])
def test_64_threads_racing_on_a_limit_of_10_run_it_exactly_10_times(cache):
    limited, runs = limited_tool()
    executor = ToolExecutor([limited], cache=cache)
    barrier = threading.Barrier(64)
    results = [None] * 64

    def worker(i: int) -> None:
        barrier.wait()
        results[i] = executor.execute({"name": "limited", "args": {"n": i}})

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(64)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert len(runs) == 10
    refused = [r for r in results if r.refused]
    assert len(refused) == 54
    assert all(r.content == LIMIT_MESSAGE and r.status == "error" for r in refused)
    assert sorted(r.raw for r in results if not r.refused) == sorted(runs)
    stats = executor.stats["limited"]
    assert (stats.calls, stats.runs, stats.refused, stats.errors) == (64, 10, 54, 0)
    assert executor.usage("limited") == 10


async def test_64_tasks_racing_on_a_limit_of_10_run_it_exactly_10_times():
    limited, runs = limited_tool()
    executor = ToolExecutor([limited])
    results = await asyncio.gather(*(executor.aexecute({"name": "limited", "args": {"n": i}}) for i in range(64)))
    assert len(runs) == 10
    assert sum(r.refused for r in results) == 54


def test_limits_count_per_executor_not_per_tool_object():
    limited, runs = limited_tool()
    for _ in range(2):  # two runs of a crew: each gets a fresh executor and a fresh allowance
        executor = ToolExecutor([limited], cache=False)
        outcomes = [executor.execute({"name": "limited", "args": {"n": 1}}).refused for _ in range(12)]
        assert outcomes == [False] * 10 + [True] * 2
    assert len(runs) == 20


def test_stats_stay_exact_under_thread_races():
    @tool
    def echo(n: int) -> int:
        """Echo n."""
        return n

    executor = ToolExecutor([echo])
    barrier = threading.Barrier(32)

    def worker(i: int) -> None:
        barrier.wait()
        for j in range(50):
            executor.execute({"name": "echo", "args": {"n": j % 10}})

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(32)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    stats = executor.stats["echo"]
    assert stats.calls == 32 * 50
    assert stats.runs == 10  # one run per distinct argument, whatever the interleaving
    assert stats.cache_hits == 32 * 50 - 10


def barrier_tool(parties: int):
    """A sync tool that only returns once ``parties`` calls are running at the same time."""
    barrier = threading.Barrier(parties, timeout=10)

    @tool
    def meet(i: int) -> str:
        """Wait for the others."""
        barrier.wait()
        return f"r{i}"

    return meet


def test_execute_many_runs_calls_concurrently_and_keeps_their_order():
    meet = barrier_tool(4)  # would time out (BrokenBarrierError) if the calls ran one by one
    executor = ToolExecutor([meet])
    calls = [{"name": "meet", "args": {"i": i}, "id": f"c{i}"} for i in range(4)]
    results = executor.execute_many(calls)
    assert [r.content for r in results] == ["r0", "r1", "r2", "r3"]
    assert [r.tool_call_id for r in results] == ["c0", "c1", "c2", "c3"]


def test_execute_many_from_a_plain_thread_and_from_inside_a_running_loop():
    meet = barrier_tool(3)
    executor = ToolExecutor([meet], cache=False)
    calls = [{"name": "meet", "args": {"i": i}} for i in range(3)]
    out = {}
    thread = threading.Thread(target=lambda: out.setdefault("thread", executor.execute_many(calls)))
    thread.start()
    thread.join(20)
    assert [r.content for r in out["thread"]] == ["r0", "r1", "r2"]

    async def sync_call_inside_a_loop():
        return executor.execute_many(calls)

    assert [r.content for r in asyncio.run(sync_call_inside_a_loop())] == ["r0", "r1", "r2"]


def test_execute_many_mixes_outcomes_in_order():
    @tool
    def half(n: int) -> float:
        """Half of an even n."""
        if n % 2:
            raise ValueError("odd")
        return n / 2

    results = ToolExecutor([half]).execute_many(
        [
            {"name": "half", "args": {"n": 4}},
            {"name": "half", "args": {"n": 3}},
            {"name": "nope", "args": {}},
            {"name": "half", "args": {}},
            {"name": "half", "args": {"n": 4}},
        ]
    )
    assert [r.status for r in results] == ["success", "error", "error", "error", "success"]
    assert results[1].content == "ValueError: odd"
    assert results[4].raw == 2.0
    assert ToolExecutor([half]).execute_many([]) == []


async def test_aexecute_many_runs_async_tools_concurrently_in_order():
    barrier = asyncio.Barrier(5)

    @tool
    async def gather_point(i: int) -> int:
        """Meet the others."""
        async with asyncio.timeout(10):
            await barrier.wait()
        return i * 10

    executor = ToolExecutor([gather_point])
    results = await executor.aexecute_many([{"name": "gather_point", "args": {"i": i}} for i in range(5)])
    assert [r.raw for r in results] == [0, 10, 20, 30, 40]


async def test_aexecute_many_propagates_a_reraise_and_cancels_the_rest():
    cancelled = asyncio.Event()

    @tool(handle_tool_error=False)
    async def boom(x: int) -> int:
        """Fail loudly."""
        raise RuntimeError("boom")

    @tool
    async def hang(x: int) -> int:
        """Never finishes on its own."""
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return x

    executor = ToolExecutor([boom, hang])
    with pytest.raises(RuntimeError, match="boom"):
        await executor.aexecute_many([{"name": "hang", "args": {"x": 1}}, {"name": "boom", "args": {"x": 1}}])
    await asyncio.wait_for(cancelled.wait(), 5)


async def test_sync_tools_never_block_the_event_loop():
    loop_progress = threading.Event()

    @tool
    def waits_for_the_loop(x: int) -> str:
        """Blocks its thread until the loop has moved on."""
        if not loop_progress.wait(10):
            raise TimeoutError("the event loop was blocked")
        return "unblocked"

    async def ticker() -> None:
        await asyncio.sleep(0.01)
        loop_progress.set()

    executor = ToolExecutor([waits_for_the_loop])
    result, _ = await asyncio.gather(executor.aexecute({"name": "waits_for_the_loop", "args": {"x": 1}}), ticker())
    assert result.content == "unblocked"


def test_threads_sharing_an_executor_with_async_tools():
    @tool
    async def twice(n: int) -> int:
        """Double n."""
        await asyncio.sleep(0)
        return n * 2

    executor = ToolExecutor([twice], cache=False)
    results: dict[int, int] = {}

    def worker(i: int) -> None:
        results[i] = executor.execute({"name": "twice", "args": {"n": i}}).raw

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert results == {i: 2 * i for i in range(16)}


async def test_sync_tools_in_worker_threads_keep_context_errors_and_run_concurrently():
    import asyncio
    import contextvars
    import threading
    import time

    from crew.common.blocking import in_thread
    from crew.tools import tool

    where: contextvars.ContextVar[str] = contextvars.ContextVar("where", default="unset")
    where.set("caller")

    def read() -> tuple[str, str]:
        return where.get(), threading.current_thread().name

    value, thread = await in_thread(read)
    assert value == "caller" and thread.startswith("crew-tool") and thread != threading.current_thread().name

    def empty() -> int:
        return next(iter([]))  # StopIteration must come back as an error, not hang the awaiting task

    with pytest.raises(RuntimeError, match="StopIteration"):
        await asyncio.wait_for(in_thread(empty), 5)

    @tool
    def slow(i: int) -> int:
        """Sleep a little, then echo."""
        time.sleep(0.2)
        return i

    started = time.perf_counter()
    results = await ToolExecutor([slow], cache=False).aexecute_many(
        [{"name": "slow", "args": {"i": i}} for i in range(20)]
    )
    assert [r.content for r in results] == [str(i) for i in range(20)]
    assert time.perf_counter() - started < 1.5  # 20 x 0.2 s in parallel threads, not in series

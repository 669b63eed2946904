"""A big batch: every kickoff finishes exactly once when hundreds run at once and finish in bursts,
and the collector's young generation is spaced out while it runs (and only then)."""

from __future__ import annotations

import asyncio
import gc
from contextlib import aclosing

from crew import Agent, Crew, Task
from crew.backends import BatchStatus, for_each
from crew.backends.collector import PER_KICKOFF, YOUNG_THRESHOLD, spaced_collections
from crew.testing import FunctionModel


def crew_noting_thresholds(seen: list[tuple[int, int, int]], release: asyncio.Event) -> Crew:
    async def reply(messages, tools):
        seen.append(gc.get_threshold())
        await release.wait()  # every kickoff in flight at once, then all finish together
        return "n=" + messages[-1]["content"].split("number ")[1].split(".")[0]

    agent = Agent(role="w", goal="g", backstory="b", llm=FunctionModel(reply))
    return Crew(agents=[agent], tasks=[Task(description="the number {n}.", expected_output="x", agent=agent)])


async def test_a_big_batch_finishes_every_kickoff_once_with_spaced_collections():
    before = gc.get_threshold()
    seen: list[tuple[int, int, int]] = []
    release = asyncio.Event()
    crew = crew_noting_thresholds(seen, release)
    status = BatchStatus()
    inputs = [{"n": i} for i in range(150)]

    async def all_results():
        async with aclosing(for_each(crew, inputs, max_concurrency=150, status=status)) as results:
            return [r async for r in results]

    running = asyncio.ensure_future(all_results())
    while len(seen) < 150:  # every kickoff's model call has started: the batch is all in flight
        await asyncio.sleep(0)
    release.set()
    results = await running
    assert sorted(r.index for r in results) == list(range(150))
    assert all(r.status == "done" and r.raw == f"n={r.index}" for r in results)
    assert (status.done, status.running) == (150, 0)
    assert {t[0] for t in seen} == {max(before[0], YOUNG_THRESHOLD, 150 * PER_KICKOFF)}
    assert {t[1:] for t in seen} == {before[1:]}
    assert gc.get_threshold() == before  # restored when the batch ended


def test_small_batches_leave_the_collector_alone_and_nested_big_ones_restore_once():
    before = gc.get_threshold()
    with spaced_collections(10):
        assert gc.get_threshold() == before
    with spaced_collections(100):
        assert gc.get_threshold()[0] == max(before[0], YOUNG_THRESHOLD, 100 * PER_KICKOFF)
    with spaced_collections(1000):
        with spaced_collections(500):
            assert gc.get_threshold()[0] == max(before[0], 1000 * PER_KICKOFF)  # the outer batch's size
        assert gc.get_threshold()[0] == max(before[0], 1000 * PER_KICKOFF)  # the outer batch still runs
    assert gc.get_threshold() == before

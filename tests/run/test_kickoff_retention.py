"""One process, many kickoffs: what a kickoff leaves alive does not grow with the kickoffs done.

``crew serve`` and web apps kick crews off for as long as they run. The live objects of
crew's own types, of event loops and of the native door's sessions are counted after N and
after 2N kickoffs: a kickoff that kept anything (a loop, a pool, a recorder, an event
subscriber) shows up as a count that grows with N. Counts, never timings.
"""

from __future__ import annotations

import asyncio
import gc
from collections import Counter
from collections.abc import Callable
from typing import Any

from crew import LLM, Agent, Crew, Task, tool
from crew.testing import Reply


@tool
def double(x: int) -> int:
    """Double a number.

    Args:
        x: the number to double.
    """
    return 2 * x


def make_crew(llm: Any, **options: Any) -> Crew:
    agent = Agent(role="Doubler", goal="Double numbers", backstory="Exact.", llm=llm, tools=[double])
    task = Task(description="Double the number {n}.", expected_output="the number", agent=agent)
    return Crew(agents=[agent], tasks=[task], **options)


def live() -> Counter[str]:
    """Live objects by type, for crew's own types, event loops and aiohttp sessions.

    ``crew.testing`` is left out: the local server keeps every request it saw, for the test.
    """
    gc.collect()
    counts: Counter[str] = Counter()
    for obj in gc.get_objects():
        kind = type(obj)
        module = str(getattr(kind, "__module__", ""))
        ours = module.startswith("crew.") and not module.startswith("crew.testing")
        if ours or isinstance(obj, asyncio.AbstractEventLoop) or kind.__name__ == "ClientSession":
            counts[f"{module}.{kind.__qualname__}"] += 1
    return counts


def grown(run: Callable[[int], None], n: int) -> dict[str, int]:
    """The types whose live count grew between ``n`` and ``2n`` kickoffs (after a warm-up)."""
    run(5)
    run(n)
    before = live()
    run(n)
    after = live()
    return {kind: after[kind] - before[kind] for kind in after if after[kind] > before[kind]}


def test_kickoffs_on_the_test_model_keep_nothing_alive(tmp_path):
    crew = make_crew("test", store=tmp_path / "runs.db")  # recorded too: recorders and their subscriptions

    def run(k: int) -> None:
        for i in range(k):
            assert crew.kickoff({"n": i}).status == "done"

    assert grown(run, 100) == {}


def test_a_batch_keeps_nothing_alive_once_it_ended():
    crew = make_crew("test")

    def run(k: int) -> None:
        outputs = crew.kickoff_for_each([{"n": i} for i in range(k)], max_concurrency=20)
        assert len(outputs) == k

    assert grown(run, 100) == {}


def test_each_kickoff_on_the_native_door_lets_its_loop_and_pool_go(openai_server):
    """Each ``crew.kickoff`` runs on a loop of its own, with a pool of its own: both go with the loop.

    A pool's session holds its loop, and the table of pools held the session by that loop:
    every kickoff left a loop, a session and its connector behind.
    """
    openai_server.handler = lambda request: Reply.text("4")
    crew = make_crew(LLM("openai/gpt-4o-mini", api_base=openai_server.url, api_key="sk-test", transport="native"))

    def run(k: int) -> None:
        for i in range(k):
            assert crew.kickoff({"n": i}).raw == "4"

    assert grown(run, 15) == {}


def test_a_finished_kickoff_leaves_no_garbage_for_the_collector():
    """A run's objects hold no reference cycle (the meter holds its run weakly), so a finished
    kickoff is freed by reference counting: thousands at once leave the collector nothing to walk."""
    crew = make_crew("test")
    crew.kickoff_for_each([{"n": i} for i in range(3)])  # warm: imports and caches made once
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)  # what the collector finds unreachable is kept, to be looked at
    try:
        outputs = crew.kickoff_for_each([{"n": i} for i in range(20)], max_concurrency=5)
        assert [o.status for o in outputs] == ["done"] * 20
        del outputs
        gc.collect()
        ours = Counter(
            type(o).__qualname__ for o in gc.garbage if str(getattr(type(o), "__module__", "")).startswith("crew.")
        )
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert ours == Counter()

"""Issue 9 in the executor: single flight after a cancelled leader, tools that exit, Annotated descriptions."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from typing import Annotated

from pydantic import Field

from crew.tools import ToolExecutor, tool


async def test_a_waiter_takes_over_when_the_leader_of_51_identical_calls_is_cancelled():
    """Item 3: the 50 waiters all ran the tool at once (51 runs), and `calls` counted 50 of 51."""
    runs: list[int] = []
    lock = threading.Lock()
    started = threading.Event()

    @tool
    def slow(q: str) -> str:
        """Slow lookup."""
        with lock:
            runs.append(1)
        started.set()
        time.sleep(0.3)
        return q.upper()

    executor = ToolExecutor([slow])
    call = {"name": "slow", "args": {"q": "x"}}
    leader = asyncio.ensure_future(executor.aexecute(call))
    await asyncio.to_thread(started.wait, 5)
    waiters = [asyncio.ensure_future(executor.aexecute(call)) for _ in range(50)]
    await asyncio.sleep(0.05)  # all 50 are waiting on the leader
    leader.cancel()
    results = await asyncio.gather(*waiters)

    assert len(runs) <= 2  # the cancelled leader's run, and the one of the waiter that took over
    assert all(r.status == "success" and r.content == "X" for r in results)
    stats = executor.stats["slow"]
    assert stats.calls == 51
    assert stats.cache_hits == 49 and stats.runs == len(runs)  # the cancelled leader's run counts too


async def test_a_run_cut_short_counts_as_a_run_and_used_its_slot():
    """The tool started and took the only slot, yet ``runs`` said 0: the counters did not add up."""

    @tool(max_usage_count=1)
    async def slow(x: int) -> str:
        """Slow."""
        await asyncio.sleep(0.3)
        return "v"

    executor = ToolExecutor([slow])
    first = asyncio.ensure_future(executor.aexecute({"name": "slow", "args": {"x": 1}}))
    await asyncio.sleep(0.05)
    first.cancel()
    await asyncio.gather(first, return_exceptions=True)
    second = await executor.aexecute({"name": "slow", "args": {"x": 2}})
    stats = executor.stats["slow"]
    assert second.refused and (stats.calls, stats.runs, stats.refused) == (2, 1, 1)
    assert 0.03 < stats.run_seconds < 0.3


async def test_a_waiter_cancelled_while_waiting_still_counts_as_a_call():
    gate = threading.Event()

    @tool
    def held(q: str) -> str:
        """Waits for the gate."""
        gate.wait(5)
        return q

    executor = ToolExecutor([held])
    call = {"name": "held", "args": {"q": "x"}}
    leader = asyncio.ensure_future(executor.aexecute(call))
    await asyncio.sleep(0.05)
    waiter = asyncio.ensure_future(executor.aexecute(call))
    await asyncio.sleep(0.05)
    waiter.cancel()
    gate.set()
    assert (await leader).content == "x"
    assert executor.stats["held"].calls == 2


def _exiting_tools():
    @tool
    def quits(code: int) -> str:
        """Calls sys.exit."""
        sys.exit(code)

    @tool
    async def aquits(code: int) -> str:
        """Calls sys.exit from async code."""
        sys.exit(code)

    @tool
    def interrupts(code: int) -> str:
        """Raises KeyboardInterrupt."""
        raise KeyboardInterrupt

    return [quits, aquits, interrupts]


async def test_sys_exit_and_keyboard_interrupt_in_a_tool_are_that_tools_error():
    """Item 5: a tool's SystemExit ended the whole run; its KeyboardInterrupt looked like the user's Ctrl-C."""
    executor = ToolExecutor(_exiting_tools())
    results = await executor.aexecute_many(
        [{"name": name, "args": {"code": 7}} for name in ("quits", "aquits", "interrupts")]
    )
    assert [r.status for r in results] == ["error"] * 3
    assert "tool 'quits' called sys.exit(7)" in results[0].content
    assert "tool 'aquits' called sys.exit(7)" in results[1].content
    assert "tool 'interrupts' raised KeyboardInterrupt" in results[2].content
    assert executor.stats["quits"].errors == 1


def test_sys_exit_in_a_sync_tool_called_from_sync_code_is_its_error():
    executor = ToolExecutor(_exiting_tools())
    result = executor.execute({"name": "quits", "args": {"code": 3}})
    assert result.status == "error" and "called sys.exit(3)" in result.content
    outcome: list[object] = []
    worker = threading.Thread(
        target=lambda: outcome.append(executor.execute({"name": "interrupts", "args": {"code": 1}}))
    )
    worker.start()
    worker.join(5)
    assert "raised KeyboardInterrupt" in outcome[0].content  # type: ignore[attr-defined]


def test_annotated_field_description_survives_a_default():
    """Item 13: `Annotated[int, Field(description=...)] = 3` lost its description (constraints survived)."""

    @tool
    def search(query: str, limit: Annotated[int, Field(description="Max results", ge=1)] = 3) -> str:
        """Search."""
        return query

    schema = search.to_openai_tool()["function"]["parameters"]["properties"]["limit"]
    assert schema == {"default": 3, "description": "Max results", "minimum": 1, "type": "integer"}

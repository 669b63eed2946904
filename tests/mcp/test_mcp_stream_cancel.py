"""Breaking out of Crew.astream mid-run stops the agents' MCP server processes (a real stdio server)."""

from __future__ import annotations

import asyncio
from contextlib import aclosing
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp extra is in the dev extra")

from mcp_kit import servers_running, wait_until

from crew import Agent, Crew, Task, TextDelta
from crew.mcp import MCPServer
from crew.testing import FunctionModel


def running() -> set[int]:
    return {pid for pid, _ in servers_running("mcp-server-time")}


async def test_breaking_out_of_a_stream_closes_the_run_and_its_server_process() -> None:
    gate = asyncio.Event()  # never set: the model streams one piece, then waits

    async def slow(messages: list[dict[str, Any]], tools: Any):
        yield "the time is "
        await gate.wait()
        yield "never"

    before = running()
    server = MCPServer.stdio("mcp-server-time", args=["--local-timezone", "UTC"], name="time")
    agent = Agent(role="clock", goal="Tell the time", llm=FunctionModel(slow), mcp=[server])
    crew = Crew(
        agents=[agent], tasks=[Task(name="time", description="What time is it?", expected_output="x", agent=agent)]
    )
    async with aclosing(crew.astream()) as events:
        async for event in events:
            if isinstance(event, TextDelta):
                assert running() - before  # the server is up while the run streams
                break
    assert [t for t in asyncio.all_tasks() if t is not asyncio.current_task()] == []
    assert await asyncio.to_thread(wait_until, lambda: not (running() - before), 10)
